// Catch-up between storage nodes (issue 39), with real `planb serve` processes on loopback: a node started on an
// empty home, and one that was down while loads went on with write_quorum = 1, fetch the batches they lack from
// their peer by themselves and end with the same rows and batches; a node that cannot catch up refuses remote
// reads; a corrupt batch from a peer is refused; peers' requests are checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>
#include <lmdb.h>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"
#include "support/cluster_fixture.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::planb::testing::ClientSection;
using ::planb::testing::ClusterFixture;
using ::planb::testing::WriteHitsFiles;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::WaitUntil;
using ::planb::testing::WriteFile;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// Quick passes for the test's sake; the default is 10 s (docs/storage-nodes.md).
constexpr char kQuickCatchUp[] = "catch_up_interval = 300ms\n";

// Waits until node `i` holds exactly node `of`'s rows and merged batches.
::testing::AssertionResult Converges(ClusterFixture& cluster, int i, int of) {
  const bool same = WaitUntil(
      [&] { return cluster.Dump(i) == cluster.Dump(of) && DumpBatchIds(cluster.home(i)) == DumpBatchIds(cluster.home(of)); },
      {cluster.process(i).log_file(), cluster.process(of).log_file()}, std::chrono::seconds(60));
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "node" << i + 1 << " did not converge to node" << of + 1 << "; its log:\n"
                                       << cluster.process(i).log() << "\nnode" << of + 1 << "'s log:\n"
                                       << cluster.process(of).log();
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(CatchUpCluster, ANodeStartedOnAnEmptyHomeConvergesWithoutACommand) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  cluster.top_level_extra = kQuickCatchUp;
  cluster.ReserveEndpoints();
  const std::vector<std::string> counts = WriteHitsFiles(cluster.dir(), 3, 200);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> first = Concat(ExampleDataFiles(), {counts[0], counts[1]});
  ASSERT_TRUE(cluster.LoadAndWaitMerged(first, 2));
  // The merged zips are kept for peers.
  EXPECT_FALSE(std::filesystem::is_empty(cluster.home(0) + "/retained"));

  // node2 loses its home: restarted on an empty one, it fetches every batch from node1 while loads go on.
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  std::filesystem::remove_all(cluster.home(1));
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const ProcessResult more = cluster.Load({counts[2]});
  ASSERT_EQ(more.exit_code, 0) << more.out << more.err;
  ASSERT_TRUE(Converges(cluster, 1, 0));
  EXPECT_THAT(cluster.process(1).log(), HasSubstr("catch-up: fetched "));
  EXPECT_THAT(cluster.process(1).log(), HasSubstr("from node node1 and staged them"));
  // Every count once: the rows are those of one node loading every file once.
  EXPECT_EQ(cluster.Dump(1), cluster.ReferenceDump(Concat(first, {counts[2]})));
}

TEST(CatchUpCluster, ANodeRestoredFromAnOldCopyConvergesWithoutACommand) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  cluster.top_level_extra = kQuickCatchUp;
  cluster.ReserveEndpoints();
  const std::vector<std::string> counts = WriteHitsFiles(cluster.dir(), 3, 200);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.LoadAndWaitMerged({counts[0]}, 2));
  // A copy of node2's home taken while it was stopped, then two more loads it takes part in.
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  const std::string backup = cluster.dir() + "/node2-backup";
  std::filesystem::copy(cluster.home(1), backup, std::filesystem::copy_options::recursive);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.LoadAndWaitMerged({counts[1], counts[2]}, 2));
  // node2 restored from the old copy: it fetches the two batches it lost.
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  std::filesystem::remove_all(cluster.home(1));
  std::filesystem::rename(backup, cluster.home(1));
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));
  // In one pass or two (a batch merged less than catch_up_interval ago waits for the next).
  EXPECT_THAT(cluster.process(1).log(), ContainsRegex("catch-up: fetched [12] batch\\(es\\) of map hits from node node1"));
  EXPECT_EQ(cluster.Dump(1), cluster.ReferenceDump(counts));
}

