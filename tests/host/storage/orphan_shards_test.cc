#include "host/storage/orphan_shards.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/map_fixture.h"
#include "support/test_env.h"
#include "tests/host/storage/shard_loads.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::ReadFile;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Maps(const std::vector<OrphanShard>& orphans) {
  std::vector<std::string> maps;
  for (const OrphanShard& o : orphans) maps.push_back(o.map);
  return maps;
}

class OrphanShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Home::Open(dir_ / "home", &home_).ok());
    config_.maps["a"] = MapConfig();
    config_.delete_orphans_after_ms = 1000;
    for (const char* map : {"a", "b", "c"}) {
      fs::create_directories(home_.ShardPath(map));
      WriteFile(home_.ShardPath(map) + "/data.mdb", "rows");
    }
  }
  OrphanReport Sweep(int64_t now_ms, bool dry_run = false) {
    OrphanReport report;
    const Status s = SweepOrphanShards(home_, config_, nullptr, now_ms, dry_run, &report);
    EXPECT_TRUE(s.ok()) << s.message();
    return report;
  }
  std::string record() const { return home_.shards() + "/.orphans"; }
  bool Exists(const std::string& map) const { return fs::exists(home_.ShardPath(map) + "/data.mdb"); }

  TempDir dir_;
  Home home_;
  Config config_;
};

TEST_F(OrphanShardsTest, TheFirstSweepRecordsOrphansAndDeletesNothing) {
  const OrphanReport report = Sweep(10000);
  EXPECT_THAT(Maps(report.waiting), ElementsAre("b", "c"));
  EXPECT_EQ(report.waiting[0].first_seen_ms, 10000);
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_TRUE(report.record_problem.empty());
  EXPECT_EQ(ReadFile(record()), "b 10000\nc 10000\n");
  EXPECT_TRUE(Exists("a") && Exists("b") && Exists("c"));
}

// Each sweep reads the clock's start from the record: a restart (a new process, a new Config) keeps it.
TEST_F(OrphanShardsTest, DeletedExactlyWhenTheDelayHasPassedAcrossRestarts) {
  Sweep(10000);
  OrphanReport report = Sweep(10999);
  EXPECT_TRUE(report.deleted.empty());
  ASSERT_EQ(report.waiting.size(), 2u);
  EXPECT_EQ(report.waiting[1].first_seen_ms, 10000);
  EXPECT_TRUE(Exists("b"));

  report = Sweep(11000);
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b", "c"));
  EXPECT_TRUE(report.waiting.empty());
  EXPECT_FALSE(fs::exists(home_.ShardPath("b")));
  EXPECT_FALSE(fs::exists(home_.ShardPath("c")));
  EXPECT_FALSE(fs::exists(home_.shards() + "/.b.deleting"));
  EXPECT_FALSE(fs::exists(record()));  // nothing left to remember
  EXPECT_TRUE(Exists("a"));
}

TEST_F(OrphanShardsTest, AMapConfiguredAgainIsAdoptedAndItsClockStartsOverWhenItLeavesAgain) {
  Sweep(10000);
  config_.maps["b"] = MapConfig();
  OrphanReport report = Sweep(20000);
  EXPECT_THAT(report.adopted, ElementsAre("b"));
  EXPECT_THAT(Maps(report.deleted), ElementsAre("c"));
  EXPECT_TRUE(Exists("b"));
  EXPECT_FALSE(fs::exists(record()));

  config_.maps.erase("b");
  report = Sweep(30000);
  ASSERT_THAT(Maps(report.waiting), ElementsAre("b"));
  EXPECT_EQ(report.waiting[0].first_seen_ms, 30000);
  EXPECT_TRUE(Exists("b"));
}

TEST_F(OrphanShardsTest, ADryRunReportsAndChangesNothing) {
  OrphanReport report = Sweep(10000, /*dry_run=*/true);
  EXPECT_THAT(Maps(report.waiting), ElementsAre("b", "c"));
  EXPECT_FALSE(fs::exists(record()));
  Sweep(10000);
  report = Sweep(50000, /*dry_run=*/true);
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b", "c"));
  EXPECT_TRUE(Exists("b") && Exists("c"));
  EXPECT_EQ(ReadFile(record()), "b 10000\nc 10000\n");
}

TEST_F(OrphanShardsTest, TimeZeroAndTimesBeforeTheEpochAreRealInstants) {
  WriteFile(record(), "b 0\nc -5000\n");
  OrphanReport report = Sweep(500);
  EXPECT_THAT(Maps(report.deleted), ElementsAre("c"));
  EXPECT_THAT(Maps(report.waiting), ElementsAre("b"));
  report = Sweep(1000);
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b"));
}

