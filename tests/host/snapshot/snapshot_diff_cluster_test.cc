// Snapshot diffs against real storage nodes (`planb serve` child processes): a reader holding a snapshot asks
// SNAPSHOT_SINCE, gets the batches merged since, merges them into a copy of its snapshot and must end with exactly
// the node's rows; a diff that does not check out, or a node that cannot make one, leaves the whole snapshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "host/common/boot_id.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/snapshot/unsynced_snapshot.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"
#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kMap[] = "country_to_capital";
constexpr char kDurations[] =
    "request_timeout = 2s\nmin_time_to_keep_snapshots = 0s\nsnapshot_retry_fetch_interval = 0s\n"
    "min_time_to_keep_env_open = 1h\n";

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The byte count in the first "<prefix>... (N bytes)" line of a node's log; 0 when there is none.
uint64_t OfferedBytes(const std::string& log, const std::string& prefix) {
  const size_t at = log.find(prefix);
  const size_t open = at == std::string::npos ? at : log.find(" (", at);
  return open == std::string::npos ? 0 : std::stoull(log.substr(open + 2));
}

// A reference-data file of `count` rows of kMap alone (keys "Land N"), at a time after the example data's.
std::string WriteCapitals(const std::string& path, int first, int count) {
  std::ofstream out(path);
  out << "<referenceData xmlns=\"reference-data:2\">\n";
  for (int i = first; i < first + count; ++i) {
    out << "<reference><map>" << kMap << "</map><time>2025-01-01T00:00:00Z</time><key>Land " << i
        << "</key><value>Capital " << i << "</value></reference>\n";
  }
  out << "</referenceData>\n";
  return path;
}

