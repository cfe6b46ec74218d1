// SnapshotManager on real snapshot directories (copies of a shard made by a real merge), with storage nodes that
// are dead endpoints or scripted ROUTERs; real `planb serve` nodes are in snapshot_manager_cluster_test.cc.
#include "host/snapshot/snapshot_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host/common/iso_time.h"
#include "support/map_fixture.h"
#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Snapshots stay fresh, failures are not retried soon, environments stay open: nothing happens by itself.
constexpr char kFresh[] =
    "min_time_to_keep_snapshots = 1h\nsnapshot_retry_fetch_interval = 1h\nmin_time_to_keep_env_open = 1h\n";
// Every snapshot is due for a refresh at once; a failed fetch blocks retries for an hour.
constexpr char kStale[] =
    "min_time_to_keep_snapshots = 0s\nsnapshot_retry_fetch_interval = 1h\nmin_time_to_keep_env_open = 1h\n";
// A create time long ago (2001).
constexpr int64_t kLongAgo = 1000000000000;

class SnapshotManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = MakeShard(dir_ / "source", NumberedRows(0, 500), &shard_, &version_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void TearDown() override { Close(); }

  // The reader's runtime and a manager on it: `extra` top-level config lines, nodes at `endpoints` (default one
  // dead node).
  void Open(const std::string& extra, std::vector<std::string> endpoints = {}) {
    Close();
    if (endpoints.empty()) endpoints = {UnusedEndpoint(context_)};
    const Status s = OpenTestRuntime(dir_ / "reader", ReaderConfig(endpoints, extra), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    manager_ = NewManager();
  }
  std::unique_ptr<SnapshotManager> NewManager() {
    return std::make_unique<SnapshotManager>(runtime_->home(), runtime_->config().cluster, runtime_->catalog(),
                                             context_);
  }
  void Close() {
    manager_.reset();
    runtime_.reset();
  }
  std::string home() const { return runtime_->home().root(); }
  std::string map_dir() const { return home() + "/snapshots/m"; }
  std::string Install(int64_t create_time_ms) { return InstallSnapshot(home(), "m", create_time_ms, shard_); }
  std::shared_ptr<const OpenSnapshot> Current(StaleSnapshot stale = StaleSnapshot::kFetchNow) {
    std::shared_ptr<const OpenSnapshot> snapshot;
    const Status s = manager_->Current("m", stale, &snapshot);
    EXPECT_TRUE(s.ok()) << s.message();
    return snapshot;
  }
  // The value of `key` in `snapshot`, read through the map's store.
  static std::string Lookup(const OpenSnapshot& snapshot, const std::string& key) {
    std::string value;
    return GetValue(*snapshot.env(), key, &value) == Code::kOk ? value : "(missing)";
  }
  void SetMarkerTime(const std::string& name, int64_t ms_ago) {
    fs::last_write_time(map_dir() + "/" + name,
                        fs::file_time_type::clock::now() - std::chrono::milliseconds(ms_ago));
  }

  zmq::context_t context_;
  TempDir dir_;
  std::string shard_;
  ContentVersion version_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<SnapshotManager> manager_;
};

TEST_F(SnapshotManagerTest, OpensTheNewestCompleteSnapshot) {
  Open(kFresh);
  const int64_t now = CurrentTimeMs();
  Install(now - 2000);
  const std::string newest = Install(now - 1000);
  // Neither a fetch in progress nor a name that is not all digits counts as a snapshot.
  fs::create_directories(map_dir() + "/.fetch-1-1/m");
  fs::create_directories(map_dir() + "/" + std::to_string(now) + "x");
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->create_time_ms(), now - 1000);
  EXPECT_EQ(snapshot->path(), newest);
  EXPECT_EQ(snapshot->version(), version_);
  EXPECT_FALSE(snapshot->version().empty());
  EXPECT_EQ(Lookup(*snapshot, "key-7"), NumberedRows(7, 1)[0].second);
  EXPECT_EQ(manager_->fetches_started(), 0u);
}

TEST_F(SnapshotManagerTest, SharesOneOpenSnapshotWhileItIsTheNewest) {
  Open(kFresh);
  Install(CurrentTimeMs() - 5000);
  const auto first = Current();
  const auto again = Current(StaleSnapshot::kUseCurrent);
  EXPECT_EQ(first.get(), again.get());
  const int64_t newer = CurrentTimeMs() - 1000;
  Install(newer);
  const auto next = Current();
  ASSERT_NE(next, nullptr);
  EXPECT_NE(next.get(), first.get());
  EXPECT_EQ(next->create_time_ms(), newer);
  // The older one keeps working for whoever holds it.
  EXPECT_EQ(Lookup(*first, "key-1"), NumberedRows(1, 1)[0].second);
}

