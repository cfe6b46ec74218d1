// Batches that must never crash-loop a merger (issue 11, defect 1): an uploaded LMDB file is only ever read (a
// map's first batch is copied into a fresh shard), and a batch whose merge fails or kills the merger
// kMaxMergeAttempts times goes to quarantine/, holding back only the later batches that touch its maps.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/content_version.h"
#include "host/storage/lmdb_check.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "tests/host/storage/free_list_forgery.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::LookupShard;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReadFile;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

const std::string kConfig = StateMapSection("m", "hashed") + StateMapSection("d", "direct");

class MergeQuarantineTest : public ::testing::Test {
 protected:
  void SetUp() override { runtime_ = Open(); }

  std::unique_ptr<Runtime> Open(const std::string& config = kConfig) {
    std::unique_ptr<Runtime> runtime;
    const Status s = OpenTestRuntime(dir_.path(), config, &runtime);
    EXPECT_TRUE(s.ok()) << s.message();
    return runtime;
  }

  // A finished stream of `rows` rows "key-<i>" -> "<tag>-<i>" of `map`, written under `config`.
  std::string WriteStream(const std::string& map, int rows, const std::string& tag,
                          const std::string& config = kConfig) {
    std::unique_ptr<Runtime> writer_runtime;
    const std::string where = dir_ / ("writer-" + std::to_string(++streams_));
    EXPECT_TRUE(OpenTestRuntime(where, config, &writer_runtime).ok());
    StreamWriter writer(writer_runtime->catalog(), where + "/stream");
    for (int i = 0; i < rows; ++i) {
      EXPECT_TRUE(writer.Add(map, StateRecord("key-" + std::to_string(i), tag + "-" + std::to_string(i))).ok());
    }
    EXPECT_TRUE(writer.Finish().ok());
    return where + "/stream";
  }

  // A finished stream of one batch of both m and d ("key-1" -> "both" in each), written under `config`.
  std::string WriteBothMaps(const std::string& config) {
    std::unique_ptr<Runtime> writer_runtime;
    const std::string where = dir_ / ("writer-" + std::to_string(++streams_));
    EXPECT_TRUE(OpenTestRuntime(where, config, &writer_runtime).ok());
    StreamWriter writer(writer_runtime->catalog(), where + "/stream");
    EXPECT_TRUE(writer.Add("m", StateRecord("key-1", "both")).ok());
    EXPECT_TRUE(writer.Add("d", StateRecord("key-1", "both")).ok());
    EXPECT_TRUE(writer.Finish().ok());
    return where + "/stream";
  }

  // The content version of `map`'s shard.
  ContentVersion ShardVersion(const std::string& map) {
    ContentVersion version;
    std::shared_ptr<MapEnv> shard;
    EXPECT_TRUE(runtime_->OpenShard(map, &shard).ok());
    if (shard == nullptr) return version;
    Txn txn;
    EXPECT_TRUE(txn.Begin(shard->env(), MDB_RDONLY).ok());
    EXPECT_TRUE(ReadContentVersion(txn.get(), shard->meta(), &version).ok());
    return version;
  }

  // Zips `stream` with id `batch_id` and stages it without verification (as a local load does); the sequence.
  uint64_t StageStream(const std::string& stream, const std::string& batch_id) {
    const std::string zip = stream + ".zip";
    Status s = ZipBatch(stream, zip, ZipOptions{/*compress=*/true, batch_id});
    EXPECT_TRUE(s.ok()) << s.message();
    uint64_t sequence = 0;
    s = StagingStore(runtime_->home()).Stage(zip, &sequence);
    EXPECT_TRUE(s.ok()) << s.message();
    return sequence;
  }

  Status Merge(MergeReport* report) { return MergeProcessor(*runtime_).MergePending(report); }

  // A child process merges what is staged (`threads` batches at once, 0: the config's) and aborts on batch
  // "test/abort-me" (fault merge.abort), as an LMDB assertion did. REQUIRES: runtime_ reset (the child opens the
  // home itself).
  void MergeInAChildThatDiesOnTheBatchToAbort(int threads = 0) {
    EXPECT_EXIT(
        {
          ::setenv("PLANB_FAULT", "merge.abort:test/abort-me", 1);
          std::unique_ptr<Runtime> child = Open();
          MergeReport report;
          (void)MergeProcessor(*child, UnzipLimits{}, threads).MergePending(&report);
          std::exit(0);  // not reached
        },
        ::testing::KilledBySignal(SIGABRT), "");
  }

