// "A failed load changes no shard": every check a load can make before staging (maps known to the nodes, room in
// the map size) happens before anything is staged, on a single node and on every storage node (PREPARE); and
// a load that still fails later says which streams were stored and merged where. Real processes throughout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CliEnv;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::planb::testing::ReadFile;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::planb::testing::RunPlanb;
using ::planb::testing::ShardDataFiles;
using ::planb::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// `count` records of 1000-byte values under keys prefix0, prefix1, ...
std::string BigValues(const std::string& map, const std::string& prefix, int count) {
  std::string body;
  for (int i = 0; i < count; ++i) body += Ref(map, prefix + std::to_string(i), std::string(1000, 'v')) + "\n";
  return ReferenceData(body);
}

// Batch zips waiting in `home`'s staging/.
std::vector<std::string> Staged(const std::string& home) {
  std::vector<std::string> zips;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(home + "/staging", ec)) {
    if (entry.path().extension() == ".zip") zips.push_back(entry.path().filename().string());
  }
  return zips;
}

TEST(LoadChecks, AMapThatWouldNotFitItsMaxStoreSizeFailsTheLoadBeforeAnythingMerges) {
  CliEnv env("[map.city_to_country]\ntype = state\nmax_store_size = 1MiB\n");
  // Each file alone fits in 1 MiB; together they do not (before PREPARE: a.xml merged, then b.xml hit
  // MDB_MAP_FULL and stayed staged).
  const std::string a = env.Write("a.xml", BigValues("city_to_country", "a", 300));
  const std::string b = env.Write("b.xml", BigValues("city_to_country", "b", 300));
  const ProcessResult r = env.Load({a, b});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("map 'city_to_country' would not fit in its max_store_size of 1048576 bytes"));
  EXPECT_THAT(r.err, HasSubstr("nothing was staged"));
  EXPECT_THAT(ShardDataFiles(env.home()), IsEmpty());
  EXPECT_THAT(Staged(env.home()), IsEmpty());
  EXPECT_EQ(env.Lookup("city_to_country", "a1").exit_code, 2);  // the map has no data: nothing merged
  // Each alone loads, and the load says the content version it produced.
  const ProcessResult first = env.Load({a});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("content version of city_to_country: 1\n"));
  const ProcessResult second = env.Load({b});
  EXPECT_EQ(second.exit_code, 2) << second.out;
  EXPECT_THAT(second.err, HasSubstr("the shard uses "));
  EXPECT_THAT(Staged(env.home()), IsEmpty());
}

TEST(LoadChecks, AnUnusableShardOfTheSecondFileFailsTheLoadBeforeTheFirstMerges) {
  // The map is known to the config the load reads, but its shard directory cannot be a shard: a regular file
  // where the shard's directory should be makes the shard unusable, found before a.xml merges.
  CliEnv env;
  const std::string a = env.Write("a.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  const std::string b = env.Write("b.xml", ReferenceData(Ref("iptolocation", "10.0.0.1", "Cardiff")));
  fs::create_directories(env.home() + "/shards/iptolocation");
  WriteFile(env.home() + "/shards/iptolocation/data.mdb", "not an LMDB file");
  const ProcessResult r = env.Load({a, b});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("iptolocation"));
  const ProcessResult paris = env.Lookup("city_to_country", "Paris");
  EXPECT_EQ(paris.exit_code, 2) << "a.xml must not have merged";
  EXPECT_THAT(paris.err, HasSubstr("map city_to_country has no data on this node"));
  EXPECT_THAT(Staged(env.home()), IsEmpty());
}

TEST(LoadChecks, AClusterLoadWithAMapTheNodesLackStagesNothingAnywhere) {
  ClusterFixture cluster(2);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  // The processing node knows one more map than the storage nodes.
  const std::string config = cluster.WriteReaderConfig("proc");
  WriteFile(config, ReadFile(config) + "[map.only_here]\ntype = state\n");
  const std::string a = cluster.dir() + "/a.xml";
  const std::string b = cluster.dir() + "/b.xml";
  WriteFile(a, ReferenceData(Ref("country_to_capital", "Wales", "Cardiff")));
  WriteFile(b, ReferenceData(Ref("only_here", "k", "v")));
  const ProcessResult r = cluster.RunOnReader("proc", {"load", a, b});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("nothing was staged on any node"));
  EXPECT_THAT(r.err, HasSubstr("node1: map 'only_here' is not configured on this node"));
  EXPECT_THAT(r.err, HasSubstr("node2: map 'only_here' is not configured on this node"));
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(Staged(cluster.home(i)), IsEmpty()) << cluster.node_name(i);
    EXPECT_THAT(ShardDataFiles(cluster.home(i)), IsEmpty()) << cluster.node_name(i);
  }
  // The same load without the unknown map goes through and says the version readers can wait for.
  const ProcessResult good = cluster.RunOnReader("proc", {"load", a});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_THAT(good.out, HasSubstr("content version of country_to_capital: 1 once merged"));
}

