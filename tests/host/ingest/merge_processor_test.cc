#include "host/ingest/merge_processor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::LookupShard;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReadFile;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

using Rows = std::vector<std::pair<std::string, std::string>>;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The config every test here uses: a clash-heavy hashed map and a direct one.
const std::string kConfig = StateMapSection("m", "hashed", "hash_bits = 8\n") + StateMapSection("d", "direct");

ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// Names in `dir`, hidden files (locks, counters) left out.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name[0] != '.') names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// `count` rows "key-<i>" -> "<tag>-<i>" starting at `first`.
Rows MakeRows(int first, int count, const std::string& tag) {
  Rows rows;
  for (int i = first; i < first + count; ++i) {
    rows.emplace_back("key-" + std::to_string(i), tag + "-" + std::to_string(i));
  }
  return rows;
}

class MergeProcessorTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = Open(dir_); }

  static std::unique_ptr<Runtime> Open(const TempDir& dir, const std::string& config = kConfig) {
    std::unique_ptr<Runtime> runtime;
    const Status s = OpenTestRuntime(dir.path(), config, &runtime);
    EXPECT_TRUE(s.ok()) << s.message();
    return runtime;
  }

  static uint64_t Stage(Runtime& runtime, const std::string& map, const Rows& rows) {
    uint64_t sequence = 0;
    const Status s = StageRows(runtime, map, rows, &sequence);
    EXPECT_TRUE(s.ok()) << s.message();
    return sequence;
  }

  static MergeReport Merge(Runtime& runtime) {
    MergeProcessor merger(runtime);
    MergeReport report;
    const Status s = merger.MergePending(&report);
    EXPECT_TRUE(s.ok()) << s.message();
    return report;
  }

  static std::vector<DumpedRow> Dump(Runtime& runtime, const std::string& map) {
    std::shared_ptr<MapEnv> shard;
    Status s = runtime.OpenShard(map, &shard);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<DumpedRow> rows;
    if (s.ok()) s = DumpMap(*shard, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  static std::string Lookup(Runtime& runtime, const std::string& map, const std::string& key) {
    std::string value;
    const Code code = LookupShard(runtime, map, key, &value);
    return code == Code::kOk ? value : std::string("<") + CodeName(code) + ">";
  }

  std::string StagingPath(uint64_t sequence) const {
    return runtime_->home().staging() + "/" + StagingStore::BatchName(sequence);
  }
  std::string MergingPath(uint64_t sequence) const {
    return runtime_->home().merging() + "/" + StagingStore::BatchName(sequence);
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(MergeProcessorTest, NothingPendingIsNotAnError) {
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 0u);
  EXPECT_TRUE(report.rows_merged.empty());
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
}

TEST_F(MergeProcessorTest, FirstBatchIsMovedToBecomeTheShard) {
  const uint64_t sequence = Stage(*runtime_, "m", MakeRows(0, 100, "first"));
  const ino_t batch_inode = Inode(StagingPath(sequence) + "/m/data.mdb");

  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged.at("m"), 100u);
  const std::string shard = runtime_->home().ShardPath("m");
  EXPECT_EQ(Inode(shard + "/data.mdb"), batch_inode);  // the same file: moved, not copied
  EXPECT_TRUE(Entries(runtime_->home().staging()).empty());
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_EQ(Entries(runtime_->home().shards()), std::vector<std::string>{"m"});
  EXPECT_EQ(Lookup(*runtime_, "m", "key-42"), "first-42");
  EXPECT_EQ(Dump(*runtime_, "m").size(), 100u);
}

TEST_F(MergeProcessorTest, SecondBatchMergesIntoTheShard) {
  Stage(*runtime_, "m", MakeRows(0, 100, "first"));
  Merge(*runtime_);
  const ino_t shard_inode = Inode(runtime_->home().ShardPath("m") + "/data.mdb");

  Stage(*runtime_, "m", MakeRows(50, 100, "second"));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged.at("m"), 100u);
  EXPECT_EQ(Inode(runtime_->home().ShardPath("m") + "/data.mdb"), shard_inode);  // written in place
  EXPECT_EQ(Lookup(*runtime_, "m", "key-0"), "first-0");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-49"), "first-49");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-50"), "second-50");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-149"), "second-149");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-150"), "<not found>");
  EXPECT_EQ(Dump(*runtime_, "m").size(), 150u);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
}