  std::string Lookup(const std::string& map, const std::string& key) {
    std::string value;
    const Code code = LookupShard(*runtime_, map, key, &value);
    return code == Code::kOk ? value : std::string("<") + CodeName(code) + ">";
  }

  std::string StagedPath(uint64_t sequence) const {
    return runtime_->home().staging() + "/" + StagingStore::BatchFileName(sequence);
  }
  bool IsStaged(uint64_t sequence) const { return StagingStore(runtime_->home()).Contains(sequence); }
  std::string Quarantined(uint64_t sequence) const {
    return QuarantineDir(runtime_->home()) + "/" + StagingStore::BatchFileName(sequence);
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  int streams_ = 0;
};

// The batch: a free list naming a live page. The node used to open a write transaction on the uploaded
// file itself (to record the batch, before renaming it in as the shard); LMDB then handed out the live page again
// and died on an assertion in mdb_page_touch. Now the file is only read and the shard is a fresh LMDB.
TEST_F(MergeQuarantineTest, AFirstBatchWithAForgedFreeListIsCopiedIntoAFreshShard) {
  const std::string stream = WriteStream("m", 5000, "v");
  uint64_t live = 0;
  ASSERT_EQ(testing::ForgeFreeListOntoLivePage(stream + "/m", "data", &live), "");
  const uint64_t sequence = StageStream(stream, "test/forged");
  MergeReport report;
  const Status s = Merge(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.batches, 1u);
  EXPECT_FALSE(IsStaged(sequence));
  // The rows the batch kept after the deletes before the forgery, each with its value.
  int found = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::string value = Lookup("m", "key-" + std::to_string(i));
    if (value == "<not found>") continue;
    EXPECT_EQ(value, "v-" + std::to_string(i));
    ++found;
  }
  EXPECT_GT(found, 0);
  EXPECT_LT(found, 5000);
  // The shard is the node's own file: its free list is sound.
  const Status checked = CheckLmdbFile(runtime_->home().ShardPath("m"));
  EXPECT_TRUE(checked.ok()) << checked.message();
}

TEST_F(MergeQuarantineTest, ABatchFailingEveryAttemptIsQuarantinedAndHoldsBackOnlyItsMaps) {
  // m written with another key scheme: every merge of it refuses the layout (kInvalidArgument).
  const uint64_t bad = StageStream(WriteStream("m", 10, "bad", StateMapSection("m", "direct")), "test/bad");
  const uint64_t later_m = StageStream(WriteStream("m", 10, "later"), "test/later-m");
  const uint64_t other = StageStream(WriteStream("d", 10, "other"), "test/other");
  for (int attempt = 1; attempt < kMaxMergeAttempts; ++attempt) {
    MergeReport report;
    const Status s = Merge(&report);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_TRUE(IsStaged(bad));
    EXPECT_TRUE(IsStaged(later_m));  // same map: waits behind it
    EXPECT_EQ(ReadMergeAttempts(StagedPath(bad)).count, attempt);
    EXPECT_EQ(report.failed.count(bad), 1u);
  }
  EXPECT_FALSE(IsStaged(other));  // another map: merged in the first run
  EXPECT_EQ(Lookup("d", "key-2"), "other-2");

  MergeReport report;
  const Status s = Merge(&report);
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.quarantined.size(), 1u);
  EXPECT_EQ(report.quarantined[0].name, StagingStore::BatchFileName(bad));
  EXPECT_NE(report.quarantined[0].reason.find("merge failed 3 times; last: "), std::string::npos);
  EXPECT_NE(report.quarantined[0].reason.find("written as"), std::string::npos) << report.quarantined[0].reason;
  EXPECT_FALSE(IsStaged(bad));
  EXPECT_TRUE(fs::exists(Quarantined(bad)));
  ASSERT_EQ(report.held.size(), 1u);
  EXPECT_EQ(report.held[0].sequence, later_m);
  EXPECT_EQ(report.held[0].map, "m");
  EXPECT_TRUE(IsStaged(later_m));
  EXPECT_FALSE(fs::exists(runtime_->home().ShardPath("m")));

  // What `planb stores` shows, from the home alone.
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  ASSERT_TRUE(InspectQuarantine(runtime_->home(), &quarantined, &held).ok());
  ASSERT_EQ(quarantined.size(), 1u);
  EXPECT_EQ(quarantined[0].maps, std::vector<std::string>{"m"});
  EXPECT_EQ(quarantined[0].reason, report.quarantined[0].reason);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].sequence, later_m);

  // Released by deleting it: the held batch merges.
  fs::remove(Quarantined(bad));
  MergeReport released;
  EXPECT_TRUE(Merge(&released).ok());
  EXPECT_FALSE(IsStaged(later_m));
  EXPECT_EQ(Lookup("m", "key-2"), "later-2");
}

