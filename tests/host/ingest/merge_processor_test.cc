#include "host/ingest/merge_processor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/content_version.h"
#include "host/transfer/batch_zip.h"
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

// A finished stream zipped and staged as a load does it; returns the sequence (0 on failure).
uint64_t StageStream(Runtime& runtime, const StreamWriter& writer) {
  const std::string zip = writer.dir() + ".zip";
  Status s = ZipBatch(writer.dir(), zip, ZipOptions{/*compress=*/false, /*batch_id=*/"test/" + zip});
  EXPECT_TRUE(s.ok()) << s.message();
  uint64_t sequence = 0;
  if (s.ok()) s = StagingStore(runtime.home()).Stage(zip, &sequence);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(RemoveTree(writer.dir()).ok());
  return sequence;
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

uint64_t Hash(const std::string& id) { return XXH3_64bits(id.data(), id.size()); }

// The content version of `map`'s shard.
ContentVersion VersionOf(Runtime& runtime, const std::string& map) {
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenShard(map, &shard);
  EXPECT_TRUE(s.ok()) << s.message();
  ContentVersion version;
  if (!s.ok()) return version;
  Txn txn;
  s = txn.Begin(shard->env(), MDB_RDONLY);
  if (s.ok()) s = ReadContentVersion(txn.get(), shard->meta(), &version);
  EXPECT_TRUE(s.ok()) << s.message();
  return version;
}

// A batch of `rows` of map m with the id `batch_id`, zipped to `zip` (not staged: Stage a copy per home).
void MakeZip(Runtime& runtime, const std::string& batch_id, const Rows& rows, const std::string& zip) {
  static int streams = 0;
  StreamWriter writer(runtime.catalog(), runtime.home().writer() + "/zip-" + std::to_string(++streams));
  for (const auto& [key, value] : rows) ASSERT_TRUE(writer.Add("m", StateRecord(key, value)).ok());
  ASSERT_TRUE(writer.Finish().ok());
  ZipOptions options;
  options.compress = false;
  options.batch_id = batch_id;
  const Status s = ZipBatch(writer.dir(), zip, options);
  ASSERT_TRUE(s.ok()) << s.message();
  writer.Discard();
}

// Stages a copy of `zip` (staging moves what it stages); returns the sequence.
uint64_t StageCopy(Runtime& runtime, const std::string& zip) {
  const std::string copy = runtime.home().root() + "/copy.zip";
  fs::copy_file(zip, copy, fs::copy_options::overwrite_existing);
  uint64_t sequence = 0;
  const Status s = StagingStore(runtime.home()).Stage(copy, &sequence);
  EXPECT_TRUE(s.ok()) << s.message();
  return sequence;
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

  static std::string StagedPath(const Runtime& runtime, uint64_t sequence) {
    return runtime.home().staging() + "/" + StagingStore::BatchFileName(sequence);
  }
  std::string StagedPath(uint64_t sequence) const { return StagedPath(*runtime_, sequence); }
  std::string MergingPath(uint64_t sequence) const {
    return runtime_->home().merging() + "/" + StagingStore::BatchName(sequence);
  }
  bool IsStaged(uint64_t sequence) const { return StagingStore(runtime_->home()).Contains(sequence); }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(MergeProcessorTest, NothingPendingIsNotAnError) {
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 0u);
  EXPECT_EQ(report.last_sequence, 0u);
  EXPECT_TRUE(report.rows_merged.empty());
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
}

TEST_F(MergeProcessorTest, FirstBatchIsExtractedToBecomeTheShard) {
  const uint64_t sequence = Stage(*runtime_, "m", MakeRows(0, 100, "first"));
  ASSERT_TRUE(IsStaged(sequence));

  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.last_sequence, sequence);
  EXPECT_EQ(report.rows_merged.at("m"), 100u);
  EXPECT_FALSE(IsStaged(sequence));
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

  const uint64_t second = Stage(*runtime_, "m", MakeRows(50, 100, "second"));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.last_sequence, second);
  EXPECT_EQ(report.rows_merged.at("m"), 100u);
  EXPECT_EQ(Inode(runtime_->home().ShardPath("m") + "/data.mdb"), shard_inode);  // written in place
  EXPECT_EQ(Lookup(*runtime_, "m", "key-0"), "first-0");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-49"), "first-49");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-50"), "second-50");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-149"), "second-149");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-150"), "<not found>");
  EXPECT_EQ(Dump(*runtime_, "m").size(), 150u);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_TRUE(Entries(runtime_->home().staging()).empty());
}