TEST_F(OrphanShardsTest, ADelayOfZeroDeletesAtTheFirstSweep) {
  config_.delete_orphans_after_ms = 0;
  const OrphanReport report = Sweep(10000);
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b", "c"));
  EXPECT_TRUE(Exists("a"));
}

TEST_F(OrphanShardsTest, LeftoversOfAnInterruptedDeletionAreRemovedAndOtherNamesLeftAlone) {
  fs::create_directories(home_.shards() + "/.x.deleting");
  WriteFile(home_.shards() + "/.x.deleting/data.mdb", "half");
  fs::create_directories(home_.shards() + "/.a.compact");
  fs::create_directories(home_.shards() + "/Not-A-Map");
  WriteFile(home_.shards() + "/notes.txt", "mine");
  const OrphanReport report = Sweep(10000);
  EXPECT_THAT(Maps(report.waiting), ElementsAre("b", "c"));
  EXPECT_FALSE(fs::exists(home_.shards() + "/.x.deleting"));
  EXPECT_TRUE(fs::exists(home_.shards() + "/.a.compact"));
  EXPECT_TRUE(fs::exists(home_.shards() + "/Not-A-Map"));
  EXPECT_TRUE(fs::exists(home_.shards() + "/notes.txt"));
}

class OrphanRecordTest : public OrphanShardsTest, public ::testing::WithParamInterface<const char*> {};

// A record that does not parse is reported, rebuilt with "now", and never the reason for a deletion.
TEST_P(OrphanRecordTest, AMalformedRecordIsReportedAndRebuiltWithoutDeleting) {
  WriteFile(record(), GetParam());
  OrphanReport report = Sweep(1000000);
  EXPECT_THAT(report.record_problem, HasSubstr(".orphans"));
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_TRUE(Exists("b") && Exists("c"));
  EXPECT_EQ(ReadFile(record()), "b 1000000\nc 1000000\n");
  report = Sweep(1001000);
  EXPECT_TRUE(report.record_problem.empty());
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b", "c"));
}

INSTANTIATE_TEST_SUITE_P(Malformed, OrphanRecordTest,
                         ::testing::Values("b 1", "b one\n", "B 1\n", "b 1\nb 2\n", "b\n", "\n", "b  1\n", "b 1 2\n",
                                           "b 99999999999999999999\n", "b -\n", "b 1\r\n", "b 1\nc \x01\n"));

TEST(OrphanShards, AnOversizedRecordIsMalformed) {
  TempDir dir;
  Home home;
  ASSERT_TRUE(Home::Open(dir / "home", &home).ok());
  fs::create_directories(home.ShardPath("b"));
  WriteFile(home.shards() + "/.orphans", std::string(2 << 20, '\n'));
  Config config;
  config.delete_orphans_after_ms = 0;
  OrphanReport report;
  ASSERT_TRUE(SweepOrphanShards(home, config, nullptr, 5, false, &report).ok());
  EXPECT_THAT(report.record_problem, HasSubstr("bytes"));
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_TRUE(fs::exists(home.ShardPath("b")));
}

// A real shard, open in the runtime's cache: deleted, and the cache lets go of it.
TEST(OrphanShards, ARealShardIsDeletedAndForgottenByTheCache) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(
      testing::OpenTestRuntime(
          dir.path(), testing::StateMapSection("a", "hashed") + testing::StateMapSection("b", "hashed"), &runtime)
          .ok());
  ASSERT_TRUE(testing::LoadAndMerge(*runtime, "a", {{"k", "1"}}).ok());
  ASSERT_TRUE(testing::LoadAndMerge(*runtime, "b", {{"k", "2"}}).ok());
  std::shared_ptr<MapEnv> b;
  ASSERT_TRUE(runtime->OpenShard("b", &b).ok());
  const size_t cached = runtime->envs().size();
  b.reset();
  Config config = runtime->config();
  config.maps.erase("b");
  config.delete_orphans_after_ms = 0;
  OrphanReport report;
  const Status s = SweepOrphanShards(runtime->home(), config, &runtime->envs(), 1, false, &report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(Maps(report.deleted), ElementsAre("b"));
  EXPECT_EQ(runtime->envs().size(), cached - 1);
  EXPECT_FALSE(fs::exists(runtime->home().ShardPath("b")));
  std::string value;
  EXPECT_EQ(testing::LookupShard(*runtime, "a", "k", &value), Code::kOk);
  EXPECT_EQ(runtime->OpenShard("b", &b).code(), Code::kNotFound);
}

}  // namespace
}  // namespace planb
