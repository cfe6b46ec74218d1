// Histogram and metric maps on two storage nodes (real `planb serve` processes on loopback): nodes that received
// the same batches hold the same counts, equal to a single node's; a file loaded again is already merged and counts
// nothing, and loaded under a new --batch-id it counts again, everywhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/cluster_fixture.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::ProcessResult;
using ::planb::testing::WriteFile;

constexpr char kSections[] =
    "[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 1h\n"
    "[map.latency]\ntype = metric\nscheme = lookup_table\nbucket = 10s\n";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string CountsFile(const ClusterFixture& cluster, const std::string& name, int seed) {
  std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
  for (int i = 0; i < 200; ++i) {
    const int k = (i * 7 + seed) % 23;
    const std::string time = "2024-01-01T" + std::to_string(10 + i % 3) + ":" + std::to_string(10 + i % 50) + ":0" +
                             std::to_string(i % 10) + "Z";
    xml += "<reference><map>hits</map><time>" + time + "</time><key>page-" + std::to_string(k) + "</key>";
    if (i % 3 == 0) xml += "<value>" + std::to_string(i) + "</value>";
    xml += "</reference>\n<reference><map>latency</map><time>" + time + "</time><key>api-" + std::to_string(k % 5) +
           "</key><value>" + std::to_string(i * 13 % 997) + "." + std::to_string(seed + i % 10) +
           "</value></reference>\n";
  }
  xml += "</referenceData>\n";
  const std::string path = cluster.dir() + "/" + name;
  WriteFile(path, xml);
  return path;
}

TEST(CountersCluster, NodesThatMergedTheSameBatchesHoldTheSameCounts) {
  ClusterFixture cluster;
  cluster.extra_map_sections = kSections;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> files = {CountsFile(cluster, "a.xml", 1), CountsFile(cluster, "b.xml", 2)};
  ProcessResult load = cluster.Load(files);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  const std::string once = cluster.ReferenceDump(files);
  ASSERT_TRUE(Contains(once, "hits/data")) << once.substr(0, 200);
  ASSERT_TRUE(Contains(once, "latency/data"));
  EXPECT_EQ(cluster.Dump(0), once);
  EXPECT_EQ(cluster.Dump(1), once);

  // The first file again: the same batch, already merged on both nodes; nothing counts twice.
  load = cluster.Load({files[0]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_TRUE(Contains(load.out, "node1                        already merged as batch content:")) << load.out;
  EXPECT_TRUE(Contains(load.out, "node2                        already merged as batch content:")) << load.out;
  EXPECT_EQ(cluster.Dump(0), once);
  EXPECT_EQ(cluster.Dump(1), once);

  // Under a new --batch-id: a new batch, counted again on both nodes, as a single node loading it twice.
  load = cluster.Load({"--batch-id", "again-1", files[0]});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  const std::string again = cluster.ReferenceDumpOfLoads({{files[0]}, {files[1]}, {"--batch-id", "again-1", files[0]}});
  EXPECT_NE(again, once);
  EXPECT_EQ(cluster.Dump(0), again);
  EXPECT_EQ(cluster.Dump(1), again);
  EXPECT_EQ(DumpBatchIds(cluster.home(0)), DumpBatchIds(cluster.home(1)));
}

}  // namespace
}  // namespace planb