TEST_F(MergeProcessorTest, StagedBatchesMergeOldestFirst) {
  Stage(*runtime_, "d", {{"k", "1"}, {"only-1", "x"}});
  Stage(*runtime_, "d", {{"k", "2"}});
  const uint64_t last = Stage(*runtime_, "d", {{"k", "3"}, {"only-3", "y"}});
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 3u);
  EXPECT_EQ(report.last_sequence, last);
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
  ASSERT_NE(StageStream(*runtime_, writer), 0u);
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(Lookup(*runtime_, "m", "a"), "in m");
  EXPECT_EQ(Lookup(*runtime_, "d", "a"), "in d");
  EXPECT_EQ(Entries(runtime_->home().shards()), (std::vector<std::string>{"d", "m"}));
}

// Crash states, made by hand: the zip of a batch whose maps already committed is staged again under its own
// name, as a crash between the commit and the zip's deletion leaves it. Merging it again changes nothing.
TEST_F(MergeProcessorTest, AMergedBatchStillStagedIsNotMergedAgain) {
  const Rows b1 = MakeRows(0, 300, "b1");
  const Rows b2 = MakeRows(100, 300, "b2");
  const Rows b3 = MakeRows(350, 100, "b3");

  TempDir other_dir;
  std::unique_ptr<Runtime> uninterrupted = Open(other_dir);
  Stage(*uninterrupted, "m", b1);
  Stage(*uninterrupted, "m", b2);
  Stage(*uninterrupted, "m", b3);
  Merge(*uninterrupted);
  const std::vector<DumpedRow> expected = Dump(*uninterrupted, "m");
  ASSERT_EQ(expected.size(), 450u);

  // Batch 1 was moved into shards/ as the map's first batch; batch 2 was merged into it. Each crashes once.
  const uint64_t first = Stage(*runtime_, "m", b1);
  const std::string first_zip = ReadFile(StagedPath(first));
  Merge(*runtime_);
  const std::vector<DumpedRow> after_first = Dump(*runtime_, "m");
  testing::WriteFile(StagedPath(first), first_zip);
  MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.last_sequence, first);
  EXPECT_EQ(Dump(*runtime_, "m"), after_first);
  EXPECT_FALSE(IsStaged(first));

  const uint64_t second = Stage(*runtime_, "m", b2);
  const std::string second_zip = ReadFile(StagedPath(second));
  Merge(*runtime_);
  ASSERT_EQ(Dump(*runtime_, "m").size(), 400u);
  testing::WriteFile(StagedPath(second), second_zip);
  const uint64_t third = Stage(*runtime_, "m", b3);
  // Extracted scratch of the crashed run, too (merge.before_commit leaves merging/<seq>/ complete).
  std::vector<std::string> maps;
  const Status unzipped = UnzipBatch(StagedPath(second), MergingPath(second), UnzipLimits{}, &maps);
  ASSERT_TRUE(unzipped.ok()) << unzipped.message();
  report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 2u);
  EXPECT_EQ(report.last_sequence, third);
  EXPECT_EQ(report.rows_merged.at("m"), 100u);  // batch 2 was recorded: only batch 3's rows are read
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_TRUE(Entries(runtime_->home().staging()).empty());
  EXPECT_EQ(Dump(*runtime_, "m"), expected);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-50"), "b1-50");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-200"), "b2-200");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-400"), "b3-400");
}

// Exactly once: a batch delivered again after a newer batch (its zip staged a second time, as a sender's retry
// or an operator would) is recognised by its id and not merged, so its older values do not come back.
TEST_F(MergeProcessorTest, ABatchDeliveredAgainAfterANewerOneIsNotMergedAgain) {
  const uint64_t first = Stage(*runtime_, "m", MakeRows(0, 10, "old"));
  const std::string first_zip = ReadFile(StagedPath(first));
  Merge(*runtime_);
  Stage(*runtime_, "m", MakeRows(0, 10, "new"));
  Merge(*runtime_);
  const std::string again = runtime_->home().root() + "/again.zip";
  testing::WriteFile(again, first_zip);
  uint64_t sequence = 0;
  ASSERT_TRUE(StagingStore(runtime_->home()).Stage(again, &sequence).ok());
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged.count("m") ? report.rows_merged.at("m") : 0u, 0u);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-5"), "new-5");
  EXPECT_FALSE(IsStaged(sequence));
}

