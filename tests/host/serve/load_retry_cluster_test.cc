// A load that failed on one storage node, loaded again once the node is back: every node ends with exactly the
// rows and content version of one load, counters included (the retried streams are the same batches, so the node
// that had them answers "already merged" and counts nothing twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cluster_fixture.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::WriteHitsFiles;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::ProcessResult;
using ::planb::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ContainsRegex;


TEST(LoadRetryCluster, ARetryAfterANodeDiedCountsEveryEventOnceOnEveryNode) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  const std::vector<std::string> files = WriteHitsFiles(cluster.dir(), 6, 300);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  // node2 dies right after staging the first stream, before it acknowledges it.
  ASSERT_TRUE(cluster.StartNode(1, {"PLANB_FAULT=receive.after_stage"})) << cluster.process(1).log();
  const ProcessResult failed = cluster.Load(files);
  ASSERT_EQ(cluster.process(1).WaitForDeath(), SIGKILL) << cluster.process(1).log();
  ASSERT_EQ(failed.exit_code, 2) << failed.out << failed.err;
  EXPECT_THAT(failed.err, HasSubstr("node2:"));
  EXPECT_THAT(failed.err, HasSubstr("loading the same files again completes the load"));

  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  const ProcessResult again = cluster.Load(files);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  // The first stream was in on both nodes already (node2 merged what it had staged before dying).
  EXPECT_THAT(again.out, HasSubstr("already merged as batch content:")) << again.out;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();

  const std::string reference = cluster.ReferenceDump(files);
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
  // The same batches, so the same content version on both nodes: what `load` printed is reached everywhere.
  const std::string ids = DumpBatchIds(cluster.home(0));
  EXPECT_EQ(ids, DumpBatchIds(cluster.home(1)));
  EXPECT_THAT(again.out, HasSubstr("content version of hits: " + std::to_string(files.size()) + " once merged"))
      << again.out;
  EXPECT_THAT(again.err, Not(HasSubstr("different content versions"))) << again.err;

  // And a third time: every stream is in everywhere; nothing is staged, nothing changes.
  const ProcessResult third = cluster.Load(files);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  size_t answered = 0;
  for (size_t at = third.out.find("already merged as batch"); at != std::string::npos;
       at = third.out.find("already merged as batch", at + 1)) {
    ++answered;
  }
  EXPECT_EQ(answered, 2 * files.size()) << third.out;
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(DumpBatchIds(cluster.home(1)), ids);
}

TEST(LoadRetryCluster, ALoadSaysWhenTheNodesHoldDifferentVersions) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  // No catch-up: node2 stays behind until the load repairs it (catch_up_cluster_test.cc covers catch-up).
  cluster.top_level_extra = "catch_up_interval = 0s\n";
  const std::vector<std::string> files = WriteHitsFiles(cluster.dir(), 2, 300);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  // node2 misses the first file: its disk "fills" while that load runs, and the file is not loaded again.
  ASSERT_TRUE(cluster.StartNode(1, {"PLANB_FAULT=receive.disk_full"})) << cluster.process(1).log();
  const ProcessResult partial = cluster.Load({files[0]});
  ASSERT_EQ(partial.exit_code, 2) << partial.err;
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const ProcessResult next = cluster.Load({files[1]});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_THAT(next.err, HasSubstr("planb: note: the storage nodes hold different content versions of hits: node1 2 "
                                  "node2 1"))
      << next.err;

  // `stores --cluster` asks every node: versions side by side, the node behind named, exit 1.
  const std::vector<std::string> proc = {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/proc-home"};
  auto stores = [&proc] {
    std::vector<std::string> args = proc;
    args.push_back("stores");
    args.push_back("--cluster");
    return testing::RunPlanb(args);
  };
  ProcessResult status = stores();
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_THAT(status.out, HasSubstr("MAP"));
  EXPECT_THAT(status.out, ContainsRegex("hits +2 +1 +behind: node2 \\(1\\)")) << status.out;
  EXPECT_THAT(status.out, ContainsRegex("city_to_country +0 +0 +in step")) << status.out;

  // Loaded again, the first file reaches node2 too (node1 answers "already merged"): in step, exit 0.
  const ProcessResult completed = cluster.Load({files[0]});
  ASSERT_EQ(completed.exit_code, 0) << completed.err;
  EXPECT_THAT(completed.out, HasSubstr("node1                        already merged as batch content:"));
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  status = stores();
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_THAT(status.out, ContainsRegex("hits +2 +2 +in step")) << status.out;
  EXPECT_EQ(cluster.Dump(0), cluster.Dump(1));

  // The same as JSON: every node's version of every map, and the state.
  {
    std::vector<std::string> args = proc;
    for (const char* a : {"stores", "--cluster", "--format", "json"}) args.push_back(a);
    const ProcessResult json = testing::RunPlanb(args);
    EXPECT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["nodes"], nlohmann::json::array({"node1", "node2"}));
    bool seen = false;
    for (const nlohmann::json& m : doc["maps"]) {
      if (m["map"] != "hits") continue;
      seen = true;
      EXPECT_EQ(m["versions"]["node1"]["batches"], 2);
      EXPECT_EQ(m["versions"]["node1"]["digest"], m["versions"]["node2"]["digest"]);
      EXPECT_EQ(m["state"], "in step");
    }
    EXPECT_TRUE(seen) << json.out;
    EXPECT_TRUE(doc["errors"].empty());
  }

  // A node that cannot answer: its error, "?" in its column, exit 2.
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  status = stores();
  EXPECT_EQ(status.exit_code, 2) << status.out;
  EXPECT_THAT(status.err, HasSubstr("planb: stores --cluster: node2: ")) << status.err;
  EXPECT_THAT(status.out, ContainsRegex("hits +2 +\\? +unknown: node2 did not answer")) << status.out;
}

}  // namespace
}  // namespace planb
