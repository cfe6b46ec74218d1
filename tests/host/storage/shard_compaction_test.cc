#include "host/storage/shard_compaction.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <memory>
#include <string>

#include "support/map_fixture.h"
#include "support/node_process.h"
#include "support/test_env.h"
#include "tests/host/storage/shard_loads.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CompactInChild;
using ::planb::testing::CompactUnderLock;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::DumpShards;
using ::planb::testing::LinesOf;
using ::planb::testing::LoadAndMerge;
using ::planb::testing::LookupShard;
using ::planb::testing::MeasureMap;
using ::planb::testing::NumberedRows;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

class ShardCompactionTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    runtime_.reset();
    const Status s = OpenTestRuntime(dir_.path(), config_, &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // Rewrites every row a few times, leaving free pages.
  void LoadRewrites() {
    for (int i = 0; i < 4; ++i) {
      const Status s = LoadAndMerge(*runtime_, "m", NumberedRows(2000, "v" + std::to_string(i) + "-"));
      ASSERT_TRUE(s.ok()) << s.message();
    }
  }
  std::string home() const { return dir_ / "home"; }
  std::string leftover() const { return home() + "/shards/.m.compact"; }

  const std::string config_ = StateMapSection("m", "hashed");
  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(ShardCompactionTest, ShrinksTheFileAndKeepsEveryRowAndTheVersion) {
  LoadRewrites();
  ShardSpace before;
  ASSERT_TRUE(MeasureMap(*runtime_, "m", &before).ok());
  ASSERT_GT(before.free_share, 0.2);
  runtime_.reset();
  const std::string rows_before = DumpShards(home());
  const std::string version_before = DumpBatchIds(home());
  Open();

  CompactionResult result;
  const Status s = CompactUnderLock(*runtime_, "m", &result);
  ASSERT_TRUE(s.ok()) << s.message();
  // Before anything opens the new shard: its files already have the home's mode.
  for (const char* file : {"data.mdb", "lock.mdb"}) {
    struct stat st;
    ASSERT_EQ(::stat((home() + "/shards/m/" + file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, HomeFileMode()) << file;
  }
  EXPECT_EQ(result.rows, 2000u);
  EXPECT_EQ(result.bytes_before, before.file_bytes);
  EXPECT_LT(result.bytes_after, result.bytes_before);
  ShardSpace after;
  ASSERT_TRUE(MeasureMap(*runtime_, "m", &after).ok());
  EXPECT_EQ(after.file_bytes, result.bytes_after);
  EXPECT_EQ(after.listed_free_pages, 0u);
  EXPECT_LT(after.free_share, 0.05);
  EXPECT_FALSE(fs::exists(leftover()));
  std::string value;
  EXPECT_EQ(LookupShard(*runtime_, "m", "key-7", &value), Code::kOk);
  EXPECT_EQ(value, "v3-7");
  runtime_.reset();
  EXPECT_TRUE(DumpShards(home()) == rows_before);
  EXPECT_EQ(DumpBatchIds(home()), version_before);
}

// A scheme with tables of its own (lookup_table keeps its keys in scheme.* tables): every table comes across.
TEST(ShardCompaction, AShardWithPluginTablesKeepsEveryTable) {
  TempDir dir;
  const std::string config = StateMapSection("m", "lookup_table");
  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(OpenTestRuntime(dir.path(), config, &runtime).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(LoadAndMerge(*runtime, "m", NumberedRows(1500, "v" + std::to_string(i))).ok());
  runtime.reset();
  const std::string before = DumpShards(dir / "home");
  ASSERT_NE(before.find("m/scheme."), std::string::npos);
  ASSERT_TRUE(OpenTestRuntime(dir.path(), config, &runtime).ok());
  CompactionResult result;
  const Status s = CompactUnderLock(*runtime, "m", &result);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LT(result.bytes_after, result.bytes_before);
  std::string value;
  EXPECT_EQ(LookupShard(*runtime, "m", "key-1499", &value), Code::kOk);
  EXPECT_EQ(value, "v21499");
  runtime.reset();
  EXPECT_TRUE(DumpShards(dir / "home") == before);
}

TEST_F(ShardCompactionTest, AMapWithoutAShardIsNotFound) {
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
  CompactionResult result;
  EXPECT_EQ(CompactShard(runtime_->home(), runtime_->envs(), plugins, &result).code(), Code::kNotFound);
  EXPECT_FALSE(fs::exists(leftover()));
}

TEST_F(ShardCompactionTest, LeftoversOfADeadCompactionAreRemovedAndShardsLeftAlone) {
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(10, "v")).ok());
  fs::create_directories(leftover());
  testing::WriteFile(leftover() + "/data.mdb", "half a copy");
  fs::create_directories(home() + "/shards/.other.compact");
  std::vector<std::string> removed;
  const Status s = RemoveCompactionLeftovers(runtime_->home(), &removed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(fs::exists(leftover()));
  EXPECT_FALSE(fs::exists(home() + "/shards/.other.compact"));
  std::string value;
  EXPECT_EQ(LookupShard(*runtime_, "m", "key-3", &value), Code::kOk);
  EXPECT_EQ(value, "v3");
}

TEST_F(ShardCompactionTest, NoRoomForTheCopyIsRefusedWritingNothing) {
  LoadRewrites();
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
  CompactionResult result;
  const Status s = CompactShard(runtime_->home(), runtime_->envs(), plugins, &result, UINT64_MAX / 2);
  EXPECT_EQ(s.code(), Code::kFull);
  EXPECT_NE(s.message().find("not enough disk to compact " + home() + "/shards/m"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(leftover()));
  std::string value;
  EXPECT_EQ(LookupShard(*runtime_, "m", "key-7", &value), Code::kOk);
  EXPECT_EQ(value, "v3-7");
}

// An environment opened before the swap reads the old files; the cache notices and reopens, so the next merge
// writes the new shard, not the deleted one.
TEST_F(ShardCompactionTest, TheCacheReopensASwappedShardAndMergesLandInTheNewFile) {
  LoadRewrites();
  std::shared_ptr<MapEnv> old_env;
  ASSERT_TRUE(runtime_->OpenShard("m", &old_env).ok());
  EXPECT_FALSE(old_env->Replaced());
  CompactionResult result;
  ASSERT_TRUE(CompactUnderLock(*runtime_, "m", &result).ok());
  EXPECT_TRUE(old_env->Replaced());
  std::shared_ptr<MapEnv> new_env;
  ASSERT_TRUE(runtime_->OpenShard("m", &new_env).ok());
  EXPECT_NE(new_env.get(), old_env.get());
  EXPECT_FALSE(new_env->Replaced());

  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", {{"after-swap", "new"}}).ok());
  std::string value;
  EXPECT_EQ(testing::GetValue(*old_env, "after-swap", &value), Code::kNotFound);
  EXPECT_EQ(testing::GetValue(*new_env, "after-swap", &value), Code::kOk);
  EXPECT_EQ(value, "new");
  old_env.reset();
  new_env.reset();
  Open();  // a fresh process's view of shards/m
  EXPECT_EQ(LookupShard(*runtime_, "m", "after-swap", &value), Code::kOk);
  EXPECT_EQ(value, "new");
}

TEST_F(ShardCompactionTest, AShardThatIsGoneCountsAsReplacedAndTheCacheSaysNotFound) {
  ASSERT_TRUE(LoadAndMerge(*runtime_, "m", NumberedRows(10, "v")).ok());
  std::shared_ptr<MapEnv> held;
  ASSERT_TRUE(runtime_->OpenShard("m", &held).ok());
  EXPECT_FALSE(held->Replaced());
  fs::rename(home() + "/shards/m", home() + "/shards/.m.deleting");
  EXPECT_TRUE(held->Replaced());
  std::shared_ptr<MapEnv> again;
  EXPECT_EQ(runtime_->OpenShard("m", &again).code(), Code::kNotFound);
  std::string value;
  EXPECT_EQ(testing::GetValue(*held, "key-3", &value), Code::kOk);  // the holder still reads its files
  EXPECT_EQ(value, "v3");
}

class ShardCompactionCrashTest : public ShardCompactionTest, public ::testing::WithParamInterface<const char*> {};

// kill -9 at either side of the exchange: the shard opens with the same rows and version, a leftover is
// removed, and the next run compacts.
TEST_P(ShardCompactionCrashTest, KillNineLeavesACompleteShardAndTheNextRunFinishes) {
  LoadRewrites();
  runtime_.reset();
  const std::string rows_before = DumpShards(home());
  const std::string version_before = DumpBatchIds(home());

  const int wstatus = CompactInChild(dir_.path(), config_, "m", GetParam());
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "status " << wstatus;
  EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);
  EXPECT_TRUE(fs::exists(leftover()));
  // Compared as booleans: a 2000-row dump is no message.
  EXPECT_TRUE(LinesOf(DumpShards(home()), "m") == rows_before);
  EXPECT_EQ(LinesOf(DumpBatchIds(home()), "m"), version_before);

  Open();
  CompactionResult result;
  const Status s = CompactUnderLock(*runtime_, "m", &result);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(fs::exists(leftover()));
  ShardSpace after;
  ASSERT_TRUE(MeasureMap(*runtime_, "m", &after).ok());
  EXPECT_EQ(after.rows, 2000u);
  EXPECT_LT(after.free_share, 0.05);
  runtime_.reset();
  EXPECT_TRUE(DumpShards(home()) == rows_before);
  EXPECT_EQ(DumpBatchIds(home()), version_before);
}

INSTANTIATE_TEST_SUITE_P(FaultPoints, ShardCompactionCrashTest,
                         ::testing::Values("reclaim.before_swap", "reclaim.after_swap"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param).substr(std::string("reclaim.").size());
                         });

}  // namespace
}  // namespace planb
