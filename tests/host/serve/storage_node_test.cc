// Storage nodes as real processes on loopback: a processing node loads, every storage node stages and merges,
// and all of them end with the shards a single node would have built.
#include "host/serve/storage_node.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/batch_zip.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(StorageNode, EveryStorageNodeEndsWithTheShardsOfASingleNode) {
  ClusterFixture cluster;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> files = ExampleDataFiles();
  const ProcessResult load = cluster.Load(files);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_TRUE(Contains(load.out, "node1")) << load.out;
  EXPECT_TRUE(Contains(load.out, "node2")) << load.out;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();

  const std::string reference = cluster.ReferenceDump(files);
  ASSERT_FALSE(reference.empty());
  for (const char* map : {"city_to_country/data", "employeeidtooffice/data", "ip_range_to_site/data",
                          "user_app_sessions/data", "user_to_department/data"}) {
    EXPECT_TRUE(Contains(reference, map)) << map;  // every store type is in the comparison
  }
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
  // Both merged the same uploads: the same batches counted, the same content version.
  const std::string batch_ids = DumpBatchIds(cluster.home(0));
  EXPECT_TRUE(Contains(batch_ids, "city_to_country/meta: content_version = ")) << batch_ids;
  // Ids come from each stream's records, so nodes and the reference agree on them.
  EXPECT_TRUE(Contains(batch_ids, "city_to_country/batches: content:")) << batch_ids;
  EXPECT_EQ(DumpBatchIds(cluster.home(1)), batch_ids);
}

TEST(StorageNode, TheCliReadsAServingNodesHome) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_EQ(cluster.Load(ExampleDataFiles()).exit_code, 0);
  ASSERT_TRUE(cluster.WaitMerged(0));
  // The node keeps serving (and holding its shards open) while another process reads them.
  const ProcessResult lookup =
      RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "lookup", "country_to_capital", "Albania"});
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_EQ(lookup.out, "Tirana\n");
  const ProcessResult query = RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "query",
                                        "country_to_capital", "--where", "Key = 'Albania'", "--format", "csv"});
  EXPECT_EQ(query.exit_code, 0) << query.err;
  EXPECT_TRUE(Contains(query.out, "Tirana")) << query.out;
  EXPECT_TRUE(cluster.process(0).running());
}

TEST(StorageNode, LoadingTheSameStreamsTwiceChangesNothing) {
  ClusterFixture cluster;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> files = ExampleDataFiles();
  ASSERT_EQ(cluster.Load(files).exit_code, 0);
  ASSERT_EQ(cluster.Load(files).exit_code, 0);
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_TRUE(cluster.WaitMerged(1));
  const std::string once = cluster.ReferenceDump(files);
  EXPECT_EQ(cluster.Dump(0), once);
  EXPECT_EQ(cluster.Dump(1), once);
  EXPECT_EQ(DumpBatchIds(cluster.home(0)), DumpBatchIds(cluster.home(1)));
}

TEST(StorageNode, ALoadFailsNamingTheNodeThatIsDownAndALaterLoadHeals) {
  ClusterFixture cluster;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_EQ(cluster.process(1).Stop(), 0) << cluster.process(1).log();  // a clean SIGTERM shutdown exits 0
  const std::vector<std::string> files = ExampleDataFiles();
  const ProcessResult failed = cluster.Load(files);
  EXPECT_EQ(failed.exit_code, 2);
  // The check before staging (PREPARE) finds node2 down: nothing is staged on node1 either.
  EXPECT_TRUE(Contains(failed.err, "node2: connection refused by " + cluster.endpoint(1))) << failed.err;
  EXPECT_FALSE(Contains(failed.err, "node1:")) << failed.err;
  EXPECT_TRUE(Contains(failed.err, "nothing was staged on any node")) << failed.err;
  std::error_code ec;
  for (const char* dir : {"/staging", "/shards"}) {
    for (const auto& entry : std::filesystem::directory_iterator(cluster.home(0) + dir, ec)) {
      if (entry.path().filename().string()[0] != '.') ADD_FAILURE() << "node1 holds " << entry.path();
    }
  }

  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const ProcessResult healed = cluster.Load(files);
  ASSERT_EQ(healed.exit_code, 0) << healed.err;
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_TRUE(cluster.WaitMerged(1));
  const std::string reference = cluster.ReferenceDump(files);
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
}

TEST(StorageNode, SynchroniseMergeReturnsOnlyOnceEveryNodeHasMerged) {
  ClusterFixture cluster(2, "synchronise_merge = true\n");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_TRUE(Contains(load.out, "merged")) << load.out;
  // No waiting here: the load itself waited.
  for (int i = 0; i < 2; ++i) {
    const ProcessResult lookup =
        RunPlanb({"--config", cluster.config(i), "--home", cluster.home(i), "lookup", "country_to_capital", "Albania"});
    EXPECT_EQ(lookup.out, "Tirana\n") << lookup.err;
  }
}

