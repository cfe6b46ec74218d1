// planb enrich on a node that is not a storage node: it reads snapshots fetched from the storage node, and a
// long-running enrich sees new data once its Reader's background thread has refreshed them (no restart).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"
#include "support/filter_process.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::ClusterFixture;
using testing::ProcessResult;
using testing::ReferenceData;

// The create time of the newest complete snapshot in `dir` (directories named by it, all digits); 0 for none.
uint64_t NewestSnapshot(const std::string& dir) {
  uint64_t newest = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.size() > 19 || name.find_first_not_of("0123456789") != std::string::npos) continue;
    newest = std::max<uint64_t>(newest, std::stoull(name));
  }
  return newest;
}

TEST(EnrichReader, ReadsSnapshotsAndPicksUpNewDataWhileItRuns) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ProcessResult load = cluster.Load(testing::ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0));
  // Snapshots older than 0 s are due: every maintenance pass (each second) asks the node for a newer one.
  const std::string config = cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n");
  testing::FilterProcess enrich(PLANB_BINARY,
                                {"--config", config, "--home", cluster.ReaderHome("reader"),
                                 "enrich", "--lookup", "country=city_to_country:city"});
  ASSERT_TRUE(enrich.started());
  ASSERT_TRUE(enrich.Write("{\"city\":\"Ankara\"}\n"));
  std::string line;
  ASSERT_TRUE(enrich.ReadLine(&line)) << enrich.err();
  EXPECT_EQ(line, R"({"city":"Ankara","country":"Turkey"})");

  const std::string update = cluster.dir() + "/update.xml";
  testing::WriteFile(update, ReferenceData("  <reference><map>city_to_country</map><key>Ankara</key>"
                                           "<value>Türkiye</value></reference>"));
  load = cluster.Load({update});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0));
  // enrich's Reader fetches the new snapshot in the background (a directory named by a later create time)...
  const std::string snapshots = cluster.ReaderHome("reader") + "/snapshots/city_to_country";
  const uint64_t first = NewestSnapshot(snapshots);
  ASSERT_NE(first, 0u);
  ASSERT_TRUE(testing::WaitUntil([&] { return NewestSnapshot(snapshots) > first; }, {snapshots}))
      << enrich.err();
  // ...and moves its lookups to it at once: the next events get the new answer, with no restart.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30) * testing::TestTimeScale();
  bool refreshed = false;
  while (!refreshed && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(enrich.Write("{\"city\":\"Ankara\"}\n"));
    ASSERT_TRUE(enrich.ReadLine(&line)) << enrich.err();
    refreshed = line == R"({"city":"Ankara","country":"Türkiye"})";
  }
  EXPECT_TRUE(refreshed) << line << "\n" << enrich.err();
  EXPECT_EQ(enrich.Finish(), 0) << enrich.err();
}

}  // namespace
}  // namespace planb
