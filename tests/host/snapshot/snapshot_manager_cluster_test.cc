// SnapshotManager against real storage nodes: `planb serve` child processes that loaded the example data, with
// nodes stopped and fault points (PLANB_FAULT) to prove fail-over, errors and what stays on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host/snapshot/snapshot_manager.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"
#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";
// A node that is down costs the reader one request timeout: long enough for a loaded machine to copy and zip a
// small shard, short enough for the tests.
constexpr char kTimeout[] = "request_timeout = 2s\n";
constexpr char kFresh[] =
    "min_time_to_keep_snapshots = 1h\nsnapshot_retry_fetch_interval = 1h\nmin_time_to_keep_env_open = 1h\n";
constexpr char kStale[] =
    "min_time_to_keep_snapshots = 0s\nsnapshot_retry_fetch_interval = 1h\nmin_time_to_keep_env_open = 1h\n";
constexpr char kAlwaysRefresh[] =
    "min_time_to_keep_snapshots = 0s\nsnapshot_retry_fetch_interval = 0s\nmin_time_to_keep_env_open = 1h\n";

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The size in "offering snapshot of MAP at version V (N bytes)" of a node's log; 0 when there is none.
uint64_t OfferedBytes(const std::string& log) {
  const size_t at = log.find("offering snapshot of ");
  const size_t open = at == std::string::npos ? at : log.find(" (", at);
  return open == std::string::npos ? 0 : std::stoull(log.substr(open + 2));
}