TEST(CatchUpCluster, WithAWriteQuorumOfOneLoadsGoOnWithEitherNodeDownAndTheNodesConverge) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  cluster.top_level_extra = std::string(kQuickCatchUp) + "write_quorum = 1\n";
  cluster.ReserveEndpoints();
  const std::vector<std::string> counts = WriteHitsFiles(cluster.dir(), 4, 200);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);

  ASSERT_EQ(cluster.process(1).Stop(), 0);
  const ProcessResult without_node2 = cluster.Load({counts[0], counts[1]});
  ASSERT_EQ(without_node2.exit_code, 0) << without_node2.out << without_node2.err;
  EXPECT_THAT(without_node2.out, HasSubstr("stored on 1 storage node(s) of 2 (write_quorum 1)"));
  EXPECT_THAT(without_node2.out, HasSubstr("it will get this batch from a node that has it (catch-up)"));
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));

  ASSERT_EQ(cluster.process(0).Stop(), 0);
  const ProcessResult without_node1 = cluster.Load({counts[2], counts[3]});
  ASSERT_EQ(without_node1.exit_code, 0) << without_node1.out << without_node1.err;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(Converges(cluster, 0, 1));
  EXPECT_EQ(cluster.Dump(0), cluster.ReferenceDump(counts));

  // With both nodes down no load has its quorum: refused before anything is staged.
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  const ProcessResult none = cluster.Load({counts[0]});
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_THAT(none.err, HasSubstr("(write_quorum is 1: at least that many nodes must answer)"));
}

// Two nodes that merged two conflicting State batches in opposite orders (each was down for one of the loads,
// with write_quorum = 1) end with the same rows: the newer value, not the one each merged last.
TEST(CatchUpCluster, NodesThatMergedConflictingStateBatchesInOppositeOrdersConverge) {
  ClusterFixture cluster;
  cluster.top_level_extra = "write_quorum = 1\ncatch_up_interval = 0s\n";  // no catch-up until both loads ran
  cluster.ReserveEndpoints();
  const std::string newer = cluster.dir() + "/newer.xml";
  const std::string older = cluster.dir() + "/older.xml";
  WriteFile(newer, "<referenceData xmlns=\"reference-data:2\"><reference><map>city_to_country</map>"
                   "<time>2024-02-01T00:00:00Z</time><key>Paris</key><value>newer</value></reference>"
                   "</referenceData>\n");
  WriteFile(older, "<referenceData xmlns=\"reference-data:2\"><reference><map>city_to_country</map>"
                   "<time>2024-01-01T00:00:00Z</time><key>Paris</key><value>older</value></reference>"
                   "</referenceData>\n");
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const ProcessResult first = cluster.Load({newer});  // node1 alone: newer
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const ProcessResult second = cluster.Load({older});  // node2 alone: older
  ASSERT_EQ(second.exit_code, 0) << second.err;
  ASSERT_TRUE(cluster.WaitMerged(1));
  ASSERT_EQ(cluster.process(1).Stop(), 0);

  // Now each fetches what the other has: node1 merges older after newer, node2 newer after older.
  cluster.top_level_extra = std::string("write_quorum = 1\n") + kQuickCatchUp;
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));
  EXPECT_EQ(cluster.Dump(0), cluster.ReferenceDump({newer, older}));
  EXPECT_EQ(cluster.Dump(0), cluster.ReferenceDump({older, newer}));
  const ProcessResult paris = testing::RunPlanb({"--config", cluster.config(1), "--home", cluster.home(1), "lookup",
                                                 "city_to_country", "Paris"});
  EXPECT_EQ(paris.out, "newer\n") << paris.err;
}

TEST(CatchUpCluster, AnEmptyNodeStartsFromAPeersSnapshotWhenTheBatchesAreNoLongerRetained) {
  ClusterFixture cluster;
  cluster.extra_map_sections = ::planb::testing::kHitsHistogramSection;
  // Nothing is retained: a node that lost its home cannot fetch the batches one by one.
  cluster.top_level_extra = std::string(kQuickCatchUp) + "batch_retention = 0s\n";
  cluster.ReserveEndpoints();
  const std::vector<std::string> counts = WriteHitsFiles(cluster.dir(), 2, 200);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const std::vector<std::string> files = Concat(ExampleDataFiles(), counts);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(files, 2));
  EXPECT_TRUE(std::filesystem::is_empty(cluster.home(0) + "/retained"));

  ASSERT_EQ(cluster.process(1).Stop(), 0);
  std::filesystem::remove_all(cluster.home(1));
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));
  // How many batches the line counts depends on timing (a batch merged less than catch_up_interval ago is left
  // for the next pass); that it installed the snapshot does not.
  EXPECT_THAT(cluster.process(1).log(), ContainsRegex("catch-up: map hits had nothing merged here and node node1 no "
                                                      "longer retains [12] of its batches: installed node1's snapshot"));
  EXPECT_EQ(cluster.Dump(1), cluster.ReferenceDump(files));
}

