// `load --replace` through two storage nodes: a replacement is a batch like any other, so both nodes switch to
// exactly the new content, equal to a single node that did the same, with the same content version.
#include <gmock/gmock.h>
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
using ::testing::HasSubstr;

std::string Release(const std::vector<std::string>& ranges) {
  std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
  for (const std::string& range : ranges) xml += range + "\n";
  return xml + "</referenceData>\n";
}

std::string Range(const std::string& from, const std::string& to, const std::string& value) {
  return "<reference><map>geo</map><range><from>" + from + "</from><to>" + to + "</to></range><value>" + value +
         "</value></reference>";
}

TEST(LoadReplaceCluster, BothNodesSwitchToExactlyTheNewRelease) {
  ClusterFixture cluster;
  cluster.extra_map_sections = "[map.geo]\ntype = ranged\nkey_format = ipv4\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::string old_file = cluster.dir() + "/old.xml";
  const std::string new_file = cluster.dir() + "/new.xml";
  WriteFile(old_file, Release({Range("4.201.0.0", "4.203.159.255", "XX"), Range("4.203.160.0", "4.203.255.255", "US"),
                               Range("9.0.0.0", "9.0.0.255", "OLDONLY")}));
  WriteFile(new_file, Release({Range("4.201.0.0", "4.203.255.255", "BR")}));
  ASSERT_TRUE(cluster.LoadAndWaitMerged({old_file}, 2));
  const ProcessResult replaced = cluster.Load({"--replace", new_file});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_THAT(replaced.out, HasSubstr("replacement of geo stored"));
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  const std::string reference = cluster.ReferenceDumpOfLoads({{old_file}, {"--replace", new_file}});
  EXPECT_THAT(reference, HasSubstr("geo/data"));
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
  EXPECT_EQ(DumpBatchIds(cluster.home(0)), DumpBatchIds(cluster.home(1)));
  // The new release answers remotely too (the serving node reopened the exchanged shard).
  const ProcessResult lookup = testing::RunPlanb({"--config", cluster.dir() + "/proc.ini", "--home",
                                                  cluster.dir() + "/proc-home", "lookup", "--remote", "geo",
                                                  "4.203.230.172"});
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_EQ(lookup.out, "BR\n");
}

}  // namespace
}  // namespace planb
