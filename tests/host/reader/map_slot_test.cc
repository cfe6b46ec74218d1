// MapSlot: opening a map's environment on first use (one open shared by all), answering a failed open again
// without retrying inside the retry interval, publishing and replacing environments (each bumps the generation
// lookups compare), dropping an idle one, and matching map names in any case.
#include "host/reader/map_slot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/ingest/merge_processor.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::OpenTestRuntime;
using testing::StageRows;
using testing::StateMapSection;
using testing::TempDir;

class MapSlotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed") + "[map.r]\ntype = ranged\n", &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    std::shared_ptr<const MapPlugins> plugins;
    ASSERT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
    slot_ = std::make_unique<MapSlot>(0, plugins);
  }

  void Merge(const std::vector<std::pair<std::string, std::string>>& rows) {
    ASSERT_TRUE(StageRows(*runtime_, "m", rows).ok());
    MergeReport report;
    Status s = MergeProcessor(*runtime_).MergePending(&report);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<MapSlot> slot_;
};

TEST_F(MapSlotTest, AcquireOpensTheShardOnceAndPublishesIt) {
  Merge({{"k", "v"}});
  const uint64_t before = slot_->generation();
  EXPECT_EQ(slot_->env(), nullptr);
  std::shared_ptr<MapEnv> env, again;
  uint64_t generation = 0, generation_again = 0;
  ASSERT_TRUE(slot_->Acquire(*runtime_, false, &env, &generation).ok());
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(generation, before + 1);
  EXPECT_EQ(slot_->generation(), generation);
  ASSERT_TRUE(slot_->Acquire(*runtime_, false, &again, &generation_again).ok());
  EXPECT_EQ(again, env);
  EXPECT_EQ(generation_again, generation);
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("m", &shard).ok());
  EXPECT_EQ(shard, env) << "the Runtime's one environment per path";
}

TEST_F(MapSlotTest, AFailedOpenIsAnsweredAgainUntilTheRetryIntervalOrAForcedTry) {
  std::shared_ptr<MapEnv> env;
  std::shared_ptr<const AnswerIndex> index;  // none until maintenance builds one
  uint64_t generation = 0;
  Status s = slot_->Acquire(*runtime_, false, &env, &generation);
  EXPECT_EQ(s.code(), Code::kNoData);
  EXPECT_THAT(s.message(), HasSubstr("map m has no data on this node"));
  ErrorBuffer error;
  EXPECT_EQ(slot_->AcquireForLookup(*runtime_, &env, &index, &generation, &error), Code::kNoData);
  EXPECT_THAT(error.message, HasSubstr("map m has no data on this node")) << "no data is an error, not a miss";
  Merge({{"k", "v"}});
  // Data now, but the last attempt is fresher than kRetryIntervalMs (1 s; this runs in far less).
  EXPECT_EQ(slot_->Acquire(*runtime_, false, &env, &generation).code(), Code::kNoData);
  EXPECT_EQ(slot_->AcquireForLookup(*runtime_, &env, &index, &generation, &error), Code::kNoData);
  s = slot_->Acquire(*runtime_, true, &env, &generation);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(env, nullptr);
  EXPECT_EQ(slot_->AcquireForLookup(*runtime_, &env, &index, &generation, &error), Code::kOk);
}