class SnapshotClusterTest : public ::testing::Test {
 protected:
  // Both nodes up (node1 with `node1_env`), the reference data (and `more` files) loaded and merged on both.
  void StartCluster(const std::vector<std::string>& node1_env = {}, const std::vector<std::string>& more = {}) {
    ASSERT_TRUE(cluster_.StartNode(0, node1_env)) << cluster_.process(0).log();
    PLANB_ASSERT_NODE_STARTS(cluster_, 1);
    std::vector<std::string> files = {ExampleDataFiles()[0]};
    files.insert(files.end(), more.begin(), more.end());
    const ProcessResult load = cluster_.Load(files);
    ASSERT_EQ(load.exit_code, 0) << load.err;
    ASSERT_TRUE(cluster_.WaitMerged(0)) << cluster_.process(0).log();
    ASSERT_TRUE(cluster_.WaitMerged(1)) << cluster_.process(1).log();
  }
  void Open(const std::string& durations) {
    manager_.reset();
    runtime_.reset();
    const std::string config = ReaderConfig({cluster_.endpoint(0), cluster_.endpoint(1)}, kTimeout + durations,
                                            ExampleMapSections());
    const Status s = OpenTestRuntime(dir_.path(), config, &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    manager_ = std::make_unique<SnapshotManager>(runtime_->home(), runtime_->config().cluster, runtime_->catalog(),
                                                 context_);
  }
  void TearDown() override {
    manager_.reset();
    runtime_.reset();
  }
  std::string home() const { return runtime_->home().root(); }
  std::shared_ptr<const OpenSnapshot> Current(StaleSnapshot stale = StaleSnapshot::kFetchNow) {
    std::shared_ptr<const OpenSnapshot> snapshot;
    const Status s = manager_->Current(kMap, stale, &snapshot);
    EXPECT_TRUE(s.ok()) << s.message();
    return snapshot;
  }
  static std::string Lookup(const OpenSnapshot& snapshot, const std::string& key) {
    std::string value;
    return GetValue(*snapshot.env(), key, &value) == Code::kOk ? value : "(missing)";
  }
  // The rows of node `i`'s shard of kMap (read-only: the node has merged everything and writes nothing now).
  std::vector<DumpedRow> NodeRows(int i) {
    std::vector<DumpedRow> rows;
    const Status s = DumpShardDir(runtime_->catalog(), kMap, cluster_.home(i) + "/shards/" + kMap, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }
  static std::vector<DumpedRow> Rows(const OpenSnapshot& snapshot) {
    std::vector<DumpedRow> rows;
    EXPECT_TRUE(DumpMap(*snapshot.env(), &rows).ok());
    return rows;
  }
  // Only complete snapshots and the markers are left in snapshots/<map>/.
  void ExpectOnlyCompleteSnapshots() {
    for (const std::string& entry : SnapshotEntries(home(), kMap)) {
      EXPECT_TRUE(entry == ".fetch.lock" || entry == ".failed" || entry == ".checked" ||
                  entry.find_first_not_of("0123456789") == std::string::npos)
          << entry;
    }
  }

  ClusterFixture cluster_{2};
  TempDir dir_;
  zmq::context_t context_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<SnapshotManager> manager_;
};

TEST_F(SnapshotClusterTest, FetchesTheShardFromTheFirstNode) {
  StartCluster();
  Open(kFresh);
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(Lookup(*snapshot, "Austria"), "Vienna");
  EXPECT_EQ(Rows(*snapshot), NodeRows(0));
  EXPECT_FALSE(snapshot->version().empty());
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot of country_to_capital"), 1);
  EXPECT_EQ(Count(cluster_.process(1).log(), "offering snapshot"), 0);
  EXPECT_THAT(SnapshotEntries(home(), kMap), ElementsAre(".fetch.lock", std::to_string(snapshot->create_time_ms())));
}

TEST_F(SnapshotClusterTest, ATruncatedSnapshotIsDiscardedAndFetchedAgain) {
  StartCluster();
  Open(kFresh);
  int64_t first_time = 0;
  {
    const auto first = Current();
    ASSERT_NE(first, nullptr);
    first_time = first->create_time_ms();
  }
  // Another process (a new manager) finds the snapshot cut short: it must not fault reading it (SIGBUS) but
  // remove it and fetch a fresh one, although the snapshot is young enough to be served.
  const std::string data = home() + "/snapshots/" + kMap + "/" + std::to_string(first_time) + "/data.mdb";
  fs::resize_file(data, 8192);
  Open(kFresh);
  const auto second = Current();
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second->create_time_ms(), first_time);
  EXPECT_EQ(Lookup(*second, "Austria"), "Vienna");
  EXPECT_EQ(Rows(*second), NodeRows(0));
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_EQ(CompleteSnapshots(home(), kMap), std::vector<std::string>{std::to_string(second->create_time_ms())});
  ExpectOnlyCompleteSnapshots();
}

TEST_F(SnapshotClusterTest, ATruncatedNewestSnapshotIsNotReplacedByAnOlderOneWithoutAFetch) {
  StartCluster();
  Open(kAlwaysRefresh);
  int64_t first_time = 0;
  {
    const auto first = Current();
    ASSERT_NE(first, nullptr);
    first_time = first->create_time_ms();
  }
  const ProcessResult load = cluster_.Load({ExampleDataFiles()[2]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster_.WaitMerged(0)) << cluster_.process(0).log();
  bool changed = false;
  ASSERT_TRUE(manager_->RefreshIfDue(kMap, &changed).ok());
  ASSERT_TRUE(changed);
  const std::vector<std::string> both = CompleteSnapshots(home(), kMap);
  ASSERT_EQ(both.size(), 2u);
  fs::resize_file(home() + "/snapshots/" + kMap + "/" + both.back() + "/data.mdb", 8192);

  // Fresh for an hour: the older snapshot would be served as it is, but the damaged newest forces a fetch.
  Open(kFresh);
  const auto current = Current(StaleSnapshot::kUseCurrent);
  ASSERT_NE(current, nullptr);
  EXPECT_NE(current->create_time_ms(), first_time);
  EXPECT_NE(std::to_string(current->create_time_ms()), both.back());
  EXPECT_EQ(Rows(*current), NodeRows(0));
  EXPECT_EQ(manager_->fetches_started(), 1u);
}

TEST_F(SnapshotClusterTest, FailsOverToTheSecondNodeWhenTheFirstIsDown) {
  StartCluster();
  ASSERT_EQ(cluster_.process(0).Stop(), 0);
  Open(kFresh);
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(Rows(*snapshot), NodeRows(1));
  EXPECT_EQ(Count(cluster_.process(1).log(), "offering snapshot of country_to_capital"), 1);
  EXPECT_FALSE(fs::exists(home() + "/snapshots/" + kMap + "/.failed"));
}

TEST_F(SnapshotClusterTest, WithBothNodesDownTheOldSnapshotKeepsServing) {
  StartCluster();
  Open(kStale);
  const auto first = Current();
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(cluster_.process(0).Stop(), 0);
  ASSERT_EQ(cluster_.process(1).Stop(), 0);

  bool changed = true;
  Status s = manager_->RefreshIfDue(kMap, &changed);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  // Both are down: each refuses the connection, named at once rather than after request_timeout.
  EXPECT_EQ(s.message(), "snapshot of country_to_capital: no storage node could provide one: node1 (connection "
                         "refused by " + cluster_.endpoint(0) + "), node2 (connection refused by " +
                         cluster_.endpoint(1) + ")");
  EXPECT_FALSE(changed);
  EXPECT_TRUE(fs::exists(home() + "/snapshots/" + kMap + "/.failed"));
  EXPECT_EQ(manager_->fetches_started(), 2u);

  // Within snapshot_retry_fetch_interval nobody asks again: the old snapshot serves either way.
  EXPECT_EQ(Current(StaleSnapshot::kFetchNow).get(), first.get());
  EXPECT_EQ(Current(StaleSnapshot::kUseCurrent).get(), first.get());
  EXPECT_EQ(manager_->fetches_started(), 2u);

  // Once the interval has passed, kFetchNow tries again, fails again, and still serves the old one.
  Open(kAlwaysRefresh);
  const auto again = Current(StaleSnapshot::kFetchNow);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->create_time_ms(), first->create_time_ms());
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_EQ(CompleteSnapshots(home(), kMap).size(), 1u);
  ExpectOnlyCompleteSnapshots();
}

TEST_F(SnapshotClusterTest, NotModifiedMarksTheSnapshotCheckedAndNewDataReplacesIt) {
  StartCluster();
  Open(kAlwaysRefresh);
  auto first = Current();
  ASSERT_NE(first, nullptr);
  bool changed = true;
  Status s = manager_->RefreshIfDue(kMap, &changed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(changed);
  EXPECT_THAT(SnapshotEntries(home(), kMap),
              ElementsAre(".checked", ".fetch.lock", std::to_string(first->create_time_ms())));
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot"), 1);  // the second answer was "not modified"

  // New data on the nodes: the next refresh installs a newer snapshot; cleanup removes the old one once released.
  const ProcessResult load = cluster_.Load({ExampleDataFiles()[2]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster_.WaitMerged(0)) << cluster_.process(0).log();
  s = manager_->RefreshIfDue(kMap, &changed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(changed);
  const auto second = Current(StaleSnapshot::kUseCurrent);
  ASSERT_NE(second, nullptr);
  EXPECT_GT(second->create_time_ms(), first->create_time_ms());
  EXPECT_NE(second->version(), first->version());
  EXPECT_EQ(Rows(*second), NodeRows(0));
  EXPECT_EQ(CompleteSnapshots(home(), kMap).size(), 2u);

  CleanupReport report;
  ASSERT_TRUE(manager_->Cleanup(&report).ok());
  EXPECT_TRUE(report.deleted.empty());  // `first` is still held
  const std::string first_path = first->path();
  EXPECT_EQ(Lookup(*first, "Austria"), "Vienna");
  first.reset();
  ASSERT_TRUE(manager_->Cleanup(&report).ok());
  EXPECT_THAT(report.deleted, ElementsAre(first_path));
  EXPECT_THAT(CompleteSnapshots(home(), kMap), ElementsAre(std::to_string(second->create_time_ms())));
}

TEST_F(SnapshotClusterTest, AMapWithoutDataOnAnyNodeIsNotFound) {
  StartCluster();
  Open(kFresh);
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current("employeeidtooffice", StaleSnapshot::kFetchNow, &snapshot);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("snapshot of employeeidtooffice: no storage node has data of it: node1 ("));
  EXPECT_THAT(s.message(), HasSubstr("), node2 ("));
  EXPECT_TRUE(CompleteSnapshots(home(), "employeeidtooffice").empty());
}

TEST_F(SnapshotClusterTest, ManyThreadsWithoutASnapshotCauseOneFetch) {
  StartCluster();
  Open(kFresh);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const OpenSnapshot>> got(kThreads);
  std::vector<Status> statuses(kThreads);
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      statuses[i] = manager_->Current(kMap, StaleSnapshot::kFetchNow, &got[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].message();
    EXPECT_EQ(got[i].get(), got[0].get());
  }
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot"), 1);
  EXPECT_EQ(CompleteSnapshots(home(), kMap).size(), 1u);
}

// A fault on node1 makes its snapshot unusable: the reader falls back to node2 and keeps nothing of node1's.
class SnapshotFaultTest : public SnapshotClusterTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(SnapshotFaultTest, AFaultyFirstNodeFailsOverToTheSecond) {
  // Rows that do not compress well, so that the zip spans several of the node's 1 MiB chunks: a node dying after
  // the first one is then a transfer cut short, whatever reached the reader before it died.
  std::vector<std::pair<std::string, std::string>> rows = NumberedRows(0, 100000);
  for (auto& [key, value] : rows) value += "-" + std::to_string(XXH3_64bits(value.data(), value.size()));
  const std::string big = dir_ / "big.xml";
  WriteFile(big, ReferenceXml(kMap, rows));
  StartCluster({std::string("PLANB_FAULT=") + GetParam()}, {big});
  Open(kFresh);
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(Rows(*snapshot), NodeRows(1));
  EXPECT_EQ(Count(cluster_.process(0).log(), "offering snapshot"), 1);
  EXPECT_EQ(Count(cluster_.process(1).log(), "offering snapshot"), 1);
  EXPECT_GT(OfferedBytes(cluster_.process(1).log()), uint64_t{1} << 20);
  EXPECT_EQ(CompleteSnapshots(home(), kMap).size(), 1u);
  ExpectOnlyCompleteSnapshots();
}

INSTANTIATE_TEST_SUITE_P(FaultPoints, SnapshotFaultTest,
                         ::testing::Values("snapshot.corrupt", "snapshot.truncate", "snapshot.mid_transfer"));

TEST_F(SnapshotClusterTest, CorruptSnapshotsFromEveryNodeAreAnErrorAndLeaveNothing) {
  ASSERT_TRUE(cluster_.StartNode(0, {"PLANB_FAULT=snapshot.corrupt"})) << cluster_.process(0).log();
  ASSERT_TRUE(cluster_.StartNode(1, {"PLANB_FAULT=snapshot.corrupt"})) << cluster_.process(1).log();
  const ProcessResult load = cluster_.Load({ExampleDataFiles()[0]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster_.WaitMerged(0));
  ASSERT_TRUE(cluster_.WaitMerged(1));
  Open(kFresh);
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current(kMap, StaleSnapshot::kFetchNow, &snapshot);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("snapshot of country_to_capital: no storage node could provide one: node1 "
                                     "(checksum mismatch: "));
  EXPECT_THAT(s.message(), HasSubstr("node2 (checksum mismatch: "));
  EXPECT_THAT(SnapshotEntries(home(), kMap), ElementsAre(".failed", ".fetch.lock"));
}

}  // namespace
}  // namespace planb::testing
