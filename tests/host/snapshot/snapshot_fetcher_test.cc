// FetchSnapshot against scripted nodes (real ROUTER sockets on tcp://127.0.0.1:* answering by a script, so that every
// malformed reply a broken node could send is covered) and dead endpoints. The real storage node is exercised in
// snapshot_manager_cluster_test.cc.
#include "host/snapshot/snapshot_fetcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Bytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

class SnapshotFetcherTest : public ::testing::Test {
 protected:
  // A cluster of the given endpoints, named node1, node2, ...
  ClusterConfig Cluster(const std::vector<std::string>& endpoints) const {
    ClusterConfig cluster;
    cluster.node_name = "reader";
    cluster.request_timeout_ms = 300;
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const std::string name = "node" + std::to_string(i + 1);
      cluster.node_list.push_back(name);
      cluster.nodes[name] = NodeConfig{name, endpoints[i]};
    }
    return cluster;
  }
  Status Fetch(const ClusterConfig& cluster, const ContentVersion& have = {}, const FetchCheck& check = {}) {
    outcome_ = FetchOutcome();
    return FetchSnapshot(context_, cluster, "m", have, zip_, &outcome_,
                         [this](uint64_t done, uint64_t total) { progress_.emplace_back(done, total); }, check);
  }
  // The fetch failed and left nothing behind.
  void ExpectNothingWritten() {
    EXPECT_FALSE(fs::exists(zip_));
    EXPECT_FALSE(fs::exists(zip_ + ".part"));
  }
  // One scripted node whose FETCH replies `tamper` changes: the fetch fails naming node1 and `reason`.
  void ExpectNodeFails(ScriptedNode::Script script, const std::string& reason) {
    ScriptedNode node(context_, std::move(script));
    const Status s = Fetch(Cluster({node.endpoint()}));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Code::kIOError);
    EXPECT_THAT(s.message(), StartsWith("snapshot of m: no storage node could provide one: node1 ("));
    EXPECT_THAT(s.message(), HasSubstr(reason));
    ExpectNothingWritten();
  }

  // A node offering its whole snapshot, at version {5, 0x55}.
  ScriptedNode::Script WholeOfferAt5() const {
    ScriptedNode::Script script;
    script.zip = zip_bytes_;
    script.offer.batches = 5;
    script.offer.digest = 0x55;
    return script;
  }

  zmq::context_t context_;
  TempDir dir_;
  const std::string zip_ = dir_ / "fetched.zip";
  const std::string zip_bytes_ = Bytes(5500, 1);
  FetchOutcome outcome_;
  std::vector<std::pair<uint64_t, uint64_t>> progress_;
};

