// A client's costly remote reads cannot starve the others: a real CURVE node whose reads of one map stall (the
// read.stall fault: rows that cost a millisecond each, as megabyte rows compared against long needles do) gives
// that map's client at most one of its three read threads and four queued reads, serves another client's lookup
// meanwhile, and ends the stalled reads within moments of SIGTERM instead of at remote_read_timeout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"
#include "tests/support/read_requests.h"

namespace planb {
namespace {

using ::planb::testing::ClientSection;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kStalled[] = "country_to_capital";

struct Client {
  std::string name, rights, maps;  // maps "": every map
};

// CURVE on, the loader "proc" with upload on every map, and each of `clients` with a key of its own.
void SecureWithClients(ClusterFixture& cluster, const std::vector<Client>& clients) {
  cluster.EnableCurve();
  std::string sections = ClientSection("proc", cluster.key("proc").public_key, "upload");
  for (const Client& c : clients) sections += ClientSection(c.name, cluster.NewKey(c.name).public_key, c.rights, c.maps);
  cluster.client_sections = sections;
}

TEST(ReadFairness, AGreedyClientHoldsOneReadThreadAnotherIsServedAndStopEndsTheStalls) {
  ClusterFixture cluster(1);
  SecureWithClients(cluster, {{"greedy", "read", kStalled}, {"reader", "read", ""}});
  // Caps far enough away that only the stop can end the stalled reads within this test's waits (1 MiB a
  // millisecond reaches 1 TiB after 17 minutes).
  cluster.top_level_extra =
      "remote_read_timeout = 10m\nidle_connection_timeout = 20m\nmax_remote_bytes_examined = 1TiB\n";
  ASSERT_TRUE(cluster.StartNode(0, {std::string("PLANB_FAULT=read.stall:") + kStalled}));
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles()));

  zmq::context_t context;
  testing::RawSender greedy(context, cluster.endpoint(0),
                            CurveClientKeys{cluster.key("node1").public_key, cluster.key("greedy")});
  const std::string query = protocol::EncodeRead(testing::QueryRead(kStalled));
  for (int i = 0; i < 4; ++i) greedy.Request(protocol::Command::kRead, query);
  greedy.Request(protocol::Command::kRead, query);  // the fifth: over the client's share of the queue
  EXPECT_THAT(greedy.ReceiveError().message,
              HasSubstr("busy: this client has 4 READ requests in progress, the most one client may have (4)"));

  // Before the per-client share, greedy's reads held all three threads and this lookup timed out.
  cluster.WriteReaderConfig("reader");
  for (int i = 0; i < 3; ++i) {
    const ProcessResult r = cluster.RunOnReader("reader", {"lookup", "--remote", "city_to_country", "Praia"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "Cape Verde\n");
  }

  // Stop ends the stalled read at the read's next check, not at a cap minutes away.
  EXPECT_EQ(cluster.process(0).Stop(std::chrono::seconds(5 * testing::TestTimeScale())), 0)
      << cluster.process(0).log();
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("stopped"));
}

TEST(ReadFairness, AStalledReadEndsAtTheDeadlineWithAnErrorThatSaysSo) {
  ClusterFixture cluster(1);
  cluster.top_level_extra = "remote_read_timeout = 300ms\n";
  ASSERT_TRUE(cluster.StartNode(0, {std::string("PLANB_FAULT=read.stall:") + kStalled}));
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles()));
  cluster.WriteReaderConfig("reader");
  const ProcessResult r = cluster.RunOnReader("reader", {"query", "--remote", kStalled});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("remote read cap: ran longer than 300 ms (the node's remote_read_timeout)"));
}

TEST(ReadFairness, RowBytesAreChargedAgainstMaxRemoteBytesExamined) {
  ClusterFixture cluster(1);
  cluster.top_level_extra = "max_remote_bytes_examined = 1KiB\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles()));
  cluster.WriteReaderConfig("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"query", "--remote", kStalled});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("remote read cap: more than 1024 bytes examined (the node's max_remote_bytes_examined)"));
  r = cluster.RunOnReader("reader", {"lookup", "--remote", kStalled, "Albania"});  // a lookup examines no scan
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
}

// A snapshot token is the client's it was offered to: another client with the same right on the same map, holding
// the token (as one read from the log could before), is told the token is unknown; the log shows a token's
// first 8 hex digits only.
TEST(SnapshotTokens, AreTheirClientsAndNeverLoggedWhole) {
  ClusterFixture cluster(1);
  SecureWithClients(cluster, {{"alice", "snapshot", kStalled}, {"mallory", "snapshot", kStalled}});
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles()));

  zmq::context_t context;
  const std::string node_key = cluster.key("node1").public_key;
  testing::RawSender alice(context, cluster.endpoint(0), CurveClientKeys{node_key, cluster.key("alice")});
  testing::RawSender mallory(context, cluster.endpoint(0), CurveClientKeys{node_key, cluster.key("mallory")});
  alice.Request(protocol::Command::kSnapshot, protocol::EncodeSnapshot({kStalled, 0, 0}));
  const testing::RawReply offered = alice.Receive();
  ASSERT_EQ(offered.header.command, static_cast<uint16_t>(protocol::Command::kSnapshotOffer)) << offered.payload;
  protocol::SnapshotOffer offer;
  ASSERT_TRUE(protocol::DecodeSnapshotOffer(offered.payload, &offer).ok());
  ASSERT_GT(offer.total_size, 0u);
  const uint32_t length = static_cast<uint32_t>(std::min<uint64_t>(offer.total_size, offer.chunk_size));

  mallory.Request(protocol::Command::kFetch, protocol::EncodeFetch({offer.token, 0, length}));
  const protocol::ErrorReply refused = mallory.ReceiveError();
  EXPECT_EQ(refused.code, static_cast<uint16_t>(Code::kNotFound));
  EXPECT_THAT(refused.message, HasSubstr("unknown snapshot token " + offer.token.Shown() +
                                         " (never offered to this client"));

  alice.Request(protocol::Command::kFetch, protocol::EncodeFetch({offer.token, 0, length}));
  const testing::RawReply data = alice.Receive();
  EXPECT_EQ(data.header.command, static_cast<uint16_t>(protocol::Command::kFetchData));
  EXPECT_EQ(data.data.size(), length);

  const std::string log = cluster.process(0).log();
  EXPECT_THAT(log, HasSubstr("to client alice as token " + offer.token.Shown()));
  EXPECT_THAT(log, ::testing::Not(HasSubstr(offer.token.Hex())));
}

}  // namespace
}  // namespace planb