TEST_F(MergeProcessorTest, StagedBatchesMergeOldestFirst) {
  Stage(*runtime_, "d", {{"k", "1"}, {"only-1", "x"}});
  Stage(*runtime_, "d", {{"k", "2"}});
  Stage(*runtime_, "d", {{"k", "3"}, {"only-3", "y"}});
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 3u);
  EXPECT_EQ(report.rows_merged.at("d"), 5u);
  EXPECT_EQ(Lookup(*runtime_, "d", "k"), "3");
  EXPECT_EQ(Lookup(*runtime_, "d", "only-1"), "x");
  EXPECT_EQ(Lookup(*runtime_, "d", "only-3"), "y");
}

TEST_F(MergeProcessorTest, ABatchOfSeveralMapsMergesEach) {
  StreamWriter writer(runtime_->catalog(), runtime_->home().writer() + "/two-maps");
  ASSERT_TRUE(writer.Add("m", StateRecord("a", "in m")).ok());
  ASSERT_TRUE(writer.Add("D", StateRecord("a", "in d")).ok());  // map names are matched case-insensitively
  ASSERT_TRUE(writer.Finish().ok());
  uint64_t sequence = 0;
  ASSERT_TRUE(StagingStore(runtime_->home()).Stage(writer.dir(), &sequence).ok());
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(Lookup(*runtime_, "m", "a"), "in m");
  EXPECT_EQ(Lookup(*runtime_, "d", "a"), "in d");
  EXPECT_EQ(Entries(runtime_->home().shards()), (std::vector<std::string>{"d", "m"}));
}

// The same three batches, merged without interruption in one home and with a crash in another.
TEST_F(MergeProcessorTest, ABatchLeftInMergingIsMergedLikeAnUninterruptedRun) {
  const Rows b1 = MakeRows(0, 400, "b1");
  const Rows b2 = MakeRows(200, 400, "b2");
  const Rows b3 = MakeRows(500, 300, "b3");

  TempDir other_dir;
  std::unique_ptr<Runtime> uninterrupted = Open(other_dir);
  Stage(*uninterrupted, "m", b1);
  Merge(*uninterrupted);
  Stage(*uninterrupted, "m", b2);
  Stage(*uninterrupted, "m", b3);
  Merge(*uninterrupted);

  Stage(*runtime_, "m", b1);
  Merge(*runtime_);
  const uint64_t second = Stage(*runtime_, "m", b2);
  // A crash right after MergePending moved the batch into merging/, before its merge committed.
  ASSERT_TRUE(fs::exists(StagingPath(second)));
  fs::rename(StagingPath(second), MergingPath(second));
  Stage(*runtime_, "m", b3);
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 2u);
  EXPECT_EQ(report.rows_merged.at("m"), 700u);

  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_TRUE(Entries(runtime_->home().staging()).empty());
  const std::vector<DumpedRow> expected = Dump(*uninterrupted, "m");
  EXPECT_EQ(expected.size(), 800u);
  EXPECT_EQ(Dump(*runtime_, "m"), expected);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-550"), "b3-550");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-450"), "b2-450");
}

TEST_F(MergeProcessorTest, ABatchMergedButNotRemovedIsMergedAgainHarmlessly) {
  Stage(*runtime_, "m", MakeRows(0, 300, "b1"));
  Merge(*runtime_);
  const uint64_t second = Stage(*runtime_, "m", MakeRows(100, 300, "b2"));
  const std::string copy = dir_ / "copy-of-batch";
  fs::copy(StagingPath(second), copy, fs::copy_options::recursive);
  Merge(*runtime_);
  const std::vector<DumpedRow> once = Dump(*runtime_, "m");
  ASSERT_EQ(once.size(), 400u);

  // A crash after the shard committed but before merging/<seq> was deleted: the batch is there again.
  fs::rename(copy, MergingPath(second));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(Dump(*runtime_, "m"), once);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
}

TEST_F(MergeProcessorTest, AnEmptyBatchDirectoryLeftInMergingIsRemoved) {
  // A crash after the first batch of a map was moved into shards/, before merging/<seq> was deleted.
  Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  Merge(*runtime_);
  fs::create_directories(MergingPath(1));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_EQ(Dump(*runtime_, "m").size(), 10u);
}