// Removes every record of merged batches from the shards under `home` (what maintenance prunes after max(7 days,
// twice batch_retention plus a day)), keeping the rows and the content version. The node must be stopped.
void PruneMergedBatchRecords(const std::string& home) {
  for (const auto& shard : std::filesystem::directory_iterator(home + "/shards")) {
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    ASSERT_EQ(mdb_env_set_maxdbs(env, 8), 0);
    ASSERT_EQ(mdb_env_set_mapsize(env, uint64_t{1} << 30), 0);
    ASSERT_EQ(mdb_env_open(env, shard.path().c_str(), 0, 0600), 0) << shard.path();
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    MDB_dbi batches = 0;
    const int rc = mdb_dbi_open(txn, "batches", 0, &batches);
    if (rc == 0) ASSERT_EQ(mdb_drop(txn, batches, 0), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
  }
}

// A map into which nothing was loaded for longer than the records are kept: its peer lists no batch of it, yet
// counts them in its version. A node on an empty home still starts from the peer's snapshot (it was "ready" with
// no data, and not behind by its own measure).
TEST(CatchUpCluster, AnEmptyNodeStartsFromAPeersSnapshotWhenThePeersRecordsWerePruned) {
  ClusterFixture cluster;
  cluster.top_level_extra = kQuickCatchUp;
  cluster.ReserveEndpoints();
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles(), 2));
  const std::string rows = cluster.Dump(0);

  ASSERT_EQ(cluster.process(0).Stop(), 0);
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  PruneMergedBatchRecords(cluster.home(0));
  ASSERT_EQ(DumpBatchIds(cluster.home(0)).find("content:"), std::string::npos) << "records pruned";
  std::filesystem::remove_all(cluster.home(1));
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));
  EXPECT_EQ(cluster.Dump(1), rows);
  EXPECT_THAT(cluster.process(1).log(), ContainsRegex("catch-up: map [a-z_]+ had nothing merged here and node node1 "
                                                      "no longer retains [0-9]+ of its batches: installed node1's "
                                                      "snapshot"));
}

TEST(CatchUpCluster, ANodeBehindRefusesRemoteReadsAndACorruptBatchFromAPeerIsRefused) {
  ClusterFixture cluster;
  cluster.top_level_extra = std::string(kQuickCatchUp) + "write_quorum = 1\n";
  cluster.ReserveEndpoints();
  // node1 flips a byte of every chunk it serves.
  ASSERT_TRUE(cluster.StartNode(0, {"PLANB_FAULT=snapshot.corrupt"})) << cluster.process(0).log();
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(WaitUntil([&] { return cluster.process(1).log().find("catch-up: behind on map city_to_country") !=
                                     std::string::npos &&
                                 cluster.process(1).log().find("could not be fetched or staged") != std::string::npos; },
                        {cluster.process(1).log_file()}))
      << cluster.process(1).log();
  EXPECT_THAT(cluster.process(1).log(), HasSubstr("checksum mismatch"));
  EXPECT_THAT(cluster.process(1).log(), Not(HasSubstr("catch-up: fetched")));
  // Nothing staged or merged, and no fetched zip kept in receive/ (the next pass's partial download, a
  // ".zip.part", may be there: catch-up keeps trying).
  EXPECT_FALSE(std::filesystem::exists(cluster.home(1) + "/shards/city_to_country"));
  for (const char* dir : {"/staging", "/receive"}) {
    for (const auto& entry : std::filesystem::directory_iterator(cluster.home(1) + dir)) {
      const std::string name = entry.path().filename().string();
      EXPECT_FALSE(name.size() >= 4 && name.compare(name.size() - 4, 4, ".zip") == 0) << entry.path();
    }
  }
  // With node1 gone, the only node left has not caught up: it refuses the read rather than answer "no key".
  // Its catch-up passes go on failing to reach node1, and a peer that stops answering is no proof of being caught
  // up: wait for such a pass so that the reads below always follow one (they once raced it).
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  ASSERT_TRUE(WaitUntil([&] { return cluster.process(1).log().find("catch-up: cannot compare map city_to_country "
                                                                   "with node node1") != std::string::npos; },
                        {cluster.process(1).log_file()}))
      << cluster.process(1).log();
  const ProcessResult read = testing::RunPlanb({"--config", cluster.dir() + "/proc.ini", "--home",
                                                cluster.dir() + "/proc-home", "lookup", "--remote",
                                                "city_to_country", "Paris"});
  EXPECT_EQ(read.exit_code, 2) << read.out;
  EXPECT_THAT(read.err, HasSubstr("node2 (catching up: node node2 serves no remote reads of map "));
  EXPECT_THAT(read.out, Not(HasSubstr("no key")));
  // Nor does it hand a reader its partial snapshot.
  cluster.WriteReaderConfig("reader");
  const ProcessResult refresh = cluster.RunOnReader("reader", {"refresh", "city_to_country"});
  EXPECT_NE(refresh.exit_code, 0) << refresh.out;
  EXPECT_THAT(refresh.err, HasSubstr("catching up: node node2 serves no snapshots of map ")) << refresh.err;
  const ProcessResult local = cluster.RunOnReader("reader", {"lookup", "city_to_country", "Paris"});
  EXPECT_NE(local.exit_code, 0) << local.out;  // no snapshot was installed
}