TEST_F(SnapshotFetcherTest, FetchesTheZipFromTheFirstNodeThatAnswers) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.offer.batches = 3;
  script.offer.digest = 0xabcdef;
  script.offer.create_time_ms = 1700000000123;
  ScriptedNode node(context_, script);
  const Status s = Fetch(Cluster({node.endpoint(), UnusedEndpoint(context_)}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(outcome_.not_modified);
  EXPECT_EQ(outcome_.node, "node1");
  EXPECT_EQ(outcome_.bytes, zip_bytes_.size());
  EXPECT_EQ(outcome_.version, (ContentVersion{3, 0xabcdef}));
  EXPECT_EQ(outcome_.node_create_time_ms, 1700000000123);
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
  EXPECT_FALSE(fs::exists(zip_ + ".part"));
  EXPECT_EQ(node.fetches(), 6);  // 5 chunks of 1000 bytes and one of 500
  ASSERT_EQ(progress_.size(), 6u);
  EXPECT_EQ(progress_.front(), std::make_pair(uint64_t{1000}, uint64_t{5500}));
  EXPECT_EQ(progress_.back(), std::make_pair(uint64_t{5500}, uint64_t{5500}));
}

// A node that answers every FETCH at once with one byte (chunk size 1) never times out; below
// min_transfer_rate over a window of 2 x request_timeout it is given up for the next node (it held `planb lookup`
// for minutes before).
TEST_F(SnapshotFetcherTest, ANodeTricklingBytesIsGivenUpForTheNext) {
  const std::string big = Bytes(2 << 20, 7);
  ScriptedNode::Script trickle;
  trickle.zip = big;
  trickle.offer.chunk_size = 1;
  ScriptedNode node1(context_, trickle);
  ScriptedNode::Script good;
  good.zip = big;
  good.offer.chunk_size = 1 << 20;
  ScriptedNode node2(context_, good);
  ClusterConfig cluster = Cluster({node1.endpoint(), node2.endpoint()});
  cluster.min_transfer_rate = 1 << 20;
  Status s = Fetch(cluster);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(outcome_.node, "node2");
  EXPECT_EQ(ReadFile(zip_), big);
  fs::remove(zip_);
  cluster = Cluster({node1.endpoint()});
  cluster.min_transfer_rate = 1 << 20;
  s = Fetch(cluster);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node1 (too slow: "));
  EXPECT_THAT(s.message(), HasSubstr("less than min_transfer_rate of 1048576 bytes/s"));
  ExpectNothingWritten();
}

// An offer larger than the room on this node's disk is refused before a byte is written.
TEST_F(SnapshotFetcherTest, AnOfferLargerThanTheFreeDiskIsRefusedBeforeWriting) {
  ScriptedNode::Script huge;
  huge.zip = zip_bytes_;
  huge.fill_offer = false;
  huge.offer.total_size = uint64_t{1} << 60;
  huge.offer.checksum = 1;
  ScriptedNode node(context_, huge);
  ClusterConfig cluster = Cluster({node.endpoint()});
  cluster.max_batch_size = UINT64_MAX;
  const Status s = Fetch(cluster);
  EXPECT_EQ(s.code(), Code::kFull) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("not enough disk for the 1152921504606846976-byte zip offered"));
  EXPECT_EQ(node.fetches(), 0);
  ExpectNothingWritten();
}

TEST_F(SnapshotFetcherTest, PutsChunksArrivingOutOfOrderInPlace) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.reorder = true;
  ScriptedNode node(context_, script);
  const Status s = Fetch(Cluster({node.endpoint()}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
}

TEST_F(SnapshotFetcherTest, FailsOverToTheNextNodeAndNamesNobodyOnSuccess) {
  ScriptedNode::Script bad;
  bad.zip = zip_bytes_;
  bad.tamper = [](const protocol::FetchRequest&, protocol::FetchData* data, std::string*) {
    data->token = Token{0, 7};
    return true;
  };
  ScriptedNode node1(context_, bad);
  ScriptedNode::Script good;
  good.zip = zip_bytes_;
  ScriptedNode node2(context_, good);
  const Status s = Fetch(Cluster({UnusedEndpoint(context_), node1.endpoint(), node2.endpoint()}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(outcome_.node, "node3");
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
}

TEST_F(SnapshotFetcherTest, WrongTokenFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest&, protocol::FetchData* data, std::string*) {
    data->token = Token{0, 7};
    return true;
  };
  ExpectNodeFails(script, "FETCH_DATA for token 00000000..., expected 00000000...");
}

TEST_F(SnapshotFetcherTest, WrongOffsetFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest& fetch, protocol::FetchData* data, std::string*) {
    if (fetch.offset == 2000) data->offset = 3000;
    return true;
  };
  ExpectNodeFails(script, "FETCH_DATA for offset 3000, asked for offset 2000");
}

TEST_F(SnapshotFetcherTest, MoreBytesThanAskedFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest&, protocol::FetchData*, std::string* bytes) {
    *bytes += "x";
    return true;
  };
  ExpectNodeFails(script, "FETCH_DATA with 1001 bytes at offset 0, more than the 1000 asked for");
}

TEST_F(SnapshotFetcherTest, NoBytesBeforeTheEndFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest& fetch, protocol::FetchData*, std::string* bytes) {
    if (fetch.offset >= 3000) bytes->clear();
    return true;
  };
  ExpectNodeFails(script, "FETCH_DATA with no bytes at offset 3000, before the end of the 5500-byte zip");
}

TEST_F(SnapshotFetcherTest, FewerBytesThanAskedFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest& fetch, protocol::FetchData*, std::string* bytes) {
    if (fetch.offset == 1000) bytes->resize(10);
    return true;
  };
  ExpectNodeFails(script, "FETCH_DATA with 10 of the 1000 bytes asked for at offset 1000 of the 5500-byte zip");
}

TEST_F(SnapshotFetcherTest, ChecksumMismatchFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest& fetch, protocol::FetchData*, std::string* bytes) {
    if (fetch.offset == 4000) (*bytes)[5] ^= 0x5a;
    return true;
  };
  ExpectNodeFails(script, "checksum mismatch: the 5500-byte zip hashes to ");
}

TEST_F(SnapshotFetcherTest, ASilentNodeTimesOut) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.tamper = [](const protocol::FetchRequest& fetch, protocol::FetchData*, std::string*) {
    return fetch.offset < 2000;
  };
  ExpectNodeFails(script, "timed out after 300 ms waiting for the zip's bytes at offset 2000 of 5500");
}