TEST_F(MergeProcessorTest, AnEmptyShardDirectoryIsReplacedByTheFirstBatch) {
  fs::create_directories(runtime_->home().ShardPath("m"));
  Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-3"), "b1-3");
}

TEST_F(MergeProcessorTest, RefusesABatchWrittenWithAnotherLayout) {
  // The shard was written with hash_bits = 64; a node configured with 8 bits wrote the next batch.
  TempDir config64_dir;
  const std::string home = dir_ / "home";
  std::unique_ptr<Runtime> runtime64;
  {
    testing::WriteFile(config64_dir / "planb.ini", StateMapSection("m", "hashed", "hash_bits = 64\n"));
    RuntimeOptions options;
    options.config_path = config64_dir / "planb.ini";
    options.home = home;
    const Status s = Runtime::Open(options, &runtime64);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  Stage(*runtime64, "m", MakeRows(0, 100, "b1"));
  Merge(*runtime64);
  Stage(*runtime64, "m", MakeRows(50, 100, "b2"));  // merged into the open shard: the env is cached
  Merge(*runtime64);
  const std::string data = runtime64->home().ShardPath("m") + "/data.mdb";
  const std::string before = ReadFile(data);

  const uint64_t sequence = Stage(*runtime_, "m", MakeRows(0, 200, "hash8"));  // runtime_ uses hash_bits = 8
  MergeProcessor merger(*runtime64);
  MergeReport report;
  Status s = merger.MergePending(&report);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "hash_bits=8")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "hash_bits=64")) << s.message();
  EXPECT_TRUE(Contains(s.message(), StagingStore::BatchName(sequence))) << s.message();
  EXPECT_EQ(report.batches, 0u);

  EXPECT_TRUE(ReadFile(data) == before) << "the shard's data.mdb changed";
  EXPECT_EQ(Entries(runtime64->home().merging()), std::vector<std::string>{StagingStore::BatchName(sequence)});
  EXPECT_EQ(Lookup(*runtime64, "m", "key-10"), "b1-10");
  EXPECT_EQ(Lookup(*runtime64, "m", "key-60"), "b2-60");

  // It stays queued and refused: a second run changes nothing either.
  s = merger.MergePending(&report);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(ReadFile(data) == before);
}

TEST_F(MergeProcessorTest, RefusesABatchOfAMapNotInTheConfig) {
  Stage(*runtime_, "d", {{"k", "v"}});
  TempDir other_config;
  testing::WriteFile(other_config / "planb.ini", StateMapSection("m", "hashed", "hash_bits = 8\n"));
  RuntimeOptions options;
  options.config_path = other_config / "planb.ini";
  options.home = runtime_->home().root();
  std::unique_ptr<Runtime> without_d;
  ASSERT_TRUE(Runtime::Open(options, &without_d).ok());
  MergeProcessor merger(*without_d);
  MergeReport report;
  const Status s = merger.MergePending(&report);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "map 'd' is not in the config")) << s.message();
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
}

// MergeBatch renames a merged batch to "<seq>.merged" before deleting it; a crash during that delete leaves such a
// directory, partly deleted. It no longer looks like a batch, and the next run deletes it.
TEST_F(MergeProcessorTest, AHalfDeletedMergedBatchIsRemovedByTheNextRun) {
  Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  Merge(*runtime_);
  // What a crash leaves after data.mdb was deleted: a lone lock.mdb, in the batch's map directory or on its own.
  const std::string in_map_dir = MergingPath(1) + ".merged";
  const std::string lone = MergingPath(2) + ".merged";
  testing::WriteFile(in_map_dir + "/m/lock.mdb", std::string(8192, '\0'));
  testing::WriteFile(lone + "/lock.mdb", std::string(8192, '\0'));
  ASSERT_EQ(Entries(runtime_->home().merging()),
            (std::vector<std::string>{StagingStore::BatchName(1) + ".merged", StagingStore::BatchName(2) + ".merged"}));

  Stage(*runtime_, "m", MakeRows(5, 10, "b2"));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged.at("m"), 10u);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_FALSE(fs::exists(in_map_dir));
  EXPECT_FALSE(fs::exists(lone));
  EXPECT_EQ(Lookup(*runtime_, "m", "key-0"), "b1-0");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-14"), "b2-14");
  EXPECT_EQ(Dump(*runtime_, "m").size(), 15u);

  // With nothing queued at all, a leftover is still removed.
  testing::WriteFile(lone + "/lock.mdb", "");
  EXPECT_EQ(Merge(*runtime_).batches, 0u);
  EXPECT_FALSE(fs::exists(lone));
}