// A batch whose part for one map fails (m written with another key scheme) still merges its other maps: d's rows
// arrive, later batches of d are not held, and only m waits, then goes to quarantine alone; its part for d is not
// merged twice when it is tried again.
TEST_F(MergeQuarantineTest, AFailingMapDoesNotHoldBackTheOtherMapsOfItsBatch) {
  const uint64_t both = StageStream(WriteBothMaps(StateMapSection("m", "direct") + StateMapSection("d", "direct")),
                                    "test/both");
  const uint64_t later_d = StageStream(WriteStream("d", 10, "later"), "test/later-d");
  const uint64_t later_m = StageStream(WriteStream("m", 10, "later"), "test/later-m");

  MergeReport report;
  Status s = Merge(&report);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("(the batch's other maps merged: d)"), std::string::npos) << s.message();
  EXPECT_TRUE(IsStaged(both));
  EXPECT_FALSE(IsStaged(later_d));  // d is not held behind the failing batch
  EXPECT_EQ(Lookup("d", "key-1"), "later-1");  // both's d row, then later_d's over it
  EXPECT_TRUE(IsStaged(later_m));  // m is
  ASSERT_EQ(report.held.size(), 1u);
  EXPECT_EQ(report.held[0].sequence, later_m);

  const ContentVersion d_version = ShardVersion("d");
  for (int attempt = 2; attempt <= kMaxMergeAttempts; ++attempt) {
    MergeReport again;
    (void)Merge(&again);
  }
  ASSERT_TRUE(fs::exists(Quarantined(both)));
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  ASSERT_TRUE(InspectQuarantine(runtime_->home(), &quarantined, &held).ok());
  ASSERT_EQ(quarantined.size(), 1u);
  EXPECT_EQ(quarantined[0].maps, std::vector<std::string>{"m"});  // d is not blocked by it
  EXPECT_EQ(Lookup("d", "key-1"), "later-1");  // both's d part was not merged again over later_d's
  EXPECT_EQ(ShardVersion("d"), d_version);
}

// A batch held back behind a quarantined map holds back the other maps it touches too.
TEST_F(MergeQuarantineTest, HoldingBackIsTransitive) {
  const uint64_t bad = StageStream(WriteStream("m", 10, "bad", StateMapSection("m", "direct")), "test/bad");
  for (int attempt = 0; attempt < kMaxMergeAttempts; ++attempt) {
    MergeReport report;
    (void)Merge(&report);
  }
  ASSERT_TRUE(fs::exists(Quarantined(bad)));
  const uint64_t both = StageStream(WriteBothMaps(kConfig), "test/both");
  const uint64_t only_d = StageStream(WriteStream("d", 10, "d"), "test/d");
  MergeReport report;
  EXPECT_TRUE(Merge(&report).ok());
  ASSERT_EQ(report.held.size(), 2u);
  EXPECT_EQ(report.held[0].sequence, both);
  EXPECT_EQ(report.held[1].sequence, only_d);
  EXPECT_EQ(report.held[1].map, "d");
  EXPECT_TRUE(IsStaged(only_d));
}