// Asks `endpoint` one request as the client of `keys` (none: plaintext) and returns the reply.
RequestChannel::Reply Ask(const std::string& endpoint, std::optional<CurveClientKeys> keys, protocol::Command command,
                          const std::string& payload) {
  zmq::context_t context;
  uint64_t next_id = 1;
  RequestChannel channel(context, {"node1", endpoint, std::move(keys)}, 5000, &next_id);
  uint64_t id = 0;
  EXPECT_TRUE(channel.Send(command, payload, nullptr, &id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  const Status awaited = channel.Await(RequestChannel::Clock::now() + std::chrono::seconds(10),
                                       [id](uint64_t got) { return got == id; }, &reply, &timed_out);
  EXPECT_TRUE(awaited.ok()) << awaited.message();
  EXPECT_FALSE(timed_out);
  return reply;
}

protocol::ErrorReply ErrorOf(const RequestChannel::Reply& reply) {
  protocol::ErrorReply error;
  EXPECT_EQ(reply.command, static_cast<uint16_t>(protocol::Command::kError));
  EXPECT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
  return error;
}

TEST(CatchUpCluster, PeersRequestsAreCheckedAndOnlyNodeKeysMayAskThem) {
  ClusterFixture cluster;
  cluster.top_level_extra = kQuickCatchUp;
  cluster.EnableCurve();
  cluster.client_sections = ClientSection("proc", cluster.key("proc").public_key, "upload, read, snapshot");
  cluster.ReserveEndpoints();
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles(), 2));

  const CurveKeyPair& node2 = cluster.key("node2");
  const CurveKeyPair& proc = cluster.key("proc");
  const std::string server = cluster.key("node1").public_key;
  // node2's key may list what node1 merged.
  {
    const RequestChannel::Reply reply = Ask(cluster.endpoint(0), CurveClientKeys{server, node2},
                                            protocol::Command::kListMerged,
                                            protocol::EncodeListMerged({"city_to_country", "", 10}));
    ASSERT_EQ(reply.command, static_cast<uint16_t>(protocol::Command::kMergedList));
    protocol::MergedList list;
    ASSERT_TRUE(protocol::DecodeMergedList(reply.payload, &list).ok());
    ASSERT_FALSE(list.ids.empty());
    EXPECT_EQ(list.ids[0].retained, 1);
    EXPECT_EQ(list.batches, list.ids.size());
  }
  // A client key, however many rights it has, may not.
  EXPECT_THAT(ErrorOf(Ask(cluster.endpoint(0), CurveClientKeys{server, proc}, protocol::Command::kListMerged,
                          protocol::EncodeListMerged({"city_to_country", "", 10})))
                  .message,
              HasSubstr("not authorised for node"));
  EXPECT_THAT(ErrorOf(Ask(cluster.endpoint(0), CurveClientKeys{server, proc}, protocol::Command::kOfferBatch,
                          protocol::EncodeOfferBatch({"content:00"})))
                  .message,
              HasSubstr("not authorised for node"));
  // A batch the node does not retain, and a map it does not have: kNotFound, said as such.
  protocol::ErrorReply missing = ErrorOf(Ask(cluster.endpoint(0), CurveClientKeys{server, node2},
                                             protocol::Command::kOfferBatch, protocol::EncodeOfferBatch({"content:00"})));
  EXPECT_EQ(protocol::CodeFromWire(missing.code), Code::kNotFound);
  EXPECT_THAT(missing.message, HasSubstr("batch content:00 is not retained on this node"));
  protocol::ErrorReply unknown = ErrorOf(Ask(cluster.endpoint(0), CurveClientKeys{server, node2},
                                             protocol::Command::kListMerged,
                                             protocol::EncodeListMerged({"no_such_map", "", 10})));
  EXPECT_EQ(protocol::CodeFromWire(unknown.code), Code::kNotFound);
  EXPECT_THAT(unknown.message, HasSubstr("LIST_MERGED: no map no_such_map on this node"));
  // A malformed request: refused, naming the field.
  EXPECT_THAT(ErrorOf(Ask(cluster.endpoint(0), CurveClientKeys{server, node2}, protocol::Command::kListMerged,
                          protocol::EncodeListMerged({"city_to_country", "", 0})))
                  .message,
              HasSubstr("limit 0 is not 1 to 4096"));

  // And catch-up itself over CURVE: node2 loses its home and comes back with node1's rows.
  ASSERT_EQ(cluster.process(1).Stop(), 0);
  std::filesystem::remove_all(cluster.home(1));
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(Converges(cluster, 1, 0));
}

}  // namespace
}  // namespace planb
