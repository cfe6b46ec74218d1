// CURVE and per-client rights on a real UploadReceiver (tcp://127.0.0.1:*) with real clients: UploadBatch and
// RequestChannel with keys from libzmq's own generator. A listed client gets in with its maps; an unlisted key,
// a wrong server key and a plaintext client fail fast; each request is checked for its right and map.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "host/security/batch_namespace.h"
#include "host/security/curve_key.h"
#include "host/transfer/request_channel.h"
#include "tests/host/transfer/upload_fixture.h"
#include "tests/support/read_requests.h"

namespace planb::testing {
namespace {

using protocol::Command;
using ::testing::HasSubstr;

CurveKeyPair NewKeys() {
  CurveKeyPair pair;
  EXPECT_TRUE(GenerateKeyPair(&pair).ok());
  return pair;
}

ClientConfig Client(const std::string& name, const CurveKeyPair& keys, uint32_t rights,
                    std::optional<std::set<std::string>> maps) {
  ClientConfig client;
  client.name = name;
  client.public_keys = {keys.public_key};
  client.rights = rights;
  client.maps = std::move(maps);
  return client;
}

size_t CountOf(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

class ClientAccessTest : public UploadFixture {
 protected:
  void SetUp() override {
    ReceiverSettings settings = Settings();
    settings.access.server_key = server_;
    settings.access.clients.emplace("loader", Client("loader", loader_, static_cast<uint32_t>(Right::kUpload),
                                                     std::set<std::string>{"a"}));
    settings.access.clients.emplace(
        "reader", Client("reader", reader_, static_cast<uint32_t>(Right::kRead) | static_cast<uint32_t>(Right::kSnapshot),
                         std::set<std::string>{"b"}));
    StartReceiver(settings);
  }

  NodeAddress As(const CurveKeyPair& own, const std::string& server_public_key) const {
    return NodeAddress{"node1", endpoint(), CurveClientKeys{server_public_key, own}};
  }
  UploadSettings OneTry() const {
    UploadSettings settings = TestUploadSettings();
    settings.request_timeout_ms = 60 * 1000;  // a refusal must not wait for this: the test would hang
    settings.send_part_attempts = 3;
    return settings;
  }
  // Sends one request as `own` and returns the node's reply (the test fails when none comes).
  RequestChannel::Reply Ask(const CurveKeyPair& own, Command command, const std::string& payload) {
    uint64_t next_id = 1;
    RequestChannel channel(context_, As(own, server_.public_key), 5000, &next_id);
    uint64_t id = 0;
    EXPECT_TRUE(channel.Send(command, payload, nullptr, &id));
    RequestChannel::Reply reply;
    bool timed_out = false;
    const Status s = channel.Await(std::chrono::steady_clock::now() + kTestDeadline,
                                   [id](uint64_t got) { return got == id; }, &reply, &timed_out);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_FALSE(timed_out);
    return reply;
  }
  // The same, for a request the node answers with ERROR (the test fails on any other reply).
  protocol::ErrorReply ErrorFor(const CurveKeyPair& own, Command command, const std::string& payload) {
    const RequestChannel::Reply reply = Ask(own, command, payload);
    protocol::ErrorReply error;
    EXPECT_EQ(reply.command, static_cast<uint16_t>(Command::kError)) << protocol::CommandName(reply.command);
    EXPECT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
    return error;
  }

  const CurveKeyPair server_ = NewKeys();
  const CurveKeyPair loader_ = NewKeys();
  const CurveKeyPair reader_ = NewKeys();
  const CurveKeyPair stranger_ = NewKeys();
};

TEST_F(ClientAccessTest, ListedClientUploadsOverCurveWithItsMaps) {
  const std::string contents = WriteZip("b.zip", 300 * 1024 + 1);
  UploadOutcome outcome;
  const Status s = UploadBatch(context_, As(loader_, server_.public_key), dir_ / "b.zip",
                               BatchNamespace(loader_.public_key) + "n/b", OneTry(), &outcome);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(sink_.staged().size(), 1u);
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
  // The sink verifies the batch against the client's maps.
  ASSERT_EQ(sink_.accept_scopes().size(), 1u);
  EXPECT_EQ(sink_.accept_scopes()[0], (MapScope{std::set<std::string>{"a"}}));
  EXPECT_THAT(receiver_->Log(), Not(HasSubstr("refused")));
}

// A batch id outside the client's namespace (its key's) is refused at BEGIN, before a byte is sent: no client can
// take, pre-empt or be answered for another client's ids.
TEST_F(ClientAccessTest, ABatchIdOutsideTheClientsNamespaceIsRefused) {
  WriteZip("b.zip", 1000);
  const std::string own = BatchNamespace(loader_.public_key);
  for (const std::string& id : {std::string("n/b"), BatchNamespace(reader_.public_key) + "n/b",
                                "x" + own + "n/b", own.substr(0, own.size() - 1) + "n/b"}) {
    UploadOutcome outcome;
    const Status s = UploadBatch(context_, As(loader_, server_.public_key), dir_ / "b.zip", id, OneTry(), &outcome);
    EXPECT_EQ(s.code(), Code::kPermissionDenied) << id << ": " << s.message();
    EXPECT_THAT(s.message(), HasSubstr("batch ids of client loader start with " + own)) << id;
    EXPECT_EQ(outcome.attempts, 1) << id;  // final: no retry
  }
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(sink_.accept_scopes().empty());
}

TEST_F(ClientAccessTest, UnlistedKeyFailsFastAndIsLoggedOncePerMinute) {
  WriteZip("b.zip", 1000);
  for (int i = 0; i < 2; ++i) {
    UploadOutcome outcome;
    const Status s = UploadBatch(context_, As(stranger_, server_.public_key), dir_ / "b.zip", "n/b", OneTry(), &outcome);
    EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.message();
    EXPECT_THAT(s.message(), HasSubstr("the node does not know this client's key " + stranger_.public_key));
    EXPECT_EQ(outcome.attempts, 1);  // final: no retry
  }
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(sink_.accept_scopes().empty());
  const std::string log = receiver_->Log();
  EXPECT_EQ(CountOf(log, "key " + stranger_.public_key + " is in no [client.NAME] section"), 1u) << log;
}

TEST_F(ClientAccessTest, WrongServerKeyFailsFast) {
  WriteZip("b.zip", 1000);
  UploadOutcome outcome;
  const CurveKeyPair impostor = NewKeys();  // the client expects this node, the receiver holds server_
  const Status s = UploadBatch(context_, As(loader_, impostor.public_key), dir_ / "b.zip", "n/b", OneTry(), &outcome);
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("the node at " + endpoint() + " did not prove its identity"));
  EXPECT_EQ(outcome.attempts, 1);
  EXPECT_TRUE(sink_.staged().empty());
}

TEST_F(ClientAccessTest, PlaintextClientIsToldTheNodeRequiresCurve) {
  WriteZip("b.zip", 1000);
  UploadOutcome outcome;
  const Status s = UploadBatch(context_, NodeAddress{"node1", endpoint(), std::nullopt}, dir_ / "b.zip", "n/b",
                               OneTry(), &outcome);
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("requires CURVE: this client connects in plaintext"));
  EXPECT_TRUE(sink_.staged().empty());
}

TEST_F(ClientAccessTest, EachRequestNeedsItsRightAndMap) {
  // reader may not upload: BEGIN, CHUNK, COMMIT, STATUS and PREPARE all need `upload`.
  protocol::ErrorReply e = ErrorFor(reader_, Command::kBegin, protocol::EncodeBegin({"n/b", 10, 0}));
  EXPECT_EQ(protocol::CodeFromWire(e.code), Code::kPermissionDenied);
  EXPECT_EQ(e.message, "not authorised for upload (client reader)");
  e = ErrorFor(reader_, Command::kStatus, protocol::EncodeStatus({Token(), 0}));
  EXPECT_EQ(e.message, "not authorised for upload (client reader)");
  // loader may upload to a only.
  protocol::PrepareRequest prepare;
  prepare.maps = {{"a", 10}, {"B", 10}};
  e = ErrorFor(loader_, Command::kPrepare, protocol::EncodePrepare(prepare));
  EXPECT_EQ(protocol::CodeFromWire(e.code), Code::kPermissionDenied);
  EXPECT_EQ(e.message, "not authorised for upload on B (client loader)");
  // loader may not read or take snapshots at all.
  e = ErrorFor(loader_, Command::kRead, protocol::EncodeRead(LookupRead("a", {"k"})));
  EXPECT_EQ(e.message, "not authorised for read (client loader)");
  e = ErrorFor(loader_, Command::kSnapshot, protocol::EncodeSnapshot({"a", 0, 0}));
  EXPECT_EQ(e.message, "not authorised for snapshot (client loader)");
  // reader may take snapshots of b only.
  e = ErrorFor(reader_, Command::kSnapshot, protocol::EncodeSnapshot({"a", 0, 0}));
  EXPECT_EQ(protocol::CodeFromWire(e.code), Code::kPermissionDenied);
  EXPECT_EQ(e.message, "not authorised for snapshot on a (client reader)");
  // SNAPSHOT_SINCE takes the same right, on the same maps.
  e = ErrorFor(loader_, Command::kSnapshotSince, protocol::EncodeSnapshotSince({"a", 1, 2, std::nullopt}));
  EXPECT_EQ(e.message, "not authorised for snapshot (client loader)");
  e = ErrorFor(reader_, Command::kSnapshotSince, protocol::EncodeSnapshotSince({"a", 1, 2, int64_t{5}}));
  EXPECT_EQ(protocol::CodeFromWire(e.code), Code::kPermissionDenied);
  EXPECT_EQ(e.message, "not authorised for snapshot on a (client reader)");
  EXPECT_TRUE(sink_.staged().empty());
  const std::string log = receiver_->Log();
  EXPECT_THAT(log, HasSubstr("refused client loader: not authorised for upload on B"));
  EXPECT_THAT(log, HasSubstr("refused client reader: not authorised for snapshot on a"));
}

// Key rotation: a client section listing the new key beside the old one admits both, as the same client.
TEST_F(UploadFixture, BothKeysOfARotatingClientAreAdmitted) {
  const CurveKeyPair server = NewKeys();
  const CurveKeyPair old_key = NewKeys();
  const CurveKeyPair new_key = NewKeys();
  ReceiverSettings settings = Settings();
  settings.access.server_key = server;
  ClientConfig loader = Client("loader", old_key, static_cast<uint32_t>(Right::kUpload), std::nullopt);
  loader.public_keys = {new_key.public_key, old_key.public_key};
  settings.access.clients.emplace("loader", loader);
  StartReceiver(settings);
  WriteZip("b.zip", 1000);
  for (const CurveKeyPair* own : {&old_key, &new_key}) {
    UploadOutcome outcome;
    const Status s = UploadBatch(context_, NodeAddress{"node1", endpoint(), CurveClientKeys{server.public_key, *own}},
                                 dir_ / "b.zip", BatchNamespace(own->public_key) + (own == &old_key ? "n/old" : "n/new"),
                                 TestUploadSettings(), &outcome);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(sink_.staged().size(), 2u);
  EXPECT_THAT(receiver_->Log(), Not(HasSubstr("refused")));
}

TEST_F(ClientAccessTest, ReadRunsWithTheClientsMaps) {
  const RequestChannel::Reply reply = Ask(reader_, Command::kRead, protocol::EncodeRead(LookupRead("b", {"k"})));
  EXPECT_EQ(reply.command, static_cast<uint16_t>(Command::kReadResult));
  ASSERT_EQ(sink_.read_scopes().size(), 1u);
  EXPECT_EQ(sink_.read_scopes()[0], (MapScope{std::set<std::string>{"b"}}));
}

// Without keys nothing changes: every peer may do everything, and the sink is told so (no scope).
TEST_F(UploadFixture, PlaintextReceiverGivesEveryMap) {
  StartReceiver();
  WriteZip("b.zip", 1000);
  UploadOutcome outcome;
  const Status s = Upload("b.zip", "n/b", TestUploadSettings(), &outcome);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(sink_.accept_scopes().size(), 1u);
  EXPECT_FALSE(sink_.accept_scopes()[0].has_value());
}

}  // namespace
}  // namespace planb::testing