// The count survives the merger's death: it is written before each attempt. merge.abort aborts the process for
// one batch, as the LMDB assertion did; the run after the third death quarantines it without trying again.
TEST_F(MergeQuarantineTest, AMergerThatDiesOnABatchQuarantinesItAfterThreeDeaths) {
  const uint64_t bad = StageStream(WriteStream("m", 10, "v"), "test/abort-me");
  runtime_.reset();  // the child opens the home itself
  for (int death = 1; death <= kMaxMergeAttempts; ++death) {
    MergeInAChildThatDiesOnTheBatchToAbort();
  }
  runtime_ = Open();
  EXPECT_EQ(ReadMergeAttempts(StagedPath(bad)).count, 3);
  const uint64_t other = StageStream(WriteStream("d", 10, "other"), "test/other");
  ::setenv("PLANB_FAULT", "merge.abort:test/abort-me", 1);  // would abort again, were it tried
  MergeReport report;
  const Status s = Merge(&report);
  ::unsetenv("PLANB_FAULT");
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.quarantined.size(), 1u);
  EXPECT_NE(report.quarantined[0].reason.find("merge failed 3 times; last: the merging process died"),
            std::string::npos)
      << report.quarantined[0].reason;
  EXPECT_TRUE(fs::exists(Quarantined(bad)));
  EXPECT_FALSE(IsStaged(other));
  EXPECT_EQ(Lookup("d", "key-3"), "other-3");
}

// A death is recorded in one in-flight record per merge slot (merge_attempts.h), which the next attempt in that
// slot overwrites: the next run must count it before trying anything, or an older failing batch tried first would
// erase it. One slot (merge_threads = 1), so that every death is the dying batch's alone.
TEST_F(MergeQuarantineTest, ADeathIsCountedEvenWhenAnOlderFailingBatchIsTriedFirst) {
  // d written with another key scheme: every merge of it fails (counted), before the dying batch is tried.
  const uint64_t failing = StageStream(WriteStream("d", 10, "bad", StateMapSection("d", "hashed")), "test/failing");
  const uint64_t dying = StageStream(WriteStream("m", 10, "v"), "test/abort-me");
  runtime_.reset();  // the child opens the home itself
  for (int death = 1; death <= kMaxMergeAttempts; ++death) {
    MergeInAChildThatDiesOnTheBatchToAbort(/*threads=*/1);
    runtime_ = Open();
    if (death < kMaxMergeAttempts) {
      EXPECT_EQ(ReadMergeAttempts(StagedPath(failing)).count, death);
    } else {
      EXPECT_TRUE(fs::exists(Quarantined(failing)));  // its third failure, in the run that died the third time
    }
    EXPECT_EQ(ReadMergeAttempts(StagedPath(dying)).count, death);
    runtime_.reset();
  }
  runtime_ = Open();
  MergeReport report;
  const Status s = Merge(&report);
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.quarantined.size(), 1u);
  EXPECT_NE(report.quarantined[0].reason.find("merge failed 3 times; last: the merging process died"),
            std::string::npos)
      << report.quarantined[0].reason;
  EXPECT_TRUE(fs::exists(Quarantined(dying)));
}

// A merger that died with two batches in flight (the records its death left, written here as it wrote them)
// blames neither: both are merged alone from then on, so the dying one's next death is its own and counted, and
// the innocent one is never counted and merges.
TEST_F(MergeQuarantineTest, BatchesInFlightWhenTheMergerDiedAreMergedAloneAndOnlyTheirOwnDeathsCount) {
  const uint64_t dying = StageStream(WriteStream("m", 10, "v"), "test/abort-me");
  const uint64_t innocent = StageStream(WriteStream("d", 10, "innocent"), "test/innocent");
  ASSERT_TRUE(MarkMergeInFlight(StagedPath(dying), 0, /*slot=*/0).ok());
  ASSERT_TRUE(MarkMergeInFlight(StagedPath(innocent), 0, /*slot=*/1).ok());
  runtime_.reset();
  MergeInAChildThatDiesOnTheBatchToAbort();  // folds the two-batch death, then the dying batch dies alone
  runtime_ = Open();
  const MergeAttempts dying_attempts = ReadMergeAttempts(StagedPath(dying));
  EXPECT_EQ(dying_attempts.count, 1);
  EXPECT_TRUE(dying_attempts.alone);
  EXPECT_EQ(dying_attempts.last_error, "the merging process died during the merge");
  const MergeAttempts innocent_attempts = ReadMergeAttempts(StagedPath(innocent));
  EXPECT_EQ(innocent_attempts.count, 0);
  EXPECT_TRUE(innocent_attempts.alone);
  EXPECT_NE(innocent_attempts.last_error.find("died while 2 batches were merging"), std::string::npos)
      << innocent_attempts.last_error;
  EXPECT_TRUE(IsStaged(innocent));  // it waited: the dying batch ran alone before it
  MergeReport report;
  const Status s = Merge(&report);  // no fault now
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.batches, 2u);
  EXPECT_EQ(Lookup("m", "key-3"), "v-3");
  EXPECT_EQ(Lookup("d", "key-3"), "innocent-3");
  EXPECT_FALSE(fs::exists(StagedPath(innocent) + ".attempts"));
}

