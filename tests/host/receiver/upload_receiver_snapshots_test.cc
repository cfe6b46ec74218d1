// SNAPSHOT and FETCH against a real UploadReceiver on tcp://127.0.0.1:* whose sink is a real StorageNode (its
// SnapshotSource copies real shards), driven by a raw DEALER.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/serve/storage_node.h"
#include "support/map_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;

using protocol::Command;
using ::testing::HasSubstr;

constexpr uint32_t kChunk = 16 * 1024;

class SnapshotReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed") + StateMapSection("d", "direct"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
    AddBatch(0, 5000);
    node_ = std::make_unique<StorageNode>(*runtime_, ServeOptions(), node_log_);
    StartReceiver(Settings());
  }

  ReceiverSettings Settings() const {
    ReceiverSettings settings = TestReceiverSettings(dir_ / "receive");
    settings.chunk_size = kChunk;
    return settings;
  }
  void StartReceiver(const ReceiverSettings& settings, const std::string& fault = "") {
    receiver_.reset();
    receiver_ = std::make_unique<RunningReceiver>(context_, settings, *node_);
    receiver_->Start("tcp://127.0.0.1:*", fault);
  }

  // Merges rows key-<first>.. of map m (values that do not compress to nothing) as one batch.
  void AddBatch(int first, int count) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (int i = first; i < first + count; ++i) {
      rows.emplace_back("key-" + std::to_string(i), std::to_string(Xxh3(std::to_string(i * 7919))));
    }
    ASSERT_TRUE(StageRows(*runtime_, "m", rows).ok());
    MergeReport report;
    const Status s = MergeProcessor(*runtime_).MergePending(&report);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // Sends SNAPSHOT and returns the reply (an offer or an ERROR).
  RawReply Snapshot(RawSender& raw, const std::string& map, const ContentVersion& have = {}) {
    raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({map, have.batches, have.digest}));
    return raw.Receive();
  }
  protocol::SnapshotOffer Offer(RawSender& raw, const std::string& map, const ContentVersion& have = {}) {
    const RawReply reply = Snapshot(raw, map, have);
    protocol::SnapshotOffer offer;
    EXPECT_EQ(reply.header.command, static_cast<uint16_t>(Command::kSnapshotOffer)) << reply.payload;
    EXPECT_TRUE(protocol::DecodeSnapshotOffer(reply.payload, &offer).ok());
    EXPECT_EQ(reply.header.request_id, raw.last_request_id());
    return offer;
  }
  // FETCH of `length` bytes at `offset`; the bytes of the FETCH_DATA reply.
  std::string Fetch(RawSender& raw, Token token, uint64_t offset, uint32_t length) {
    raw.Request(Command::kFetch, protocol::EncodeFetch({token, offset, length}));
    const RawReply reply = raw.Receive();
    EXPECT_EQ(reply.header.command, static_cast<uint16_t>(Command::kFetchData)) << reply.payload;
    EXPECT_EQ(reply.frames, 3u);
    protocol::FetchData data;
    EXPECT_TRUE(protocol::DecodeFetchData(reply.payload, &data).ok());
    EXPECT_EQ(data.token, token);
    EXPECT_EQ(data.offset, offset);
    return reply.data;
  }
  // The whole zip of `offer`, chunk by chunk, as a requester fetches it (stops at the first empty chunk).
  std::string FetchAll(RawSender& raw, const protocol::SnapshotOffer& offer) {
    std::string all;
    while (all.size() < offer.total_size) {
      const std::string chunk = Fetch(raw, offer.token, all.size(), offer.chunk_size);
      if (chunk.empty()) break;
      all += chunk;
    }
    return all;
  }
  std::vector<std::string> OutgoingZips() const {
    std::vector<std::string> zips;
    for (const fs::directory_entry& entry : fs::directory_iterator(runtime_->home().outgoing())) {
      zips.push_back(entry.path().string());
    }
    return zips;
  }
  ContentVersion ShardVersion() {
    std::shared_ptr<MapEnv> shard;
    EXPECT_TRUE(runtime_->OpenShard("m", &shard).ok());
    Txn txn;
    EXPECT_TRUE(txn.Begin(shard->env(), MDB_RDONLY).ok());
    ContentVersion version;
    EXPECT_TRUE(ReadContentVersion(txn.get(), shard->meta(), &version).ok());
    return version;
  }
  // Waits (with the test deadline) until the receiver's log holds `part`.
  bool WaitForLog(const std::string& part) {
    const auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
    while (receiver_->Log().find(part) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::ostringstream node_log_;
  std::unique_ptr<StorageNode> node_;
  zmq::context_t context_;
  std::unique_ptr<RunningReceiver> receiver_;
};

TEST_F(SnapshotReceiverTest, ServesTheZipInChunksWhoseBytesCheckOut) {
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "M");  // map names are case-insensitive
  EXPECT_EQ(offer.not_modified, 0);
  EXPECT_NE(offer.token, Token{});
  EXPECT_EQ(offer.chunk_size, kChunk);
  EXPECT_EQ((ContentVersion{offer.batches, offer.digest}), ShardVersion());
  EXPECT_GT(offer.create_time_ms, 0);
  ASSERT_GT(offer.total_size, 3u * kChunk) << "the zip should span several chunks";
  ASSERT_NE(offer.total_size % kChunk, 0u) << "the last chunk should be short";

  const std::vector<std::string> zips = OutgoingZips();
  ASSERT_EQ(zips.size(), 1u);
  const std::string zip = ReadFile(zips[0]);
  ASSERT_EQ(zip.size(), offer.total_size);

  std::string all;
  while (all.size() < offer.total_size) {
    const std::string chunk = Fetch(raw, offer.token, all.size(), kChunk);
    const uint64_t left = offer.total_size - all.size();
    ASSERT_EQ(chunk.size(), std::min<uint64_t>(kChunk, left));  // fewer bytes only at the end
    all += chunk;
  }
  EXPECT_EQ(Xxh3(all), offer.checksum);
  EXPECT_TRUE(all == zip);
  EXPECT_EQ(Fetch(raw, offer.token, offer.total_size, kChunk), "");  // at the end: no bytes, no error
  // Any offset and any length up to the chunk size, in any order.
  EXPECT_TRUE(Fetch(raw, offer.token, 12345, 1000) == zip.substr(12345, 1000));
  EXPECT_TRUE(Fetch(raw, offer.token, 1, 1) == zip.substr(1, 1));
  EXPECT_THAT(receiver_->Log(), HasSubstr("offering snapshot of m at version " + ShardVersion().ToString()));
}