class SnapshotDiffClusterTest : public ::testing::Test {
 protected:
  // One storage node, started with `env`, holding the example reference data.
  void StartNode(const std::vector<std::string>& env = {}) {
    ASSERT_TRUE(cluster_.StartNode(0, env)) << cluster_.process(0).log();
    ASSERT_TRUE(cluster_.LoadAndWaitMerged({ExampleDataFiles()[0]}));
    const Status s = OpenTestRuntime(dir_.path(), ReaderConfig({cluster_.endpoint(0)}, kDurations, ExampleMapSections()),
                                     &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    manager_ = std::make_unique<SnapshotManager>(runtime_->home(), runtime_->config().cluster, runtime_->catalog(),
                                                 context_);
  }
  void TearDown() override {
    manager_.reset();
    runtime_.reset();
  }
  std::shared_ptr<const OpenSnapshot> Refreshed() {
    bool changed = false;
    const Status s = manager_->Refresh(kMap, &changed);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(changed);
    std::shared_ptr<const OpenSnapshot> snapshot;
    EXPECT_TRUE(manager_->Current(kMap, StaleSnapshot::kUseCurrent, &snapshot).ok());
    return snapshot;
  }
  std::vector<DumpedRow> NodeRows() {
    std::vector<DumpedRow> rows;
    const Status s = DumpShardDir(runtime_->catalog(), kMap, cluster_.home(0) + "/shards/" + kMap, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }
  // The reader fetches its first snapshot; then 50 rows more of kMap are loaded and merged on the node.
  void FetchThenLoadMore() {
    std::shared_ptr<const OpenSnapshot> first;
    ASSERT_TRUE(manager_->Current(kMap, StaleSnapshot::kFetchNow, &first).ok());
    ASSERT_TRUE(cluster_.LoadAndWaitMerged({WriteCapitals(dir_.path() + "/more.xml", 0, 50)}));
  }
  // Refreshes: the node has then offered `diffs` diffs and `wholes` whole snapshots in all, and the snapshot
  // installed holds the node's rows at its version.
  void ExpectRefreshEndsWithTheNodesRows(int diffs, int wholes) {
    const auto refreshed = Refreshed();
    ASSERT_NE(refreshed, nullptr);
    const std::string log = cluster_.process(0).log();
    EXPECT_EQ(Count(log, "offering snapshot diff of "), diffs) << log;
    EXPECT_EQ(Count(log, "offering snapshot of "), wholes) << log;
    EXPECT_EQ(Rows(*refreshed), NodeRows());
    EXPECT_EQ(refreshed->version(), NodeVersion());
  }
  static std::vector<DumpedRow> Rows(const OpenSnapshot& snapshot) {
    std::vector<DumpedRow> rows;
    EXPECT_TRUE(DumpMap(*snapshot.env(), &rows).ok());
    return rows;
  }
  // The node's version of kMap now.
  ContentVersion NodeVersion() {
    std::shared_ptr<const MapPlugins> plugins;
    EXPECT_TRUE(runtime_->catalog().Get(kMap, &plugins).ok());
    std::shared_ptr<MapEnv> env;
    EXPECT_TRUE(MapEnv::Open(cluster_.home(0) + "/shards/" + kMap, plugins, MapEnv::Mode::kOpenExisting,
                             MapEnv::kSnapshotFlags, &env)
                    .ok());
    Txn txn;
    ContentVersion version;
    EXPECT_TRUE(txn.Begin(env->env(), MDB_RDONLY).ok());
    EXPECT_TRUE(ReadContentVersion(txn.get(), env->meta(), &version).ok());
    return version;
  }

  ClusterFixture cluster_{1};
  TempDir dir_;
  zmq::context_t context_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<SnapshotManager> manager_;
};

TEST_F(SnapshotDiffClusterTest, AReaderBehindGetsTheBatchesSinceAndEndsWithTheNodesRows) {
  StartNode();
  std::shared_ptr<const OpenSnapshot> first;
  ASSERT_TRUE(manager_->Current(kMap, StaleSnapshot::kFetchNow, &first).ok());
  ASSERT_NE(first, nullptr);
  // Two more loads: one batch of this map alone (sent as received) and one of several maps (only this map's part
  // is sent), with rows of keys the snapshot holds.
  ASSERT_TRUE(cluster_.LoadAndWaitMerged({WriteCapitals(dir_.path() + "/more.xml", 0, 50)}));
  ASSERT_TRUE(cluster_.LoadAndWaitMerged({ExampleDataFiles()[2]}));
  const auto second = Refreshed();
  ASSERT_NE(second, nullptr);
  const std::string log = cluster_.process(0).log();
  EXPECT_EQ(Count(log, "offering snapshot diff of country_to_capital from version " + first->version().ToString()),
            1)
      << log;
  EXPECT_EQ(Count(log, "offering snapshot of "), 1) << log;  // the first fetch only
  EXPECT_EQ(second->version(), NodeVersion());
  EXPECT_EQ(second->version().batches, first->version().batches + 2);
  EXPECT_EQ(Rows(*second), NodeRows());
  std::string value;
  EXPECT_EQ(GetValue(*second->env(), "Land 7", &value), Code::kOk);
  EXPECT_EQ(value, "Capital 7");
  // A snapshot directory holds data.mdb, where it came from and (installed unsynced) the boot it was written in;
  // no lock file and no scratch.
  for (const auto& entry : std::filesystem::directory_iterator(second->path())) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::AnyOf("data.mdb", "source", kUnsyncedBootFile));
  }
  std::string boot;
  ASSERT_TRUE(CurrentBootId(&boot).ok());
  EXPECT_EQ(ReadFile(second->path() + "/" + kUnsyncedBootFile), boot + "\n");
  // The diff is far smaller than the whole snapshot was.
  EXPECT_LT(OfferedBytes(log, "offering snapshot diff of "), OfferedBytes(log, "offering snapshot of ") / 2);

  // Refreshed again with nothing new: not modified; with one more batch: a diff from the diffed snapshot.
  bool changed = true;
  ASSERT_TRUE(manager_->Refresh(kMap, &changed).ok());
  EXPECT_FALSE(changed);
  ASSERT_TRUE(cluster_.LoadAndWaitMerged({WriteCapitals(dir_.path() + "/last.xml", 100, 5)}));
  const auto third = Refreshed();
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot diff of "), 2);
  EXPECT_EQ(Rows(*third), NodeRows());
}