// Four maps, five batches each, staged interleaved and merged four at a time: every batch merges once, each map's
// batches in staging order (the last batch's values win, as it has the latest rows), and the report adds up.
TEST_F(MergeQuarantineTest, BatchesOfDifferentMapsMergeSideBySide) {
  const std::string config = StateMapSection("m", "hashed") + StateMapSection("d", "direct") +
                             StateMapSection("e", "hashed") + StateMapSection("f", "direct");
  runtime_ = Open(config);
  const std::vector<std::string> maps = {"m", "d", "e", "f"};
  for (int round = 0; round < 5; ++round) {
    for (const std::string& map : maps) {
      StageStream(WriteStream(map, 50, map + "round" + std::to_string(round), config),
                  "test/" + map + "/" + std::to_string(round));
    }
  }
  MergeReport report;
  const Status s = MergeProcessor(*runtime_, UnzipLimits{}, /*threads=*/4).MergePending(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.batches, 20u);
  EXPECT_EQ(report.merged.size(), 20u);
  EXPECT_TRUE(report.failed.empty());
  std::vector<StagedBatch> left;
  ASSERT_TRUE(StagingStore(runtime_->home()).List(&left).ok());
  EXPECT_TRUE(left.empty());
  for (const std::string& map : maps) {
    EXPECT_EQ(report.rows_merged[map], 250u) << map;
    EXPECT_EQ(Lookup(map, "key-49"), map + "round4-49") << map;
  }
}

// A shard cut short is this node's problem, not the batch's: the batch stays staged however often it is tried,
// and merges once the shard is repaired.
TEST_F(MergeQuarantineTest, ATruncatedShardIsNotCountedAgainstTheBatch) {
  StageStream(WriteStream("m", 10, "first"), "test/first");
  MergeReport first;
  ASSERT_TRUE(Merge(&first).ok());
  const uint64_t healthy = StageStream(WriteStream("m", 10, "healthy"), "test/healthy");
  const std::string data = runtime_->home().ShardPath("m") + "/data.mdb";
  runtime_.reset();  // the shard is closed before it is cut
  const std::string intact = ReadFile(data);
  fs::resize_file(data, intact.size() / 2);
  runtime_ = Open();
  for (int run = 1; run <= kMaxMergeAttempts + 1; ++run) {
    MergeReport report;
    const Status s = Merge(&report);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(runtime_->home().ShardPath("m")), std::string::npos) << s.message();
    EXPECT_TRUE(report.quarantined.empty()) << "run " << run << ": " << report.quarantined[0].reason;
    EXPECT_EQ(report.failed.count(healthy), 1u);
    EXPECT_TRUE(IsStaged(healthy));
    EXPECT_EQ(ReadMergeAttempts(StagedPath(healthy)).count, 0);
  }
  EXPECT_FALSE(fs::exists(Quarantined(healthy)));
  runtime_.reset();
  testing::WriteFile(data, intact);
  runtime_ = Open();
  MergeReport repaired;
  const Status s = Merge(&repaired);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(repaired.batches, 1u);
  EXPECT_EQ(Lookup("m", "key-3"), "healthy-3");
}