TEST_F(SnapshotReceiverTest, ARequesterAtTheShardsVersionGetsNotModified) {
  RawSender raw(context_, receiver_->endpoint());
  const ContentVersion version = ShardVersion();
  const protocol::SnapshotOffer offer = Offer(raw, "m", version);
  EXPECT_EQ(offer.not_modified, 1);
  EXPECT_EQ(offer.token, Token{});
  EXPECT_EQ(offer.total_size, 0u);
  EXPECT_EQ(offer.chunk_size, 0u);
  EXPECT_EQ((ContentVersion{offer.batches, offer.digest}), version);
  EXPECT_TRUE(OutgoingZips().empty());  // no copy was made
}

TEST_F(SnapshotReceiverTest, UnknownMapOrMapWithoutShardIsNotFoundNamingTheMap) {
  RawSender raw(context_, receiver_->endpoint());
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"nosuch", 0, 0}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotFound);
  EXPECT_THAT(error.message, HasSubstr("map 'nosuch' is not in the config"));
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"d", 0, 0}));
  error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotFound);
  EXPECT_EQ(error.message, "nothing merged into d on this node yet");
  EXPECT_THAT(receiver_->Log(), HasSubstr("snapshot error for map d: nothing merged into d on this node yet"));
}

TEST_F(SnapshotReceiverTest, MalformedSnapshotRequestsNameTheField) {
  RawSender raw(context_, receiver_->endpoint());
  raw.Request(Command::kSnapshot, "abc");
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "SNAPSHOT payload of 3 bytes ends inside field map (needs 4 bytes at offset 0)");
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"m", 0, 0}) + "x");
  EXPECT_THAT(raw.ReceiveError().message, HasSubstr("has 1 bytes after its last field"));
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"", 0, 0}));
  EXPECT_EQ(raw.ReceiveError().message,
            "SNAPSHOT: a map name of 0 bytes that is not a valid map name (1 to 128 letters, digits and _, starting "
            "with a letter)");
  raw.Request(Command::kFetch, protocol::EncodeFetch({Token{1, 2}, 3, 4}).substr(0, 20));
  EXPECT_EQ(raw.ReceiveError().message,
            "FETCH payload of 20 bytes ends inside field offset (needs 8 bytes at offset 16)");
  // SNAPSHOT_SINCE: its own fields, and the same map name rule.
  std::string since = protocol::EncodeSnapshotSince({"m", 1, 2, std::nullopt});
  since[since.size() - 9] = 7;  // the condensed flag
  raw.Request(Command::kSnapshotSince, since);
  EXPECT_EQ(raw.ReceiveError().message, "SNAPSHOT_SINCE payload: condensed is 7, not 0 or 1");
  raw.Request(Command::kSnapshotSince, protocol::EncodeSnapshotSince({"m", 1, 2, std::nullopt}).substr(0, 20));
  EXPECT_EQ(raw.ReceiveError().message,
            "SNAPSHOT_SINCE payload of 20 bytes ends inside field have_digest (needs 8 bytes at offset 13)");
  raw.Request(Command::kSnapshotSince, protocol::EncodeSnapshotSince({"9bad", 1, 2, std::nullopt}));
  EXPECT_THAT(raw.ReceiveError().message, HasSubstr("SNAPSHOT_SINCE: a map name of 4 bytes that is not a valid"));
  // Still serving.
  EXPECT_EQ(Offer(raw, "m").not_modified, 0);
}

