// CURVE between real processes on loopback (`planb serve`, `planb load`, `lookup --remote`, snapshot reads): what
// each client's section allows works end to end, what it does not is refused with exit 2 and writes nothing, a
// node that cannot prove its identity fails fast, and a plaintext node refuses to listen beyond loopback unless
// allow_plaintext says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "host/security/batch_namespace.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClientSection;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::planb::testing::RunPlanb;
using ::planb::testing::WriteFile;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";

TEST(CurveCluster, LoadsLooksUpAndFetchesSnapshotsOverCurve) {
  ClusterFixture cluster(2);
  cluster.EnableCurve();
  cluster.ReserveEndpoints();  // each node's config names its peer's endpoint (stores --cluster below)
  cluster.NewKey("reader");
  cluster.client_sections = ClientSection("proc", cluster.key("proc").public_key, "upload") +
                            ClientSection("reader", cluster.key("reader").public_key, "read, snapshot");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("CURVE, 2 client(s) allowed"));

  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  const std::string reference = cluster.ReferenceDump(ExampleDataFiles());
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
  // The batches are merged under ids in the loader's namespace (its key's), the same on both nodes; loaded again,
  // they are that client's batches again: already merged.
  const std::string ids = testing::DumpBatchIds(cluster.home(0));
  EXPECT_THAT(ids, HasSubstr(kMap + std::string("/batches: ") + BatchNamespace(cluster.key("proc").public_key) +
                             "content:"))
      << ids;
  EXPECT_EQ(testing::DumpBatchIds(cluster.home(1)), ids);
  const ProcessResult again = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("node2                        already merged as batch key-"));
  EXPECT_EQ(testing::DumpBatchIds(cluster.home(0)), ids);

  // On a storage node, with the node's own key (rights node and snapshot at its peer): PREPARE only reads, so
  // the peer answers it, and `stores --cluster` compares both nodes.
  const ProcessResult versions =
      RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "stores", "--cluster"});
  EXPECT_EQ(versions.exit_code, 0) << versions.err;
  EXPECT_THAT(versions.out, ContainsRegex(std::string("\n") + kMap + " +[0-9]+ +[0-9]+ +in step\n")) << versions.out;

  cluster.WriteReaderConfig("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", "--remote", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Albania"});  // through a snapshot fetched over CURVE
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
  EXPECT_THAT(cluster.process(0).log(), Not(HasSubstr("refused client")));
  EXPECT_THAT(cluster.process(1).log(), Not(HasSubstr("refused client")));
}