// merge.mid_batch by hand: of a batch of maps d and m, d committed, m not, and the zip is still staged.
TEST_F(MergeProcessorTest, ABatchWithOnlySomeMapsCommittedEndsLikeAnUninterruptedRun) {
  const Rows d_rows = {{"k", "new"}, {"j", "new"}};
  const Rows m_rows = MakeRows(0, 50, "two");
  auto stage_both = [&](Runtime& runtime) {
    StreamWriter writer(runtime.catalog(), runtime.home().writer() + "/both");
    for (const auto& [key, value] : d_rows) EXPECT_TRUE(writer.Add("d", StateRecord(key, value)).ok());
    for (const auto& [key, value] : m_rows) EXPECT_TRUE(writer.Add("m", StateRecord(key, value)).ok());
    EXPECT_TRUE(writer.Finish().ok());
    return StageStream(runtime, writer);
  };

  TempDir other_dir;
  std::unique_ptr<Runtime> uninterrupted = Open(other_dir);
  Stage(*uninterrupted, "d", {{"k", "old"}});
  Stage(*uninterrupted, "m", MakeRows(25, 50, "one"));
  stage_both(*uninterrupted);
  Merge(*uninterrupted);

  Stage(*runtime_, "d", {{"k", "old"}});
  Stage(*runtime_, "m", MakeRows(25, 50, "one"));
  Merge(*runtime_);
  Stage(*runtime_, "d", d_rows);  // d's part of the batch, committed before the crash
  Merge(*runtime_);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-0"), "<not found>");
  const uint64_t both = stage_both(*runtime_);
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.last_sequence, both);
  EXPECT_EQ(Dump(*runtime_, "d"), Dump(*uninterrupted, "d"));
  EXPECT_EQ(Dump(*runtime_, "m"), Dump(*uninterrupted, "m"));
  EXPECT_EQ(Lookup(*runtime_, "m", "key-30"), "two-30");
  EXPECT_EQ(Lookup(*runtime_, "m", "key-60"), "one-60");
}

// merging/ is scratch: a half-extracted batch and anything else a crash left there are cleared first.
TEST_F(MergeProcessorTest, LeftoversInMergingAreClearedAndChangeNothing) {
  const uint64_t first = Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  ASSERT_EQ(first, 1u);
  // Half extracted, with rows that are not in the batch: they must not reach the shard.
  testing::WriteFile(MergingPath(first) + "/m/data.mdb", "half a data file");
  testing::WriteFile(MergingPath(first) + "/zz/data.mdb", "");
  testing::WriteFile(runtime_->home().merging() + "/random-file", "left by someone");
  testing::WriteFile(MergingPath(7) + ".merged/m/lock.mdb", std::string(8192, '\0'));  // the old layout's leftover
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.rows_merged, (std::map<std::string, uint64_t>{{"m", 10}}));
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
  EXPECT_TRUE(fs::exists(runtime_->home().merging() + "/.lock"));
  EXPECT_EQ(Entries(runtime_->home().shards()), std::vector<std::string>{"m"});
  EXPECT_EQ(Dump(*runtime_, "m").size(), 10u);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-3"), "b1-3");

  // With nothing staged at all, a leftover is still removed.
  testing::WriteFile(MergingPath(9) + "/m/data.mdb", "x");
  EXPECT_EQ(Merge(*runtime_).batches, 0u);
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
}

TEST_F(MergeProcessorTest, AnEmptyShardDirectoryIsReplacedByTheFirstBatch) {
  fs::create_directories(runtime_->home().ShardPath("m"));
  Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-3"), "b1-3");
}