TEST(LoadChecks, ALoadThatFailsMidwaySaysWhichStreamsEachNodeStored) {
  ClusterFixture cluster(2);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  cluster.WriteReaderConfig("proc");
  const std::string a = cluster.dir() + "/a.xml";
  const std::string b = cluster.dir() + "/b.xml";
  WriteFile(a, ReferenceData(Ref("country_to_capital", "Wales", "Cardiff")));
  WriteFile(b, ReferenceData(Ref("country_to_capital", "Scotland", "Edinburgh")));
  // node2's check passes, but its disk fails every chunk write: a.xml reaches node1 only, b.xml no node.
  cluster.process(1).Stop();
  ASSERT_TRUE(cluster.StartNode(1, {"PLANB_FAULT=receive.disk_full"})) << cluster.process(1).log();
  const ProcessResult r = cluster.RunOnReader("proc", {"load", a, b});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr(a + ": batch of "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("node1 +staged as batch 1"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("node2 +not stored: "));
  EXPECT_THAT(r.out, HasSubstr(b + ": not stored on any node"));
}

// Issue 40: a loader whose own max_store_size is too small for a file used to fail with LMDB's bare
// "MDB_MAP_FULL: Environment mapsize limit reached". The batch it writes has the map's max_store_size as its LMDB
// map size: the error names the map, the batch's file, the limit, and what to raise.
void ExpectBatchFullSaysWhatToRaise(const ProcessResult& r, const std::string& home) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("nothing was staged"));
  EXPECT_THAT(r.err, HasSubstr("map city_to_country: the batch being written, " + home + "/writer/"));
  EXPECT_THAT(r.err, HasSubstr("/city_to_country/data.mdb is full: it reached max_store_size = 1MiB (1048576 bytes, "
                               "the LMDB map size of the map's files) in this node's config; raise max_store_size "
                               "in [map.city_to_country] (LMDB: "));
  EXPECT_THAT(r.err, HasSubstr("MDB_MAP_FULL"));
}

TEST(LoadChecks, ABatchBeyondTheLoadersOwnMaxStoreSizeNamesTheMapTheFileAndTheLimit) {
  CliEnv env("[map.city_to_country]\ntype = state\nmax_store_size = 1MiB\n");
  const ProcessResult r = env.Load({env.Write("big.xml", BigValues("city_to_country", "k", 3000))});
  ExpectBatchFullSaysWhatToRaise(r, env.home());
  EXPECT_THAT(Staged(env.home()), IsEmpty());
  // The same rows as CSV go through the same writer.
  std::string csv = "key,value\n";
  for (int i = 0; i < 3000; ++i) csv += "k" + std::to_string(i) + "," + std::string(1000, 'v') + "\n";
  ExpectBatchFullSaysWhatToRaise(env.Run({"load", "--format", "csv", "--map", "city_to_country", "--key", "key",
                                          "--value", "value", env.Write("big.csv", csv)}),
                                 env.home());
}

// A processing node writes the batch with its own config before any storage node is asked (none listens here).
TEST(LoadChecks, AProcessingNodesBatchBeyondItsMaxStoreSizeFailsBeforeAnyNodeIsAsked) {
  CliEnv env("node_name = proc\nnode_list = ,node1\n[node.node1]\nendpoint = tcp://127.0.0.1:9\n"
             "[map.city_to_country]\ntype = state\nmax_store_size = 1MiB\n");
  const ProcessResult r = env.Load({env.Write("big.xml", BigValues("city_to_country", "k", 3000))});
  ExpectBatchFullSaysWhatToRaise(r, env.home());
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("node1")));
}

}  // namespace
}  // namespace planb