TEST_F(SnapshotFetcherTest, ANodeThatNeverAnswersTimesOut) {
  SilentNode silent(context_);
  const Status s = Fetch(Cluster({silent.endpoint()}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(),
            "snapshot of m: no storage node could provide one: node1 (timed out after 300 ms waiting for the "
            "SNAPSHOT_OFFER)");
  ExpectNothingWritten();
}

// Issue 11 #15: a node that is down is named as refusing the connection, not "timed out" after the timeout.
TEST_F(SnapshotFetcherTest, ANodeThatIsDownRefusesTheConnection) {
  const std::string down = UnusedEndpoint(context_);
  const Status s = Fetch(Cluster({down}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(), "snapshot of m: no storage node could provide one: node1 (connection refused by " + down + ")");
  ExpectNothingWritten();
}

TEST_F(SnapshotFetcherTest, ABusyNodeIsSkipped) {
  ScriptedNode::Script script;
  script.snapshot_error = protocol::ErrorReply{static_cast<uint16_t>(Code::kFull), "busy: 4 SNAPSHOT requests"};
  ExpectNodeFails(script, "node1 (busy: 4 SNAPSHOT requests)");
}

TEST_F(SnapshotFetcherTest, AnErrorReplyToFetchFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.fetch_error = [](const protocol::FetchRequest& fetch) -> std::optional<protocol::ErrorReply> {
    if (fetch.offset < 1000) return std::nullopt;
    return protocol::ErrorReply{static_cast<uint16_t>(Code::kNotFound), "FETCH for unknown snapshot token"};
  };
  ExpectNodeFails(script, "node1 (FETCH for unknown snapshot token (at offset 1000 of 5500))");
}

TEST_F(SnapshotFetcherTest, BadOffersFailTheNode) {
  {
    ScriptedNode::Script script;
    script.zip = zip_bytes_;
    script.offer.chunk_size = protocol::kMaxUploadChunkSize + 1;
    ExpectNodeFails(script, "SNAPSHOT_OFFER with chunk size 16777217 (must be 1 to 16777216 bytes)");
  }
  {
    ScriptedNode::Script script;
    ExpectNodeFails(script, "SNAPSHOT_OFFER of an empty zip");
  }
  {
    // Nothing held is never current: a node saying so would leave the requester without a snapshot.
    ScriptedNode::Script script;
    script.offer.not_modified = 1;
    ExpectNodeFails(script, "answered not modified to a request holding no snapshot");
  }
}

TEST_F(SnapshotFetcherTest, AnOfferLargerThanMaxBatchSizeFailsTheNodeBeforeAnythingIsWritten) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  ScriptedNode node(context_, std::move(script));
  ClusterConfig cluster = Cluster({node.endpoint()});
  cluster.max_batch_size = 5499;
  const Status s = Fetch(cluster);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("node1 (SNAPSHOT_OFFER of 5500 bytes, more than max_batch_size (5499))"));
  EXPECT_EQ(node.fetches(), 0);
  ExpectNothingWritten();
}

TEST_F(SnapshotFetcherTest, ANodeBehindTheSnapshotHeldIsSkipped) {
  ScriptedNode::Script behind;
  behind.zip = zip_bytes_;
  behind.offer.batches = 3;
  ScriptedNode node1(context_, std::move(behind));
  ScriptedNode::Script ahead;
  ahead.zip = zip_bytes_;
  ahead.offer.batches = 6;
  ScriptedNode node2(context_, std::move(ahead));
  const Status s = Fetch(Cluster({node1.endpoint(), node2.endpoint()}), ContentVersion{5, 0x1234});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(outcome_.node, "node2");
  EXPECT_EQ(outcome_.version.batches, 6u);
  EXPECT_EQ(node1.fetches(), 0) << "nothing is pulled from a node that is behind";
  ScriptedNode::Script alone;
  alone.zip = zip_bytes_;
  alone.offer.batches = 3;
  ScriptedNode only(context_, std::move(alone));
  fs::remove(zip_);
  const Status refused = Fetch(Cluster({only.endpoint()}), ContentVersion{5, 0x1234});
  EXPECT_EQ(refused.code(), Code::kIOError);
  EXPECT_THAT(refused.message(), HasSubstr("the snapshot held (content version 5) is ahead of every storage node "
                                           "that answered: node1 has content version 3"));
  EXPECT_TRUE(outcome_.held_ahead_of_nodes);
  ExpectNothingWritten();
}