// A staged file that is not a zip (or a truncated one) stops the queue at that batch: it stays staged, the
// shard is untouched, and later batches wait behind it (merge order is the batch order).
TEST_F(MergeProcessorTest, ACorruptStagedZipStopsTheQueueNamingIt) {
  Stage(*runtime_, "m", MakeRows(0, 20, "b1"));
  Merge(*runtime_);
  const std::string data = runtime_->home().ShardPath("m") + "/data.mdb";
  const std::string before = ReadFile(data);

  const std::string junk = dir_ / "junk.zip";
  testing::WriteFile(junk, "this is not a zip file at all");
  uint64_t bad = 0;
  ASSERT_TRUE(StagingStore(runtime_->home()).Stage(junk, &bad).ok());
  const uint64_t later = Stage(*runtime_, "m", MakeRows(0, 20, "later"));

  for (int run = 0; run < 2; ++run) {
    MergeProcessor merger(*runtime_);
    MergeReport report;
    const Status s = merger.MergePending(&report);
    ASSERT_FALSE(s.ok()) << "run " << run;
    EXPECT_TRUE(Contains(s.message(), "merging staged batch " + StagingStore::BatchFileName(bad))) << s.message();
    EXPECT_EQ(report.batches, 0u);
    EXPECT_TRUE(IsStaged(bad));
    EXPECT_TRUE(IsStaged(later));
    EXPECT_TRUE(ReadFile(data) == before) << "the shard's data.mdb changed in run " << run;
    EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
    EXPECT_EQ(Lookup(*runtime_, "m", "key-5"), "b1-5");
  }

  // Once the operator removes it, the queue moves on.
  fs::remove(StagedPath(bad));
  const MergeReport report = Merge(*runtime_);
  EXPECT_EQ(report.batches, 1u);
  EXPECT_EQ(report.last_sequence, later);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-5"), "later-5");
}

TEST_F(MergeProcessorTest, ATruncatedStagedZipIsRefusedNamingIt) {
  const uint64_t sequence = Stage(*runtime_, "m", MakeRows(0, 200, "b1"));
  const std::string zip = ReadFile(StagedPath(sequence));
  testing::WriteFile(StagedPath(sequence), zip.substr(0, zip.size() / 2));
  MergeProcessor merger(*runtime_);
  MergeReport report;
  const Status s = merger.MergePending(&report);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), StagingStore::BatchFileName(sequence))) << s.message();
  EXPECT_TRUE(IsStaged(sequence));
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
  EXPECT_TRUE(Entries(runtime_->home().merging()).empty());
}

TEST_F(MergeProcessorTest, UnzipLimitsApplyToStagedBatches) {
  const uint64_t sequence = Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  UnzipLimits limits;
  limits.max_total_bytes = 1024;  // less than one LMDB data file
  MergeProcessor merger(*runtime_, limits);
  MergeReport report;
  const Status s = merger.MergePending(&report);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), StagingStore::BatchFileName(sequence))) << s.message();
  EXPECT_TRUE(Contains(s.message(), "limit")) << s.message();
  EXPECT_TRUE(IsStaged(sequence));
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
}

TEST_F(MergeProcessorTest, StopSetBeforeTheCallMergesNothing) {
  const uint64_t first = Stage(*runtime_, "m", MakeRows(0, 10, "b1"));
  const uint64_t second = Stage(*runtime_, "d", {{"k", "v"}});
  std::atomic<bool> stop{true};
  MergeProcessor merger(*runtime_);
  MergeReport report;
  const Status s = merger.MergePending(&report, &stop);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.batches, 0u);
  EXPECT_EQ(report.last_sequence, 0u);
  EXPECT_TRUE(IsStaged(first));
  EXPECT_TRUE(IsStaged(second));
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());

  stop = false;
  report = MergeReport();
  ASSERT_TRUE(merger.MergePending(&report, &stop).ok());
  EXPECT_EQ(report.batches, 2u);
  EXPECT_EQ(report.last_sequence, second);
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
  EXPECT_TRUE(Contains(s.message(), "merging staged batch " + StagingStore::BatchFileName(sequence)))
      << s.message();
  EXPECT_EQ(report.batches, 0u);

  EXPECT_TRUE(ReadFile(data) == before) << "the shard's data.mdb changed";
  // Staged still, with its failed attempt counted beside it (quarantine.h).
  EXPECT_EQ(Entries(runtime64->home().staging()),
            (std::vector<std::string>{StagingStore::BatchFileName(sequence),
                                      StagingStore::BatchFileName(sequence) + ".attempts"}));
  EXPECT_TRUE(Entries(runtime64->home().merging()).empty());
  EXPECT_EQ(Lookup(*runtime64, "m", "key-10"), "b1-10");
  EXPECT_EQ(Lookup(*runtime64, "m", "key-60"), "b2-60");

  // It stays staged and refused: a second run changes nothing either.
  s = merger.MergePending(&report);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(ReadFile(data) == before);
}

TEST_F(MergeProcessorTest, RefusesABatchOfAMapNotInTheConfig) {
  const uint64_t sequence = Stage(*runtime_, "d", {{"k", "v"}});
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
  EXPECT_TRUE(Contains(s.message(), StagingStore::BatchFileName(sequence))) << s.message();
  EXPECT_TRUE(Entries(runtime_->home().shards()).empty());
  EXPECT_TRUE(IsStaged(sequence));
}