TEST_F(SnapshotManagerTest, AMapThatIsNotConfiguredIsAnError) {
  Open(kFresh);
  std::shared_ptr<const OpenSnapshot> snapshot;
  Status s = manager_->Current("nope", StaleSnapshot::kFetchNow, &snapshot);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("nope"));
  bool changed = true;
  s = manager_->RefreshIfDue("nope", &changed);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("nope"));
  EXPECT_FALSE(changed);
}

TEST_F(SnapshotManagerTest, MapNamesAreMatchedAsTheConfigDoes) {
  Open(kFresh);
  Install(CurrentTimeMs());
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current("M", StaleSnapshot::kFetchNow, &snapshot);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(snapshot->version(), version_);
}

TEST_F(SnapshotManagerTest, NoSnapshotAndNoNodeAnsweringIsAnErrorNamingMapAndNode) {
  Open(kFresh);
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current("m", StaleSnapshot::kUseCurrent, &snapshot);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("snapshot of m: no storage node could provide one: node1 (connection refused by "
                                     "tcp://127.0.0.1:"));
  EXPECT_EQ(snapshot, nullptr);
  // The failure is recorded; no scratch is left.
  EXPECT_THAT(SnapshotEntries(home(), "m"), ElementsAre(".failed", ".fetch.lock"));
  EXPECT_EQ(manager_->fetches_started(), 1u);
}

TEST_F(SnapshotManagerTest, AStaleSnapshotKeepsServingWhenTheFetchFails) {
  Open(kStale);
  const int64_t created = CurrentTimeMs() - 1000;
  Install(created);
  const auto snapshot = Current(StaleSnapshot::kFetchNow);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->create_time_ms(), created);
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_TRUE(fs::exists(map_dir() + "/.failed"));
  // Within the retry interval nobody asks the nodes again.
  EXPECT_EQ(Current(StaleSnapshot::kFetchNow).get(), snapshot.get());
  EXPECT_EQ(manager_->fetches_started(), 1u);
  EXPECT_THAT(CompleteSnapshots(home(), "m"), ElementsAre(std::to_string(created)));
}

TEST_F(SnapshotManagerTest, UseCurrentNeverFetches) {
  Open(kStale);
  Install(kLongAgo);
  const auto snapshot = Current(StaleSnapshot::kUseCurrent);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->create_time_ms(), kLongAgo);
  EXPECT_EQ(manager_->fetches_started(), 0u);
  EXPECT_FALSE(fs::exists(map_dir() + "/.failed"));
}

TEST_F(SnapshotManagerTest, RefreshIfDueReturnsTheErrorAndHonoursTheRetryInterval) {
  Open(kStale);
  Install(kLongAgo);
  bool changed = true;
  Status s = manager_->RefreshIfDue("m", &changed);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("snapshot of m: no storage node could provide one: node1 (connection refused"));
  EXPECT_FALSE(changed);
  EXPECT_TRUE(fs::exists(map_dir() + "/.failed"));
  EXPECT_EQ(manager_->fetches_started(), 1u);

  s = manager_->RefreshIfDue("m", &changed);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(manager_->fetches_started(), 1u);

  SetMarkerTime(".failed", 2 * 3600 * 1000);  // the interval has passed
  s = manager_->RefreshIfDue("m", &changed);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(manager_->fetches_started(), 2u);
}

TEST_F(SnapshotManagerTest, AFreshOrRecentlyCheckedSnapshotIsNotRefreshed) {
  Open(kFresh);
  Install(CurrentTimeMs());
  bool changed = true;
  Status s = manager_->RefreshIfDue("m", &changed);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(changed);
  EXPECT_EQ(manager_->fetches_started(), 0u);

  // An old snapshot that a node recently called current (.checked) counts as that fresh.
  fs::remove_all(map_dir());
  Install(kLongAgo);
  WriteFile(map_dir() + "/.checked", "");
  s = manager_->RefreshIfDue("m", &changed);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(manager_->fetches_started(), 0u);

  SetMarkerTime(".checked", 2 * 3600 * 1000);
  s = manager_->RefreshIfDue("m", &changed);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(manager_->fetches_started(), 1u);
}

TEST_F(SnapshotManagerTest, ACorruptNewestSnapshotIsAnErrorNamingIt) {
  Open(kFresh);
  const std::string path = Install(CurrentTimeMs());
  WriteFile(path + "/data.mdb", std::string(16384, 'x'));
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current("m", StaleSnapshot::kUseCurrent, &snapshot);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(path));
}