// Issue 38: a snapshot with a forged content version (9e18) was installed, and every honest node was then refused
// as "behind" until an operator deleted files. Nodes that agree on a lower version are said to, with the way back.
TEST_F(SnapshotFetcherTest, NodesThatAgreeBelowTheSnapshotHeldAreSaidToAndAcceptOlderTakesTheirs) {
  std::vector<std::unique_ptr<ScriptedNode>> nodes;
  for (int i = 0; i < 2; ++i) {
    ScriptedNode::Script honest;
    honest.zip = zip_bytes_;
    honest.offer.batches = 7;
    honest.offer.digest = 0x77;
    nodes.push_back(std::make_unique<ScriptedNode>(context_, std::move(honest)));
  }
  const ClusterConfig cluster = Cluster({nodes[0]->endpoint(), nodes[1]->endpoint()});
  const ContentVersion forged{9000000000000000000ull, 0xbad};
  Status s = Fetch(cluster, forged);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(),
            "snapshot of m: the snapshot held (content version 9000000000000000000) is ahead of every storage node "
            "that answered: node1, node2 have content version 7. Merges only add batches, so the held one claims "
            "batches no node has (a node that forged its version, or nodes whose data was reset); it keeps serving. "
            "To install what the nodes have: planb refresh --accept-older m");
  EXPECT_TRUE(outcome_.held_ahead_of_nodes);
  EXPECT_EQ(outcome_.nodes_version, (ContentVersion{7, 0x77}));
  ExpectNothingWritten();
  // Accepting older: the first node's copy is downloaded and kept.
  outcome_ = FetchOutcome();
  s = FetchSnapshot(context_, cluster, "m", forged, zip_, &outcome_, {}, {}, /*accept_older=*/true);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(outcome_.node, "node1");
  EXPECT_EQ(outcome_.version, (ContentVersion{7, 0x77}));
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
}

TEST_F(SnapshotFetcherTest, NodesBehindAtDifferentVersionsAreOnlyBehind) {
  std::vector<std::unique_ptr<ScriptedNode>> nodes;
  for (uint64_t batches : {3u, 4u}) {
    ScriptedNode::Script lagging;
    lagging.zip = zip_bytes_;
    lagging.offer.batches = batches;
    nodes.push_back(std::make_unique<ScriptedNode>(context_, std::move(lagging)));
  }
  const Status s = Fetch(Cluster({nodes[0]->endpoint(), nodes[1]->endpoint()}), ContentVersion{5, 0x1234});
  EXPECT_THAT(s.message(), StartsWith("snapshot of m: no storage node could provide one: node1 (behind: its copy has 3 "
                                      "batches merged, the snapshot held has 5), node2 (behind: its copy has 4"));
  EXPECT_FALSE(outcome_.held_ahead_of_nodes);
}

TEST_F(SnapshotFetcherTest, NotModifiedIsASuccessThatWritesNothing) {
  ScriptedNode::Script script;
  script.offer.not_modified = 1;
  script.offer.batches = 4;
  script.offer.digest = 0x99;
  ScriptedNode node(context_, script);
  const Status s = Fetch(Cluster({node.endpoint()}), ContentVersion{4, 0x99});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(outcome_.not_modified);
  EXPECT_EQ(outcome_.node, "node1");
  EXPECT_EQ(outcome_.version, (ContentVersion{4, 0x99}));
  EXPECT_EQ(node.fetches(), 0);
  ExpectNothingWritten();
}

TEST_F(SnapshotFetcherTest, ANodeThatPredatesSnapshotSinceIsAskedSnapshotNext) {
  ScriptedNode node(context_, WholeOfferAt5());
  outcome_ = FetchOutcome();
  const SnapshotSince since{ContentVersion{4, 0x99}, std::nullopt};
  const Status s = FetchSnapshot(context_, Cluster({node.endpoint()}), "m", since.have, zip_, &outcome_, {}, {},
                                 /*accept_older=*/false, since);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(node.since_requests(), 1);  // answered "unknown command", as an older node does
  EXPECT_EQ(node.snapshots(), 1);
  EXPECT_FALSE(outcome_.diff);
  EXPECT_TRUE(outcome_.diff_refused.empty());
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
}