// A config that no longer matches the shard (m's scheme changed) is the node's problem too.
TEST_F(MergeQuarantineTest, AConfigThatDoesNotMatchTheShardIsNotCountedAgainstTheBatch) {
  StageStream(WriteStream("m", 10, "first"), "test/first");
  MergeReport first;
  ASSERT_TRUE(Merge(&first).ok());
  const uint64_t healthy = StageStream(WriteStream("m", 10, "healthy"), "test/healthy");
  runtime_.reset();
  runtime_ = Open(StateMapSection("m", "direct") + StateMapSection("d", "direct"));
  for (int run = 1; run <= kMaxMergeAttempts + 1; ++run) {
    MergeReport report;
    const Status s = Merge(&report);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_TRUE(report.quarantined.empty()) << "run " << run << ": " << report.quarantined[0].reason;
    EXPECT_TRUE(IsStaged(healthy));
    EXPECT_EQ(ReadMergeAttempts(StagedPath(healthy)).count, 0);
  }
  runtime_.reset();
  runtime_ = Open();  // the config repaired
  MergeReport repaired;
  const Status s = Merge(&repaired);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Lookup("m", "key-3"), "healthy-3");
}

// A batch bigger than the map's max_store_size (a peer's upload is not checked for room) can never merge: its
// MDB_MAP_FULL counts, so it is quarantined with a reason saying what to do, and stops holding the map forever.
TEST_F(MergeQuarantineTest, ABatchThatOverflowsTheMapIsQuarantinedSayingRaiseMaxStoreSize) {
  const std::string small = "[map.m]\ntype = state\nscheme = hashed\nmax_store_size = 1MiB\n" + StateMapSection("d", "direct");
  runtime_.reset();
  runtime_ = Open(small);
  const std::string padding(200, 'v');
  std::unique_ptr<Runtime> writer_runtime;
  ASSERT_TRUE(OpenTestRuntime(dir_ / "big", kConfig, &writer_runtime).ok());
  StreamWriter writer(writer_runtime->catalog(), dir_ / "big/stream");
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(writer.Add("m", StateRecord("key-" + std::to_string(i), padding)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  const uint64_t big = StageStream(dir_ / "big/stream", "test/big");
  const uint64_t other = StageStream(WriteStream("d", 10, "other"), "test/other");
  for (int attempt = 1; attempt < kMaxMergeAttempts; ++attempt) {
    MergeReport report;
    const Status s = Merge(&report);
    EXPECT_EQ(s.code(), Code::kFull) << s.message();
    EXPECT_NE(s.message().find("raise max_store_size"), std::string::npos) << s.message();
    EXPECT_EQ(ReadMergeAttempts(StagedPath(big)).count, attempt);
  }
  EXPECT_FALSE(IsStaged(other));
  MergeReport report;
  const Status s = Merge(&report);
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.quarantined.size(), 1u);
  EXPECT_EQ(report.quarantined[0].name, StagingStore::BatchFileName(big));
  EXPECT_NE(report.quarantined[0].reason.find("MDB_MAP_FULL"), std::string::npos) << report.quarantined[0].reason;
  EXPECT_NE(report.quarantined[0].reason.find("raise max_store_size"), std::string::npos)
      << report.quarantined[0].reason;
  EXPECT_TRUE(fs::exists(Quarantined(big)));
}

TEST_F(MergeQuarantineTest, AReasonIsOneEscapedLineOnDiskAndKeptAsGivenForTheLogLine) {
  const std::string zip = StagedPath(StageStream(WriteStream("m", 3, "v"), "reason-batch"));
  QuarantinedBatch batch;
  const std::string reason = "bad\nforged line\\" + std::string(2000, 'x');
  ASSERT_TRUE(QuarantineBatch(runtime_->home(), zip, {"m"}, true, reason, &batch).ok());
  EXPECT_EQ(batch.reason, reason);  // the caller's Log() escapes it once
  std::vector<QuarantinedBatch> listed;
  ASSERT_TRUE(ListQuarantine(runtime_->home(), &listed).ok());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].reason.find('\n'), std::string::npos);
  EXPECT_EQ(listed[0].reason.rfind("bad\\nforged line\\\\", 0), 0u) << listed[0].reason;
  EXPECT_LT(listed[0].reason.size(), 1100u);
}

}  // namespace
}  // namespace planb