// A batch of maps `a` and `zz`, where `zz` left the config between staging and merging: `a` sorts first, yet it
// must not be merged while `zz` cannot be; the batch stays staged until the config names zz again.
TEST_F(MergeProcessorTest, ABatchNamingAnUnconfiguredMapMergesNothingAndStaysStaged) {
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
  const uint64_t sequence = StageStream(*runtime, writer);
  ASSERT_NE(sequence, 0u);
  const std::string home = runtime->home().root();
  const std::string shard_a = runtime->home().ShardPath("a") + "/data.mdb";
  const std::string staged = StagedPath(*runtime, sequence);
  const std::string staged_bytes = ReadFile(staged);
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
    EXPECT_TRUE(Contains(s.message(), StagingStore::BatchFileName(sequence))) << s.message();
    EXPECT_EQ(report.batches, 0u);
    EXPECT_TRUE(report.rows_merged.empty());
    EXPECT_TRUE(ReadFile(shard_a) == before) << "shards/a/data.mdb changed in run " << run;
    EXPECT_TRUE(Entries(runtime->home().merging()).empty());
    EXPECT_TRUE(ReadFile(staged) == staged_bytes) << "the staged zip changed in run " << run;
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
  EXPECT_TRUE(Entries(runtime->home().staging()).empty());
  EXPECT_EQ(Lookup(*runtime, "a", "k1"), "new");
  EXPECT_EQ(Lookup(*runtime, "a", "k2"), "old");
  EXPECT_EQ(Lookup(*runtime, "a", "k3"), "new");
  EXPECT_EQ(Lookup(*runtime, "zz", "z"), "zed");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// Three batches of map m with fixed ids, zipped once, staged into as many homes as a test wants.
class MergeVersionTest : public MergeProcessorTest {
 protected:
  void SetUp() override {
    MergeProcessorTest::SetUp();
    MakeZip(*runtime_, "node1/a", MakeRows(0, 30, "a"), zips_ / "a.zip");
    MakeZip(*runtime_, "node1/b", MakeRows(20, 30, "b"), zips_ / "b.zip");
    MakeZip(*runtime_, "node1/c", MakeRows(40, 30, "c"), zips_ / "c.zip");
  }
  std::string ZipOf(const std::string& name) const { return zips_ / (name + ".zip"); }

  TempDir zips_;
};

TEST_F(MergeVersionTest, TheFirstBatchIsCountedInTheShardItBecomes) {
  StageCopy(*runtime_, ZipOf("a"));
  Merge(*runtime_);
  EXPECT_EQ(VersionOf(*runtime_, "m"), (ContentVersion{1, Hash("node1/a")}));
  StageCopy(*runtime_, ZipOf("b"));
  Merge(*runtime_);
  EXPECT_EQ(VersionOf(*runtime_, "m"), (ContentVersion{2, Hash("node1/a") ^ Hash("node1/b")}));
}

TEST_F(MergeVersionTest, HomesMergingTheSameBatchesInAnyOrderReportTheSameVersion) {
  for (const char* name : {"a", "b", "c"}) StageCopy(*runtime_, ZipOf(name));
  Merge(*runtime_);
  TempDir other_dir;
  std::unique_ptr<Runtime> other = Open(other_dir);
  for (const char* name : {"c", "a", "b"}) StageCopy(*other, ZipOf(name));  // c becomes other's shard
  Merge(*other);
  const ContentVersion all{3, Hash("node1/a") ^ Hash("node1/b") ^ Hash("node1/c")};
  EXPECT_EQ(VersionOf(*runtime_, "m"), all);
  EXPECT_EQ(VersionOf(*other, "m"), all);
  // And the same rows: State keeps the latest effective time whichever batch merged first.
  EXPECT_EQ(Lookup(*runtime_, "m", "key-45"), Lookup(*other, "m", "key-45"));
  // Every key and value (LMDB keys may differ: clash numbers go by arrival order in each file).
  const auto rows_of = [](Runtime& runtime) {
    std::shared_ptr<MapEnv> shard;
    std::vector<testing::DumpedRow> rows;
    std::map<std::string, std::string> contents;
    if (runtime.OpenShard("m", &shard).ok() && testing::DumpMap(*shard, &rows).ok()) {
      for (const testing::DumpedRow& row : rows) contents[row.key] = row.value;
    }
    return contents;
  };
  const std::map<std::string, std::string> mine = rows_of(*runtime_);
  EXPECT_FALSE(mine.empty());
  EXPECT_EQ(mine, rows_of(*other));

  TempDir third_dir;
  std::unique_ptr<Runtime> third = Open(third_dir);
  for (const char* name : {"a", "b"}) StageCopy(*third, ZipOf(name));
  Merge(*third);
  EXPECT_NE(VersionOf(*third, "m"), all);
  EXPECT_EQ(VersionOf(*third, "m").batches, 2u);
}

TEST_F(MergeVersionTest, MergingABatchAgainLeavesTheVersionAsItWas) {
  StageCopy(*runtime_, ZipOf("a"));
  StageCopy(*runtime_, ZipOf("b"));
  Merge(*runtime_);
  const ContentVersion before = VersionOf(*runtime_, "m");
  const std::vector<DumpedRow> rows = Dump(*runtime_, "m");
  // As a crash before the zip was unstaged, or a batch delivered twice, leaves them: both staged again.
  StageCopy(*runtime_, ZipOf("a"));  // was the shard's first batch (moved into place)
  StageCopy(*runtime_, ZipOf("b"));  // was merged in a write transaction
  EXPECT_EQ(Merge(*runtime_).batches, 2u);
  EXPECT_EQ(VersionOf(*runtime_, "m"), before);
  EXPECT_EQ(Dump(*runtime_, "m"), rows);
}

// merge.before_commit kills the process with the merge's write transaction complete but not committed: the
// version must still be the one of the rows (it is written in that same transaction), and the batch's next merge
// counts it once.
TEST_F(MergeVersionTest, AMergeKilledBeforeItsCommitLeavesTheVersionWithTheRows) {
  StageCopy(*runtime_, ZipOf("a"));
  Merge(*runtime_);
  const ContentVersion after_a = VersionOf(*runtime_, "m");
  const uint64_t b = StageCopy(*runtime_, ZipOf("b"));
  runtime_.reset();  // the child opens the shard itself; one process must not hold it twice
  EXPECT_EXIT(
      {
        ::setenv("PLANB_FAULT", "merge.before_commit", 1);
        std::unique_ptr<Runtime> child = Open(dir_);
        MergeReport report;
        (void)MergeProcessor(*child).MergePending(&report);
        std::exit(0);  // not reached: the fault point kills the process
      },
      ::testing::KilledBySignal(SIGKILL), "");
  runtime_ = Open(dir_);
  EXPECT_EQ(VersionOf(*runtime_, "m"), after_a);
  EXPECT_EQ(Lookup(*runtime_, "m", "key-45"), "<not found>");
  EXPECT_TRUE(IsStaged(b));
  EXPECT_EQ(Merge(*runtime_).batches, 1u);
  EXPECT_EQ(VersionOf(*runtime_, "m"), (ContentVersion{2, Hash("node1/a") ^ Hash("node1/b")}));
  EXPECT_EQ(Lookup(*runtime_, "m", "key-45"), "b-45");
}

// A merge the store refuses (the map is full) aborts its transaction: the version does not move either.
TEST_F(MergeVersionTest, AFailedMergeLeavesTheVersionAsItWas) {
  TempDir small_dir;
  std::unique_ptr<Runtime> small = Open(small_dir, "[map.m]\ntype = state\nscheme = hashed\nmax_store_size = 1MiB\n");
  ASSERT_NE(small, nullptr);
  // Batches that fit the map alone, merged until the shard is full.
  Status merged;
  ContentVersion before;
  for (int batch = 0; batch < 20 && merged.ok(); ++batch) {
    Rows rows;
    for (int i = 0; i < 2000; ++i) {
      rows.emplace_back(std::to_string(batch) + "-" + std::to_string(i), std::string(100, 'x'));
    }
    ASSERT_TRUE(StageRows(*small, "m", rows).ok());
    if (batch > 0) before = VersionOf(*small, "m");
    MergeReport report;
    merged = MergeProcessor(*small).MergePending(&report);
  }
  ASSERT_FALSE(merged.ok()) << "the shard never filled up";
  EXPECT_EQ(merged.code(), Code::kFull) << merged.message();
  EXPECT_GE(before.batches, 1u);
  EXPECT_EQ(VersionOf(*small, "m"), before);
}

}  // namespace
}  // namespace planb