TEST_F(SnapshotFetcherTest, WithoutASnapshotHeldOrWithAcceptOlderNoDiffIsAskedFor) {
  ScriptedNode node(context_, WholeOfferAt5());
  const SnapshotSince since{ContentVersion{4, 0x99}, std::nullopt};
  ASSERT_TRUE(FetchSnapshot(context_, Cluster({node.endpoint()}), "m", ContentVersion(), zip_, &outcome_, {}, {},
                            false, since)
                  .ok());
  fs::remove(zip_);
  ASSERT_TRUE(FetchSnapshot(context_, Cluster({node.endpoint()}), "m", since.have, zip_, &outcome_, {}, {},
                            /*accept_older=*/true, since)
                  .ok());
  EXPECT_EQ(node.since_requests(), 0);
  EXPECT_EQ(node.snapshots(), 2);
}

TEST_F(SnapshotFetcherTest, ADiffOfferedToSnapshotFailsTheNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  script.offer.not_modified = protocol::kOfferDiff;
  script.offer.batches = 5;
  ExpectNodeFails(script, "a diff offered in answer to SNAPSHOT");
}

TEST_F(SnapshotFetcherTest, NoDataOnAnyNodeIsNotFound) {
  ScriptedNode::Script script;
  script.snapshot_error =
      protocol::ErrorReply{static_cast<uint16_t>(Code::kNotFound), "nothing merged into m on this node yet"};
  ScriptedNode node1(context_, script);
  ScriptedNode node2(context_, script);
  const Status s = Fetch(Cluster({node1.endpoint(), node2.endpoint()}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(),
            "snapshot of m: no storage node has data of it: node1 (nothing merged into m on this node yet), node2 "
            "(nothing merged into m on this node yet)");
}

TEST_F(SnapshotFetcherTest, NoDataOnOneNodeAndAnotherDownIsAnIOError) {
  ScriptedNode::Script script;
  script.snapshot_error = protocol::ErrorReply{static_cast<uint16_t>(Code::kNotFound), "nothing merged into m"};
  ScriptedNode node1(context_, script);
  const Status s = Fetch(Cluster({node1.endpoint(), UnusedEndpoint(context_)}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("node1 (nothing merged into m), node2 (connection refused by tcp://"));
}

TEST_F(SnapshotFetcherTest, OtherErrorRepliesNameTheirCode) {
  ScriptedNode::Script script;
  script.snapshot_error = protocol::ErrorReply{static_cast<uint16_t>(Code::kInvalidArgument), "bad map name"};
  ExpectNodeFails(script, "node1 (SNAPSHOT refused (invalid argument): bad map name)");
}

TEST_F(SnapshotFetcherTest, RefusedByTheCheckTriesTheNextNode) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  ScriptedNode node1(context_, script);
  ScriptedNode node2(context_, script);
  int checks = 0;
  const Status s = Fetch(Cluster({node1.endpoint(), node2.endpoint()}), {},
                         [&checks, this](const std::string& path, const FetchOutcome& outcome) {
                           EXPECT_EQ(path, zip_);
                           EXPECT_EQ(ReadFile(path), zip_bytes_);
                           EXPECT_EQ(outcome.bytes, zip_bytes_.size());
                           return ++checks == 1 ? Status::Corruption("snapshot does not verify: bad page")
                                                : Status::Ok();
                         });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(checks, 2);
  EXPECT_EQ(outcome_.node, "node2");
  EXPECT_EQ(ReadFile(zip_), zip_bytes_);
}

TEST_F(SnapshotFetcherTest, ALocalDiskErrorFromTheCheckEndsTheFetch) {
  ScriptedNode::Script script;
  script.zip = zip_bytes_;
  ScriptedNode node1(context_, script);
  ScriptedNode node2(context_, script);
  const Status s = Fetch(Cluster({node1.endpoint(), node2.endpoint()}), {},
                         [](const std::string&, const FetchOutcome&) { return Status::IOError("disk gone"); });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "snapshot of m from node1: disk gone");
  EXPECT_EQ(node2.snapshots(), 0);
  ExpectNothingWritten();
}

TEST_F(SnapshotFetcherTest, RefusesMissingNodeListEndpointAndExistingZip) {
  Status s = Fetch(ClusterConfig());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "snapshot of m: no storage nodes to fetch from (the config has no node_list)");

  ClusterConfig no_endpoint;
  no_endpoint.node_list = {"node1"};
  s = Fetch(no_endpoint);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("node1 (no endpoint: add [node.node1] endpoint = tcp://HOST:PORT)"));

  WriteFile(zip_, "mine");
  s = Fetch(Cluster({UnusedEndpoint(context_)}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "snapshot of m: " + zip_ + " already exists");
  EXPECT_EQ(ReadFile(zip_), "mine");
}

}  // namespace
}  // namespace planb::testing