// A batch of maps `a` and `zz`, where `zz` left the config between staging and merging: `a` sorts first, yet it
// must not be merged while `zz` cannot be; the batch waits in merging/ until the config names zz again.
TEST_F(MergeProcessorTest, ABatchNamingAnUnconfiguredMapMergesNothingAndStaysQueued) {
  const std::string with_zz = StateMapSection("a", "hashed") + StateMapSection("zz", "direct");
  const std::string without_zz = StateMapSection("a", "hashed");
  TempDir dir;
  std::unique_ptr<Runtime> runtime = Open(dir, with_zz);
  ASSERT_NE(runtime, nullptr);
  ASSERT_TRUE(StageRows(*runtime, "a", {{"k1", "old"}, {"k2", "old"}}).ok());
  Merge(*runtime);

  StreamWriter writer(runtime->catalog(), runtime->home().writer() + "/a-and-zz");
  ASSERT_TRUE(writer.Add("a", StateRecord("k1", "new")).ok());
  ASSERT_TRUE(writer.Add("a", StateRecord("k3", "new")).ok());
  ASSERT_TRUE(writer.Add("zz", StateRecord("z", "zed")).ok());
  ASSERT_TRUE(writer.Finish().ok());
  uint64_t sequence = 0;
  ASSERT_TRUE(StagingStore(runtime->home()).Stage(writer.dir(), &sequence).ok());
  const std::string home = runtime->home().root();
  const std::string shard_a = runtime->home().ShardPath("a") + "/data.mdb";
  const std::string queued = runtime->home().merging() + "/" + StagingStore::BatchName(sequence);
  runtime.reset();  // closes shard a: one process must not open an LMDB file twice

  runtime = Open(dir, without_zz);
  ASSERT_NE(runtime, nullptr);
  ASSERT_EQ(runtime->home().root(), home);
  const std::string before = ReadFile(shard_a);
  for (int run = 0; run < 2; ++run) {
    MergeProcessor merger(*runtime);
    MergeReport report;
    const Status s = merger.MergePending(&report);
    ASSERT_FALSE(s.ok()) << "run " << run;
    EXPECT_TRUE(Contains(s.message(), "map 'zz' is not in the config")) << s.message();
    EXPECT_TRUE(Contains(s.message(), StagingStore::BatchName(sequence))) << s.message();
    EXPECT_EQ(report.batches, 0u);
    EXPECT_TRUE(report.rows_merged.empty());
    EXPECT_TRUE(ReadFile(shard_a) == before) << "shards/a/data.mdb changed in run " << run;
    EXPECT_EQ(Entries(runtime->home().merging()), std::vector<std::string>{StagingStore::BatchName(sequence)});
    EXPECT_EQ(Entries(queued), (std::vector<std::string>{"a", "zz"}));
    EXPECT_TRUE(fs::exists(queued + "/zz/data.mdb"));
  }
  EXPECT_EQ(Lookup(*runtime, "a", "k1"), "old");
  EXPECT_EQ(Lookup(*runtime, "a", "k3"), "<not found>");
  EXPECT_FALSE(fs::exists(runtime->home().ShardPath("zz")));
  runtime.reset();

  runtime = Open(dir, with_zz);
  ASSERT_NE(runtime, nullptr);
  const MergeReport report = Merge(*runtime);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged, (std::map<std::string, uint64_t>{{"a", 2}, {"zz", 1}}));
  EXPECT_TRUE(Entries(runtime->home().merging()).empty());
  EXPECT_EQ(Lookup(*runtime, "a", "k1"), "new");
  EXPECT_EQ(Lookup(*runtime, "a", "k2"), "old");
  EXPECT_EQ(Lookup(*runtime, "a", "k3"), "new");
  EXPECT_EQ(Lookup(*runtime, "zz", "z"), "zed");
}

}  // namespace
}  // namespace planb