TEST_F(SnapshotDiffClusterTest, ADiffThatDoesNotCheckOutIsReplacedByTheSameNodesWholeSnapshot) {
  StartNode({"PLANB_FAULT=snapshot_diff.corrupt"});
  FetchThenLoadMore();
  // The first fetch, the diff, and the whole snapshot asked for after it.
  ExpectRefreshEndsWithTheNodesRows(/*diffs=*/1, /*wholes=*/2);
  // Nothing of the refused diff is left beside the snapshots.
  for (const std::string& entry : SnapshotEntries(runtime_->home().root(), kMap)) {
    EXPECT_THAT(entry, Not(HasSubstr("fetch-"))) << entry;
  }
}

// A diff installs its snapshot unsynced, marked with the boot: after a reboot (another boot id in the mark) the
// snapshot may have lost pages, so a reader (a new process) discards it and fetches again.
TEST_F(SnapshotDiffClusterTest, ADiffedSnapshotFromAnEarlierBootIsDiscardedAndFetchedAgain) {
  StartNode();
  FetchThenLoadMore();
  ExpectRefreshEndsWithTheNodesRows(/*diffs=*/1, /*wholes=*/1);
  std::shared_ptr<const OpenSnapshot> diffed;
  ASSERT_TRUE(manager_->Current(kMap, StaleSnapshot::kUseCurrent, &diffed).ok());
  const std::string path = diffed->path();
  diffed.reset();
  manager_.reset();
  std::ofstream(path + "/" + kUnsyncedBootFile, std::ios::trunc) << "00000000-0000-0000-0000-000000000000\n";

  manager_ = std::make_unique<SnapshotManager>(runtime_->home(), runtime_->config().cluster, runtime_->catalog(),
                                               context_);
  std::shared_ptr<const OpenSnapshot> fetched;
  const Status s = manager_->Current(kMap, StaleSnapshot::kUseCurrent, &fetched);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_NE(fetched, nullptr);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_NE(fetched->path(), path);
  EXPECT_TRUE(CheckUnsyncedSnapshot(fetched->path()).ok());
  // Fetched again (from the snapshot before the diff, still on disk: by another diff).
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot"), 3);
  EXPECT_EQ(fetched->version(), NodeVersion());
  EXPECT_EQ(Rows(*fetched), NodeRows());
}

// The maintenance pass syncs a diffed snapshot once the kernel has had time to write it back, and unmarks it.
TEST_F(SnapshotDiffClusterTest, CleanupSyncsADiffedSnapshotOnceItIsAMinuteOld) {
  StartNode();
  FetchThenLoadMore();
  ExpectRefreshEndsWithTheNodesRows(/*diffs=*/1, /*wholes=*/1);
  std::shared_ptr<const OpenSnapshot> diffed;
  ASSERT_TRUE(manager_->Current(kMap, StaleSnapshot::kUseCurrent, &diffed).ok());
  const std::string mark = diffed->path() + "/" + kUnsyncedBootFile;
  CleanupReport report;
  ASSERT_TRUE(manager_->Cleanup(&report).ok());
  EXPECT_TRUE(report.synced.empty());
  EXPECT_TRUE(std::filesystem::exists(mark));

  std::filesystem::last_write_time(mark, std::filesystem::last_write_time(mark) - std::chrono::seconds(61));
  ASSERT_TRUE(manager_->Cleanup(&report).ok());
  EXPECT_THAT(report.synced, ::testing::ElementsAre(diffed->path()));
  EXPECT_FALSE(std::filesystem::exists(mark));
  EXPECT_EQ(Rows(*diffed), NodeRows());
}

TEST_F(SnapshotDiffClusterTest, ANodeThatKeepsNoBatchesSendsTheWholeSnapshot) {
  cluster_.top_level_extra = "batch_retention = 0s\n";
  StartNode();
  FetchThenLoadMore();
  ExpectRefreshEndsWithTheNodesRows(/*diffs=*/0, /*wholes=*/2);
}

TEST_F(SnapshotDiffClusterTest, BatchesNoLongerRetainedLeaveTheWholeSnapshot) {
  StartNode();
  FetchThenLoadMore();
  // The batch since pruned from retained/ (batch_retention passed): the node cannot name its rows any more.
  for (const auto& entry : std::filesystem::directory_iterator(cluster_.home(0) + "/retained")) {
    std::filesystem::remove(entry.path());
  }
  ExpectRefreshEndsWithTheNodesRows(/*diffs=*/0, /*wholes=*/2);
}

}  // namespace
}  // namespace planb::testing