TEST(CurveCluster, WhatAClientMayNotDoIsRefusedWithExit2AndWritesNothing) {
  ClusterFixture cluster(1);
  cluster.EnableCurve();
  cluster.NewKey("reader");
  const std::string stranger_key = cluster.NewKey("stranger").public_key;
  cluster.client_sections = ClientSection("proc", cluster.key("proc").public_key, "upload") +
                            "maps = " + kMap + "\n" +
                            ClientSection("reader", cluster.key("reader").public_key, "snapshot");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string empty = cluster.Dump(0);

  // The example data writes many maps; proc may write one.
  ProcessResult r = cluster.Load(ExampleDataFiles());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("node1"));
  EXPECT_THAT(r.err, HasSubstr("not authorised for upload on "));
  EXPECT_EQ(cluster.Dump(0), empty);
  // Its own map it may.
  const std::string file = cluster.dir() + "/wales.xml";
  WriteFile(file, ReferenceData(Ref(kMap, "Wales", "Cardiff")));
  r = cluster.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();

  // reader may take snapshots, not read remotely.
  cluster.WriteReaderConfig("reader");
  r = cluster.RunOnReader("reader", {"lookup", "--remote", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("storage node node1: not authorised for read (client reader)"));
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Cardiff\n");

  // A key the node does not list gets nothing, and the node says whose key it refused.
  cluster.WriteReaderConfig("stranger");
  r = cluster.RunOnReader("stranger", {"lookup", "--remote", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("storage node node1: not authorised for read: the node does not know this client's key " +
                               stranger_key));
  r = cluster.RunOnReader("stranger", {"lookup", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not authorised for snapshot on " + std::string(kMap)));
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("key " + stranger_key + " is in no [client.NAME] section"));
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("refused client reader: not authorised for read"));
}

TEST(CurveCluster, ANodeThatCannotProveItsIdentityFailsFast) {
  ClusterFixture cluster(1);
  cluster.EnableCurve();
  cluster.NewKey("reader");
  cluster.client_sections = ClientSection("reader", cluster.key("reader").public_key, "read, snapshot");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  // The reader is told another key for node1: whoever answers at its endpoint is not that node.
  const std::string config = cluster.WriteReaderConfig("reader");
  std::string text = testing::ReadFile(config);
  const std::string real = cluster.key("node1").public_key;
  text.replace(text.find(real), real.size(), cluster.NewKey("impostor").public_key);
  WriteFile(config, text);
  const ProcessResult r = cluster.RunOnReader("reader", {"lookup", "--remote", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("storage node node1: the node at " + cluster.endpoint(0) + " did not prove its identity"));
}

// Redis' protected mode: plaintext on an address others can reach takes an explicit allow_plaintext.
TEST(CurveCluster, PlaintextServeRefusesANonLoopbackBindUnlessAllowed) {
  testing::TempDir dir;
  const std::string nodes = "node_name = node1\nnode_list = ,node1\n[node.node1]\nendpoint = tcp://0.0.0.0:1\n";
  WriteFile(dir / "n.ini", nodes);
  const ProcessResult refused =
      RunPlanb({"--config", dir / "n.ini", "--home", dir / "h", "serve", "--bind", "tcp://0.0.0.0:*"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("serve: refusing to bind tcp://0.0.0.0:* without keys"));
  EXPECT_THAT(refused.err, HasSubstr("allow_plaintext = true"));

  WriteFile(dir / "open.ini", "allow_plaintext = true\n" + nodes);
  testing::ServeProcess node;
  node.Start(dir / "open.ini", dir / "h", "tcp://0.0.0.0:*");
  ASSERT_FALSE(node.WaitReady().empty()) << node.log();
  EXPECT_THAT(node.log(), HasSubstr("WARNING: serving tcp://0.0.0.0:* in plaintext without authentication"));
  const int stopped = node.Stop();
  EXPECT_EQ(stopped, 0) << node.log();  // once exited 2 under ctest -j2, cause not seen yet: the log will say
}

// A client without keys talking to a CURVE node is told the node may require CURVE every time, not only
// "connection refused" (5 runs of 6 said just that): the node drops it after the greetings, often before the
// client sees its own mechanism-mismatch event.
TEST(CurveCluster, APlaintextClientIsToldTheNodeRequiresCurveEveryTime) {
  ClusterFixture cluster(1);
  cluster.EnableCurve();
  cluster.client_sections = ClientSection("proc", cluster.key("proc").public_key, "upload");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  // The reader's config as a plaintext client writes it: the node's endpoint, no keys.
  std::string text = testing::ReadFile(cluster.WriteReaderConfig("proc"));
  const std::string plain = cluster.dir() + "/plain.ini";
  std::string kept;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("secret_key_file", 0) == 0 || line.rfind("public_key", 0) == 0 || line.rfind("[client.", 0) == 0 ||
        line.rfind("allow", 0) == 0) {
      continue;
    }
    kept += line + "\n";
  }
  WriteFile(plain, kept);
  for (int i = 0; i < 6; ++i) {
    const ProcessResult r =
        RunPlanb({"--config", plain, "--home", cluster.dir() + "/plain-home", "lookup", "--remote", kMap, "Wales"});
    EXPECT_EQ(r.exit_code, 2) << i;
    EXPECT_THAT(r.err, HasSubstr("requires CURVE")) << "run " << i << ": " << r.err;
  }
}

}  // namespace
}  // namespace planb