TEST_F(MapSlotTest, PublishAndReplaceBumpTheGeneration) {
  Merge({{"k", "v"}});
  std::shared_ptr<MapEnv> shard;
  uint64_t generation = 0;
  ASSERT_TRUE(slot_->Acquire(*runtime_, false, &shard, &generation).ok());
  EXPECT_FALSE(slot_->ReplaceIfChanged(shard, std::nullopt)) << "same environment";
  EXPECT_EQ(slot_->generation(), generation);
  EXPECT_EQ(slot_->Facts().refreshes, 0u);

  TempDir copy_dir;
  std::shared_ptr<MapEnv> copy;
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
  ASSERT_TRUE(testing::CreateMapEnv(copy_dir.path(), plugins, &copy).ok());
  EXPECT_TRUE(slot_->ReplaceIfChanged(copy, int64_t{1234}));
  EXPECT_EQ(slot_->generation(), generation + 1);
  EXPECT_EQ(slot_->env(), copy);
  SlotFacts facts = slot_->Facts();
  EXPECT_EQ(facts.refreshes, 1u) << "a replacement is a refresh";
  EXPECT_EQ(facts.snapshot_created_ms, std::optional<int64_t>(1234));
  slot_->Publish(shard, std::nullopt);
  EXPECT_EQ(slot_->generation(), generation + 2);
  EXPECT_EQ(slot_->env(), shard);
  EXPECT_FALSE(slot_->Facts().snapshot_created_ms.has_value()) << "a shard has no snapshot time";
  EXPECT_EQ(slot_->Facts().refreshes, 1u) << "publishing is not a refresh";
  slot_->Publish(nullptr, int64_t{99});
  EXPECT_EQ(slot_->generation(), generation + 3);
  EXPECT_FALSE(slot_->ReplaceIfChanged(copy, std::nullopt)) << "maintenance does not reopen a dropped environment";
  EXPECT_EQ(slot_->env(), nullptr);
  EXPECT_FALSE(slot_->Facts().snapshot_created_ms.has_value()) << "nothing served, no snapshot time";
  slot_->NoteRefreshFailure(Status::IOError("node1 did not answer"));
  facts = slot_->Facts();
  EXPECT_EQ(facts.refresh_failures, 1u);
  EXPECT_EQ(facts.last_refresh_error, "node1 did not answer");
}

TEST_F(MapSlotTest, DropsAnEnvironmentOnlyAfterAWholeIdleInterval) {
  Merge({{"k", "v"}});
  std::shared_ptr<MapEnv> env;
  uint64_t generation = 0;
  ASSERT_TRUE(slot_->Acquire(*runtime_, false, &env, &generation).ok());
  const int64_t t0 = 4'000'000'000'000;  // far after the open, so "unused since the open" counts as idle
  slot_->MarkUsed();
  EXPECT_FALSE(slot_->DropIfIdle(t0, 60000)) << "used since the last pass";
  EXPECT_FALSE(slot_->DropIfIdle(t0 + 59999, 60000)) << "idle, but not for a whole interval";
  slot_->MarkUsed();
  EXPECT_FALSE(slot_->DropIfIdle(t0 + 70000, 60000)) << "used again: the interval starts over";
  EXPECT_FALSE(slot_->DropIfIdle(t0 + 129999, 60000));
  EXPECT_TRUE(slot_->DropIfIdle(t0 + 130000, 60000));
  EXPECT_EQ(slot_->env(), nullptr);
  EXPECT_EQ(slot_->generation(), generation + 1);
  EXPECT_FALSE(slot_->DropIfIdle(t0 + 999999, 60000)) << "nothing left to drop";
  // The next lookup opens it again.
  ASSERT_TRUE(slot_->Acquire(*runtime_, false, &env, &generation).ok());
  EXPECT_NE(env, nullptr);
}

TEST_F(MapSlotTest, KnowsTheKeyKindsAndNamesTheMapInItsMessages) {
  EXPECT_FALSE(slot_->number_keys());
  EXPECT_FALSE(slot_->uses_time());
  EXPECT_THAT(slot_->number_key_error(), HasSubstr("map m (type state) is keyed by text"));
  EXPECT_THAT(slot_->time_error(), HasSubstr("map m (type state) has no time"));
  std::shared_ptr<const MapPlugins> ranged;
  ASSERT_TRUE(runtime_->catalog().Get("r", &ranged).ok());
  MapSlot r(1, ranged);
  EXPECT_TRUE(r.number_keys());
  EXPECT_THAT(r.text_key_error(), HasSubstr("map r (type ranged) is keyed by signed 64-bit numbers"));
}

TEST(MapSlot, MatchesNamesInAnyCase) {
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(testing::CreateMapPlugins(testing::MakeMapConfig("city_to_country", "state", "hashed"), &plugins).ok());
  MapSlot slot(0, plugins);
  for (const char* name : {"city_to_country", "City_To_Country", "CITY_TO_COUNTRY"}) {
    EXPECT_TRUE(slot.Matches(name)) << name;
  }
  for (const char* name : {"city_to_countr", "city_to_countryx", "", "city-to-country", "city_to_countrY\n"}) {
    EXPECT_FALSE(slot.Matches(name)) << name;
  }
}

}  // namespace
}  // namespace planb