TEST_F(SnapshotManagerTest, CleanupKeepsTheNewestAndHeldSnapshotsAndDeletesTheRest) {
  Open("min_time_to_keep_snapshots = 1h\nmin_time_to_keep_env_open = 0s\n");
  const int64_t now = CurrentTimeMs();
  const std::string held_path = Install(now - 3000);
  auto held = Current();
  ASSERT_NE(held, nullptr);
  const std::string unheld = Install(now - 2000);
  const std::string newest = Install(now - 1000);
  // Another manager on the same home, as another process would be: the held snapshot's lock is what counts.
  auto other = NewManager();
  CleanupReport report;
  Status s = other->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(report.deleted, ElementsAre(unheld));
  EXPECT_EQ(report.envs_closed, 0u);
  EXPECT_THAT(CompleteSnapshots(home(), "m"),
              ElementsAre(std::to_string(now - 3000), std::to_string(now - 1000)));
  EXPECT_EQ(Lookup(*held, "key-3"), NumberedRows(3, 1)[0].second);

  // The manager lets go of its reference (idle: min_time_to_keep_env_open is 0); the holder keeps the lock.
  s = manager_->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.envs_closed, 1u);
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_TRUE(fs::exists(held_path));

  held.reset();
  s = other->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(report.deleted, ElementsAre(held_path));
  EXPECT_THAT(CompleteSnapshots(home(), "m"), ElementsAre(std::to_string(now - 1000)));
  // Only complete snapshots and markers remain: the renamed-away copies are gone too.
  EXPECT_THAT(SnapshotEntries(home(), "m"), ElementsAre(std::to_string(now - 1000)));
  EXPECT_EQ(Current()->path(), newest);
}

TEST_F(SnapshotManagerTest, CleanupKeepsEnvironmentsInUseWithinTheIdleTime) {
  Open(kFresh);
  Install(CurrentTimeMs() - 2000);
  const int64_t first = Current()->create_time_ms();  // only the manager holds it now
  Install(CurrentTimeMs() - 1000);
  CleanupReport report;
  Status s = manager_->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.envs_closed, 0u);
  // Still the manager's current one (not re-listed since), so the older directory is held and kept.
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_NE(Current()->create_time_ms(), first);  // listing again moves to the newest, letting go of the older one
  s = manager_->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.deleted.size(), 1u);
}

TEST_F(SnapshotManagerTest, CleanupRemovesScratchOfProcessesThatAreGone) {
  Open(kFresh);
  Install(CurrentTimeMs());
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);  // reaped: the pid names nobody now
  const std::string dead = std::to_string(child);
  const std::string alive = std::to_string(::getppid());
  const std::string mine = std::to_string(::getpid());
  for (const std::string& name :
       {".fetch-" + dead + "-1", ".delete-" + dead + "-2", ".fetch-" + alive + "-3", ".fetch-" + mine + "-4"}) {
    fs::create_directories(map_dir() + "/" + name + "/m");
  }
  WriteFile(map_dir() + "/.fetch-" + dead + "-1.zip", "partial");
  WriteFile(map_dir() + "/.fetch-" + dead + "-5.zip.part", "partial");
  CleanupReport report;
  const Status s = manager_->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.deleted.size(), 4u);
  const std::vector<std::string> entries = SnapshotEntries(home(), "m");
  EXPECT_EQ(std::count_if(entries.begin(), entries.end(), [&](const std::string& e) { return e.find(dead) != std::string::npos; }), 0);
  EXPECT_TRUE(fs::exists(map_dir() + "/.fetch-" + alive + "-3"));
  EXPECT_TRUE(fs::exists(map_dir() + "/.fetch-" + mine + "-4"));
}