TEST(StorageNode, AStorageNodeThatLoadsMovesItsOwnCopy) {
  ClusterFixture cluster;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> files = ExampleDataFiles();
  const ProcessResult load = cluster.Load(files, /*from_node=*/0);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_TRUE(Contains(load.out, "(moved)")) << load.out;
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_TRUE(cluster.WaitMerged(1));
  const std::string reference = cluster.ReferenceDump(files);
  EXPECT_EQ(cluster.Dump(0), reference);
  EXPECT_EQ(cluster.Dump(1), reference);
}

TEST(StorageNode, ASecondServeOnTheSameHomeIsRefused) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const ProcessResult second = RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "serve", "--bind",
                                         "tcp://127.0.0.1:*"});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_TRUE(Contains(second.err, "another planb serve is already running on home " + cluster.home(0))) << second.err;
  EXPECT_TRUE(cluster.process(0).running());
}

TEST(StorageNode, ServeRefusesANodeOutsideTheNodeListAndABadEndpoint) {
  testing::TempDir dir;
  testing::WriteFile(dir / "p.ini", "node_name = proc\nnode_list = ,node1\n[node.node1]\nendpoint = tcp://127.0.0.1:1\n");
  const ProcessResult outside = RunPlanb({"--config", dir / "p.ini", "--home", dir / "h", "serve"});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_TRUE(Contains(outside.err, "node 'proc' is not in node_list")) << outside.err;

  testing::WriteFile(dir / "n.ini", "node_name = node1\nnode_list = ,node1\n[node.node1]\nendpoint = tcp://127.0.0.1:1\n");
  const ProcessResult bad = RunPlanb({"--config", dir / "n.ini", "--home", dir / "h", "serve", "--bind", "nonsense"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "serve: binding nonsense")) << bad.err;

  const ProcessResult unwritable = RunPlanb({"--config", dir / "n.ini", "--home", dir / "h", "serve", "--bind",
                                             "tcp://127.0.0.1:*", "--ready-file", dir / "missing/ready"});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_TRUE(Contains(unwritable.err, "serve: --ready-file: creating " + dir / "missing/ready")) << unwritable.err;

  const ProcessResult extra = RunPlanb({"--config", dir / "n.ini", "--home", dir / "h", "serve", "now"});
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_TRUE(Contains(extra.err, "'serve' takes no arguments, got 1")) << extra.err;
}

// SNAPSHOT and FETCH against a serving node: the zip holds the shard's rows and version exactly; outgoing/ is
// emptied when serve starts.
TEST(StorageNode, ServesASnapshotOfAShard) {
  ClusterFixture cluster(1);
  testing::WriteFile(cluster.home(0) + "/outgoing/m-1-1.zip", "left by an earlier run");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  EXPECT_FALSE(std::filesystem::exists(cluster.home(0) + "/outgoing/m-1-1.zip"));
  ASSERT_EQ(cluster.Load(ExampleDataFiles()).exit_code, 0);
  ASSERT_TRUE(cluster.WaitMerged(0));

  zmq::context_t context;
  testing::RawSender raw(context, cluster.endpoint(0));
  raw.Request(protocol::Command::kSnapshot, protocol::EncodeSnapshot({"city_to_country", 0, 0}));
  const testing::RawReply reply = raw.Receive();
  ASSERT_EQ(reply.header.command, static_cast<uint16_t>(protocol::Command::kSnapshotOffer)) << reply.payload;
  protocol::SnapshotOffer offer;
  ASSERT_TRUE(protocol::DecodeSnapshotOffer(reply.payload, &offer).ok());
  std::string zip;
  while (zip.size() < offer.total_size) {
    raw.Request(protocol::Command::kFetch, protocol::EncodeFetch({offer.token, zip.size(), offer.chunk_size}));
    const testing::RawReply data = raw.Receive();
    ASSERT_EQ(data.header.command, static_cast<uint16_t>(protocol::Command::kFetchData)) << data.payload;
    ASSERT_FALSE(data.data.empty());
    zip += data.data;
  }
  EXPECT_EQ(testing::Xxh3(zip), offer.checksum);

  // Unpacked as a home's shards/, the snapshot dumps exactly as the node's own shard of the map does.
  const std::string snapshot_home = cluster.dir() + "/snapshot-home";
  testing::WriteFile(cluster.dir() + "/snapshot.zip", zip);
  std::vector<std::string> maps;
  const Status unzipped = UnzipBatch(cluster.dir() + "/snapshot.zip", snapshot_home + "/shards", UnzipLimits(), &maps);
  ASSERT_TRUE(unzipped.ok()) << unzipped.message();
  ASSERT_EQ(maps, std::vector<std::string>{"city_to_country"});
  auto lines_of = [](const std::string& dump, const std::string& map) {
    std::string kept;
    size_t start = 0;
    while (start < dump.size()) {
      const size_t end = dump.find('\n', start);
      const std::string line = dump.substr(start, end - start + 1);
      if (line.rfind(map + "/", 0) == 0) kept += line;
      start = end + 1;
    }
    return kept;
  };
  const std::string rows = testing::DumpShards(snapshot_home);
  EXPECT_FALSE(rows.empty());
  EXPECT_EQ(rows, lines_of(cluster.Dump(0), "city_to_country"));
  const std::string batch_ids = DumpBatchIds(snapshot_home);
  EXPECT_TRUE(Contains(batch_ids, "city_to_country/meta: content_version = " + std::to_string(offer.batches) + " "))
      << batch_ids;
  EXPECT_EQ(batch_ids, lines_of(DumpBatchIds(cluster.home(0)), "city_to_country"));
}

