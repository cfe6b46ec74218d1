// `planb lookup` / `query` / `cleanup` on a node that is not a storage node: they read a local snapshot of the
// map, fetched from the storage nodes in node_list order (real `planb serve` processes on loopback).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";

void StartAndLoad(ClusterFixture& cluster, int nodes) {
  for (int i = 0; i < nodes; ++i) PLANB_ASSERT_NODE_STARTS(cluster, i);
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < nodes; ++i) ASSERT_TRUE(cluster.WaitMerged(i)) << cluster.process(i).log();
}

// The complete snapshots of `map` on the reader (directories named by their create time: all digits).
std::vector<std::string> Snapshots(const ClusterFixture& cluster, const std::string& reader) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cluster.ReaderHome(reader) + "/snapshots/" + kMap, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") == std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Everything in snapshots/<map>/ that is neither a complete snapshot nor one of the manager's marker files.
std::vector<std::string> Leftovers(const ClusterFixture& cluster, const std::string& reader) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cluster.ReaderHome(reader) + "/snapshots/" + kMap, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") == std::string::npos) continue;
    if (name == ".fetch.lock" || name == ".checked" || name == ".failed") continue;
    names.push_back(name);
  }
  return names;
}

TEST(SnapshotLookup, FetchesFromTheFirstNodeThatAnswersAndKeepsServingWhenAllAreDown) {
  ClusterFixture cluster;
  StartAndLoad(cluster, 2);
  cluster.WriteReaderConfig("reader");

  ProcessResult r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
  ASSERT_EQ(Snapshots(cluster, "reader").size(), 1u);
  // Fresh on disk: the next process uses it without asking (node1 is gone and it still answers at once).
  cluster.process(0).Stop();
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania", "Andorra"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Albania\tTirana\nAndorra\tAndorra la Vella\n");
  EXPECT_EQ(Snapshots(cluster, "reader").size(), 1u);

  // Removed from disk: fetched again, now from node2.
  fs::remove_all(cluster.ReaderHome("reader") + "/snapshots/" + std::string(kMap));
  r = cluster.RunOnReader("reader", {"query", kMap, "--where", "Key = 'Albania'", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tirana"));
  EXPECT_EQ(Snapshots(cluster, "reader").size(), 1u);

  // Both down, and the snapshot is stale (kept 0 s): the fetch fails, the old snapshot answers.
  cluster.process(1).Stop();
  cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n");
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
  EXPECT_TRUE(fs::exists(cluster.ReaderHome("reader") + "/snapshots/" + std::string(kMap) + "/.failed"));
  EXPECT_EQ(Leftovers(cluster, "reader"), std::vector<std::string>{});

  // No snapshot and nobody to fetch one from: an error naming the map and every node tried.
  fs::remove_all(cluster.ReaderHome("reader") + "/snapshots/" + std::string(kMap));
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(kMap));
  EXPECT_THAT(r.err, HasSubstr("node1"));
  EXPECT_THAT(r.err, HasSubstr("node2"));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Leftovers(cluster, "reader"), std::vector<std::string>{});
}

TEST(SnapshotLookup, SeesNewDataOnceTheKeepTimeHasPassedAndCleanupDeletesTheOldSnapshot) {
  ClusterFixture cluster(1);
  StartAndLoad(cluster, 1);
  cluster.WriteReaderConfig("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", kMap, "Atlantis"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_EQ(Snapshots(cluster, "reader").size(), 1u);

  const std::string update = cluster.dir() + "/atlantis.xml";
  ::planb::testing::WriteFile(update,
                              "<referenceData xmlns=\"reference-data:2\">\n"
                              "  <reference><map>country_to_capital</map><key>Atlantis</key>"
                              "<value>Poseidonia</value></reference>\n</referenceData>\n");
  ProcessResult load = cluster.Load({update});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0));

  // Within the keep time the reader keeps its snapshot (and does not ask): still no Atlantis.
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Atlantis"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Past it (0 s), the next lookup fetches the newer snapshot first.
  cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n");
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Atlantis"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Poseidonia\n");
  const std::vector<std::string> both = Snapshots(cluster, "reader");
  ASSERT_EQ(both.size(), 2u);

  // Nothing changed since: the node answers "not modified" (a success), and no third snapshot appears.
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Atlantis"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Snapshots(cluster, "reader"), both);

  // cleanup: the superseded one goes, the newest stays.
  r = cluster.RunOnReader("reader", {"cleanup"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(both.front()));
  EXPECT_EQ(Snapshots(cluster, "reader"), std::vector<std::string>{both.back()});
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Atlantis"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Another process fetching the map (it holds .fetch.lock, as a fetch from a stalling node would for long) does
// not hold up a lookup that has a snapshot to serve: it answers from that one (issue 38, 9). It used to wait.
TEST(SnapshotLookup, ALookupHoldingASnapshotDoesNotWaitOnAnotherProcesssFetch) {
  ClusterFixture cluster(1);
  StartAndLoad(cluster, 1);
  cluster.WriteReaderConfig("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n");  // stale at once: a refresh is due
  FileLock other;
  ASSERT_TRUE(other.Acquire(cluster.ReaderHome("reader") + "/snapshots/" + kMap + "/.fetch.lock").ok());
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
}

// Nothing merged on the storage nodes: the reader says so (exit 2), locally and with --remote, never "no key".
TEST(SnapshotLookup, AMapWithNothingMergedIsAnErrorNotAMiss) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  cluster.WriteReaderConfig("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("map " + std::string(kMap) + " has no data on this node"));
  r = cluster.RunOnReader("reader", {"query", kMap, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  r = cluster.RunOnReader("reader", {"lookup", "--remote", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("map " + std::string(kMap) + " has no data on storage node node1"));
}

}  // namespace
}  // namespace planb