TEST_F(SnapshotManagerTest, CleanupLeavesMapsThatAreNotConfiguredAlone) {
  Open(kFresh);
  InstallSnapshot(home(), "other", kLongAgo, shard_);
  InstallSnapshot(home(), "other", kLongAgo + 1, shard_);
  CleanupReport report;
  const Status s = manager_->Cleanup(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(report.deleted.empty());
  EXPECT_EQ(CompleteSnapshots(home(), "other").size(), 2u);
}

// ---- Fetching from scripted nodes: what the manager does with the zip. ----

class SnapshotManagerFetchTest : public SnapshotManagerTest {
 protected:
  ScriptedNode::Script ZipOf(const std::string& map, const std::string& data_mdb) {
    ScriptedNode::Script script;
    script.zip = ReadFile(MakeSnapshotZip(dir_.path(), map, data_mdb));
    script.offer.batches = version_.batches;
    script.offer.digest = version_.digest;
    script.offer.chunk_size = 4096;
    return script;
  }
  ScriptedNode::Script GoodZip() { return ZipOf("m", shard_ + "/data.mdb"); }
  // Only complete snapshots and the fetch's own files remain.
  void ExpectOnlyCompleteSnapshots() {
    for (const std::string& entry : SnapshotEntries(home(), "m")) {
      EXPECT_TRUE(entry == ".fetch.lock" || entry == ".failed" || entry == ".checked" ||
                  entry.find_first_not_of("0123456789") == std::string::npos)
          << entry;
    }
  }
};

TEST_F(SnapshotManagerFetchTest, FetchesVerifiesAndInstallsASnapshot) {
  ScriptedNode node(context_, GoodZip());
  Open(kFresh, {node.endpoint()});
  const int64_t before = CurrentTimeMs();
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_GE(snapshot->create_time_ms(), before);
  EXPECT_EQ(snapshot->version(), version_);
  EXPECT_EQ(Lookup(*snapshot, "key-499"), NumberedRows(499, 1)[0].second);
  EXPECT_THAT(SnapshotEntries(home(), "m"), ElementsAre(".fetch.lock", std::to_string(snapshot->create_time_ms())));
  EXPECT_EQ(node.snapshots(), 1);
  EXPECT_EQ(manager_->fetches_started(), 1u);
}

TEST_F(SnapshotManagerFetchTest, AZipThatDoesNotVerifyFailsOverToTheNextNode) {
  const std::string garbage = dir_ / "garbage.mdb";
  WriteFile(garbage, std::string(16384, 'g'));
  ScriptedNode bad(context_, ZipOf("m", garbage));
  ScriptedNode good(context_, GoodZip());
  Open(kFresh, {bad.endpoint(), good.endpoint()});
  const auto snapshot = Current();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->version(), version_);
  EXPECT_EQ(bad.snapshots(), 1);
  EXPECT_EQ(good.snapshots(), 1);
  EXPECT_EQ(CompleteSnapshots(home(), "m").size(), 1u);
  ExpectOnlyCompleteSnapshots();
}

TEST_F(SnapshotManagerFetchTest, ZipsThatDoNotVerifyOnEveryNodeAreAnErrorNamingEach) {
  const std::string garbage = dir_ / "garbage.mdb";
  WriteFile(garbage, std::string(16384, 'g'));
  ScriptedNode corrupt(context_, ZipOf("m", garbage));
  ScriptedNode other_map(context_, ZipOf("other", shard_ + "/data.mdb"));
  Open(kFresh, {corrupt.endpoint(), other_map.endpoint()});
  std::shared_ptr<const OpenSnapshot> snapshot;
  const Status s = manager_->Current("m", StaleSnapshot::kFetchNow, &snapshot);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("snapshot of m: no storage node could provide one: node1 (snapshot does not "
                                     "verify: "));
  EXPECT_THAT(s.message(), HasSubstr("map 'm'"));
  EXPECT_THAT(s.message(), HasSubstr("node2 (snapshot does not verify: "));
  EXPECT_THAT(s.message(), HasSubstr("holds map(s) other, expected only m)"));
  EXPECT_THAT(SnapshotEntries(home(), "m"), ElementsAre(".failed", ".fetch.lock"));
}

TEST_F(SnapshotManagerFetchTest, NotModifiedTouchesCheckedAndInstallsNothing) {
  ScriptedNode::Script script;
  script.offer.not_modified = 1;
  script.offer.batches = version_.batches;
  script.offer.digest = version_.digest;
  ScriptedNode node(context_, script);
  Open(kStale, {node.endpoint()});
  Install(kLongAgo);
  WriteFile(map_dir() + "/.failed", "");
  SetMarkerTime(".failed", 2 * 3600 * 1000);
  bool changed = true;
  const Status s = manager_->RefreshIfDue("m", &changed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(changed);
  EXPECT_THAT(SnapshotEntries(home(), "m"), ElementsAre(".checked", ".fetch.lock", std::to_string(kLongAgo)));
  EXPECT_EQ(node.fetches(), 0);
}

TEST_F(SnapshotManagerFetchTest, ManyThreadsWithoutASnapshotCauseOneFetch) {
  ScriptedNode node(context_, GoodZip());
  Open(kFresh, {node.endpoint()});
  auto other = NewManager();  // as another process on the same home
  constexpr int kThreads = 6;
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const OpenSnapshot>> got(kThreads);
  std::vector<Status> statuses(kThreads);
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      SnapshotManager& manager = i % 2 == 0 ? *manager_ : *other;
      statuses[i] = manager.Current("m", StaleSnapshot::kFetchNow, &got[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].message();
    EXPECT_EQ(got[i]->create_time_ms(), got[0]->create_time_ms());
  }
  EXPECT_EQ(node.snapshots(), 1);
  EXPECT_EQ(manager_->fetches_started() + other->fetches_started(), 1u);
  EXPECT_EQ(CompleteSnapshots(home(), "m").size(), 1u);
}

}  // namespace
}  // namespace planb::testing