// snapshot.mid_transfer: the node dies once a snapshot's first chunk is on its way; restarted, it has forgotten
// the token, cleared outgoing/, and serves the snapshot again.
TEST(StorageNode, ANodeKilledMidSnapshotServesItAgainAfterARestart) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_EQ(cluster.Load(ExampleDataFiles()).exit_code, 0);
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  ASSERT_TRUE(cluster.StartNode(0, {"PLANB_FAULT=snapshot.mid_transfer"})) << cluster.process(0).log();

  zmq::context_t context;
  Token token;
  {
    testing::RawSender raw(context, cluster.endpoint(0));
    raw.Request(protocol::Command::kSnapshot, protocol::EncodeSnapshot({"city_to_country", 0, 0}));
    const testing::RawReply reply = raw.Receive();
    protocol::SnapshotOffer offer;
    ASSERT_TRUE(protocol::DecodeSnapshotOffer(reply.payload, &offer).ok()) << reply.payload;
    token = offer.token;
    raw.Request(protocol::Command::kFetch, protocol::EncodeFetch({offer.token, 0, offer.chunk_size}));
    ASSERT_EQ(cluster.process(0).WaitForDeath(), SIGKILL) << cluster.process(0).log();
  }
  ASSERT_FALSE(std::filesystem::is_empty(cluster.home(0) + "/outgoing"));  // the dead node's zip

  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  EXPECT_TRUE(std::filesystem::is_empty(cluster.home(0) + "/outgoing"));
  testing::RawSender raw(context, cluster.endpoint(0));
  raw.Request(protocol::Command::kFetch, protocol::EncodeFetch({token, 0, 100}));
  EXPECT_EQ(protocol::CodeFromWire(raw.ReceiveError().code), Code::kNotFound);
  raw.Request(protocol::Command::kSnapshot, protocol::EncodeSnapshot({"city_to_country", 0, 0}));
  const testing::RawReply again = raw.Receive();
  EXPECT_EQ(again.header.command, static_cast<uint16_t>(protocol::Command::kSnapshotOffer)) << again.payload;
}

// serve maintains its shards on a schedule (maintain_interval; the first pass soon after it starts): here a shard
// whose map is no longer configured is deleted (delete_orphans_after = 0s) and the log says so.
TEST(StorageNode, ServeMaintainsOnASchedule) {
  ::planb::testing::ClusterFixture cluster(1);
  cluster.top_level_extra = "maintain_interval = 1s\ndelete_orphans_after = 0s\n";
  const std::string orphan = cluster.home(0) + "/shards/map_gone_from_config";
  std::filesystem::create_directories(orphan);
  ::planb::testing::WriteFile(orphan + "/data.mdb", "");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  EXPECT_TRUE(::planb::testing::WaitUntil(
      [&] {
        return !std::filesystem::exists(orphan) &&
               cluster.process(0).log().find("maintenance: orphan shard map_gone_from_config deleted") !=
                   std::string::npos;
      },
      {cluster.home(0) + "/shards", cluster.process(0).log_file()}))
      << cluster.process(0).log();
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// A storage node's home may hold snapshots (a reader shared it before the node joined node_list): serve deletes
// the superseded ones on its schedule, keeping the newest, as `planb cleanup` would.
TEST(StorageNode, ServeDeletesSupersededSnapshotsOnASchedule) {
  ::planb::testing::ClusterFixture cluster(1);
  const std::string map_dir = cluster.home(0) + "/snapshots/country_to_capital";
  std::filesystem::create_directories(map_dir + "/1700000000000");
  std::filesystem::create_directories(map_dir + "/1700000005000");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  // The log line follows the deletion: wait for both.
  EXPECT_TRUE(::planb::testing::WaitUntil(
      [&] {
        return !std::filesystem::exists(map_dir + "/1700000000000") &&
               cluster.process(0).log().find("cleanup: removed") != std::string::npos;
      },
      {map_dir, cluster.process(0).log_file()}))
      << cluster.process(0).log();
  EXPECT_TRUE(std::filesystem::exists(map_dir + "/1700000005000"));
}

}  // namespace
}  // namespace planb