TEST_F(SnapshotReceiverTest, BadFetchesAreRefusedNamingTheField) {
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "m");
  raw.Request(Command::kFetch, protocol::EncodeFetch({Token{0x1234, 0xabcdef}, 0, 100}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotFound);
  EXPECT_EQ(error.message,
            "FETCH for unknown snapshot token 00000000... (never offered to this client, expired, or the node restarted)");

  raw.Request(Command::kFetch, protocol::EncodeFetch({offer.token, offer.total_size + 1, 100}));
  error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "FETCH offset " + std::to_string(offer.total_size + 1) +
                               " is past the end of the snapshot (" + std::to_string(offer.total_size) + " bytes)");

  raw.Request(Command::kFetch, protocol::EncodeFetch({offer.token, 0, 0}));
  error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "FETCH length 0 is not 1 to 16384 (this node's chunk size)");
  raw.Request(Command::kFetch, protocol::EncodeFetch({offer.token, 0, kChunk + 1}));
  EXPECT_EQ(raw.ReceiveError().message, "FETCH length 16385 is not 1 to 16384 (this node's chunk size)");

  // Refusals leave the offer as it was.
  EXPECT_EQ(Xxh3(FetchAll(raw, offer)), offer.checksum);
}

// A newer shard gets a new zip and the old one is unlinked, yet a requester still fetching the old one gets all
// of it: the receiver holds it open from the offer on.
TEST_F(SnapshotReceiverTest, AReplacedZipStaysFetchable) {
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer first = Offer(raw, "m");
  const std::string head = Fetch(raw, first.token, 0, kChunk);  // mid transfer
  AddBatch(4000, 2000);
  const protocol::SnapshotOffer second = Offer(raw, "m", {first.batches, first.digest});
  EXPECT_EQ(second.not_modified, 0);
  EXPECT_NE(second.token, first.token);
  EXPECT_EQ(second.batches, first.batches + 1);
  EXPECT_EQ((ContentVersion{second.batches, second.digest}), ShardVersion());
  EXPECT_EQ(OutgoingZips().size(), 2u);  // the replaced zip is unlinked at the next replacement, not yet

  const std::string whole_first = FetchAll(raw, first);
  EXPECT_EQ(Xxh3(whole_first), first.checksum);
  EXPECT_TRUE(whole_first.substr(0, head.size()) == head);
  EXPECT_EQ(Xxh3(FetchAll(raw, second)), second.checksum);
  // Asked again at the old version, the node reuses the new zip.
  const protocol::SnapshotOffer third = Offer(raw, "m", {first.batches, first.digest});
  EXPECT_EQ(third.checksum, second.checksum);
  EXPECT_EQ(third.create_time_ms, second.create_time_ms);
}

TEST_F(SnapshotReceiverTest, AnIdleSnapshotIsClosedAndItsTokenForgotten) {
  ReceiverSettings settings = Settings();
  settings.idle_upload_expiry_ms = 50;
  StartReceiver(settings);
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "m");
  ASSERT_TRUE(WaitForLog("closed an idle snapshot of m")) << receiver_->Log();
  raw.Request(Command::kFetch, protocol::EncodeFetch({offer.token, 0, 100}));
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotFound);
  EXPECT_THAT(error.message, HasSubstr("FETCH for unknown snapshot token " + offer.token.Shown()));
}

TEST_F(SnapshotReceiverTest, TooManySnapshotsAtOnceIsBusy) {
  ReceiverSettings settings = Settings();
  settings.max_served_snapshots = 1;
  StartReceiver(settings);
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "m");
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"m", 0, 0}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_EQ(error.message, "busy: 1 snapshots being fetched, retry later");
  // Not modified holds nothing open: still answered.
  EXPECT_EQ(Offer(raw, "m", {offer.batches, offer.digest}).not_modified, 1);

  settings.max_pending_snapshots = 0;  // every request finds the worker "full"
  StartReceiver(settings);
  RawSender again(context_, receiver_->endpoint());
  again.Request(Command::kSnapshot, protocol::EncodeSnapshot({"m", 0, 0}));
  error = again.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_EQ(error.message, "busy: 0 SNAPSHOT requests in progress, retry later");
}

TEST_F(SnapshotReceiverTest, FaultPointTruncateServesHalfTheZip) {
  StartReceiver(Settings(), "snapshot.truncate");
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "m");
  const std::string zip = ReadFile(OutgoingZips().at(0));
  ASSERT_EQ(offer.total_size, zip.size());  // the offer is honest; the bytes are not
  const std::string got = FetchAll(raw, offer);
  EXPECT_EQ(got.size(), offer.total_size / 2);
  EXPECT_TRUE(got == zip.substr(0, offer.total_size / 2));
  EXPECT_EQ(Fetch(raw, offer.token, offer.total_size / 2 + 1, 10), "");
}

TEST_F(SnapshotReceiverTest, FaultPointCorruptFlipsOneByteOfEveryChunk) {
  StartReceiver(Settings(), "snapshot.corrupt");
  RawSender raw(context_, receiver_->endpoint());
  const protocol::SnapshotOffer offer = Offer(raw, "m");
  const std::string zip = ReadFile(OutgoingZips().at(0));
  for (uint64_t offset = 0; offset < offer.total_size; offset += kChunk) {
    const std::string chunk = Fetch(raw, offer.token, offset, kChunk);
    const std::string expected = zip.substr(offset, kChunk);
    ASSERT_EQ(chunk.size(), expected.size());
    size_t differing = 0;
    for (size_t i = 0; i < chunk.size(); ++i) differing += chunk[i] != expected[i] ? 1 : 0;
    EXPECT_EQ(differing, 1u) << "chunk at " << offset;
  }
}

}  // namespace
}  // namespace planb::testing
