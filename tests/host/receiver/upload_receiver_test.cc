// UploadReceiver driven by a raw DEALER: what a broken, hostile or dying sender can send, each answered with
// an ERROR naming what was wrong, after which the receiver still serves a good upload.
#include "host/receiver/upload_receiver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <limits>
#include <set>

#include "host/common/disk_room.h"
#include "host/transfer/remote_read.h"
#include "planb/encoding.h"
#include "tests/host/transfer/upload_fixture.h"
#include "tests/support/recorded_frames.h"
#include "tests/support/read_requests.h"

namespace planb::testing {
namespace {

using protocol::Command;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr size_t kChunk = 256 * 1024;

class UploadReceiverTest : public UploadFixture {
 protected:
  void SetUp() override { StartReceiver(); }
  // Waits (with the test deadline) until no .part file is left in receive/.
  bool WaitForNoParts() {
    auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
    while (!PartFiles(receive_dir()).empty()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  // Restarts the receiver with `settings`.
  void RestartWith(const ReceiverSettings& settings) {
    receiver_.reset();
    StartReceiver(settings);
  }
  // Sends `contents` whole as batch `batch_id` and commits; returns the token once the node reports `staged`.
  Token Stage(RawSender& raw, const std::string& batch_id, const std::string& contents, uint32_t flags) {
    protocol::ReadyReply ready = raw.Begin(batch_id, contents, Xxh3(contents), flags);
    raw.SendChunks(ready.token, contents, 0, contents.size(), kChunk);
    raw.Commit(ready.token);
    EXPECT_EQ(raw.ReceiveStatus().state, protocol::UploadState::kVerifying);
    EXPECT_TRUE(raw.WaitForState(ready.token, protocol::UploadState::kStaged)) << batch_id;
    return ready.token;
  }
};

// Free bytes for unprivileged use in `dir`, as the receiver measures them.
uint64_t FreeBytes(const std::string& dir) {
  struct statvfs fs;
  EXPECT_EQ(::statvfs(dir.c_str(), &fs), 0) << dir;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

TEST_F(UploadReceiverTest, ChecksumMismatchIsRefusedAndNothingStaged) {
  const std::string contents = RandomBytes(600 * 1024, 3);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/bad-sum", contents, 0x1234);
  raw.SendChunks(ready.token, contents, 0, contents.size(), kChunk);
  raw.Commit(ready.token);
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kCorruption);
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "checksum mismatch: received data hashes to %016llx, sender declared 0000000000001234",
                static_cast<unsigned long long>(Xxh3(contents)));
  EXPECT_EQ(error.message, expected);
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/bad-sum: checksum mismatch"));
  // The failed upload answers STATUS with its error.
  raw.Request(Command::kStatus, protocol::EncodeStatus({ready.token, 0}));
  protocol::StatusReply status;
  ASSERT_TRUE(protocol::DecodeStatusReply(raw.Receive().payload, &status).ok());
  EXPECT_EQ(status.state, protocol::UploadState::kFailed);
  EXPECT_THAT(status.message, HasSubstr("checksum mismatch"));
  ExpectStillServes();
}

// BEGIN names the zip by its tail (the central directory), which a later BEGIN resumes or rejoins the upload by:
// bytes whose tail is not the one declared are refused at COMMIT, even when they hash to the declared checksum.
TEST_F(UploadReceiverTest, BytesWhoseTailIsNotTheDeclaredOneAreRefused) {
  const std::string contents = RandomBytes(600 * 1024, 13);
  RawSender raw(context_, endpoint());
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/bad-tail", contents.size(), 0x77, 0}));
  protocol::ReadyReply ready;
  ASSERT_TRUE(protocol::DecodeReady(raw.Receive().payload, &ready).ok());
  raw.SendChunks(ready.token, contents, 0, contents.size(), kChunk);
  raw.Request(Command::kCommit, protocol::EncodeCommit({ready.token, Xxh3(contents)}));
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kCorruption);
  EXPECT_THAT(error.message, HasSubstr("tail hash mismatch: the last 65536 bytes received hash to "));
  EXPECT_THAT(error.message, HasSubstr("BEGIN declared 0000000000000077"));
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  ExpectStillServes();
}

// A committed upload rejoined (its COMMIT's reply was lost) answers where it stands to a COMMIT of the same
// checksum, and refuses one declaring another: the zip under that id and size is not the one committed.
TEST_F(UploadReceiverTest, ARepeatedCommitMustDeclareTheChecksumItWasCommittedWith) {
  const std::string contents = RandomBytes(300 * 1024, 14);
  RawSender raw(context_, endpoint());
  const Token token = Stage(raw, "node1a/again", contents, 0);
  raw.Commit(token);
  EXPECT_EQ(raw.ReceiveStatus().state, protocol::UploadState::kStaged);
  raw.Request(Command::kCommit, protocol::EncodeCommit({token, Xxh3(contents) ^ 1}));
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_THAT(error.message, HasSubstr("COMMIT of batch node1a/again declares checksum "));
  EXPECT_THAT(error.message, HasSubstr(", but it was committed with "));
  EXPECT_EQ(sink_.staged().size(), 1u);
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, CommitBeforeEveryByteIsTruncated) {
  const std::string contents = RandomBytes(600 * 1024, 4);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/short", contents, Xxh3(contents));
  raw.SendChunks(ready.token, contents, 0, kChunk, kChunk);
  raw.Commit(ready.token);
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kCorruption);
  EXPECT_EQ(error.message, "truncated upload: received 262144 of 614400 bytes");
  EXPECT_TRUE(sink_.staged().empty());
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, AnotherVersionIsAnsweredInTheNodesOwn) {
  RawSender raw(context_, endpoint());
  // 1: a sender from before 128-bit tokens; 2: one from before typed READs; 3: one whose BEGIN declares the
  // checksum; 7: one from the future.
  for (const uint16_t version : {uint16_t{1}, uint16_t{2}, uint16_t{3}, uint16_t{7}}) {
    std::string header = protocol::EncodeHeader(Command::kBegin, 41);
    PutU16(reinterpret_cast<uint8_t*>(header.data()) + 4, version);
    raw.Send({header, protocol::EncodeBegin({"node1a/v" + std::to_string(version), 1, 0})});
    RawReply reply = raw.Receive();
    EXPECT_EQ(reply.header.version, protocol::kProtocolVersion);
    EXPECT_EQ(reply.header.request_id, 41u);
    protocol::ErrorReply error;
    ASSERT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
    EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
    EXPECT_EQ(error.message, "unsupported protocol version " + std::to_string(version) + " (this node speaks 4; " +
                                 (version < 4 ? "upgrade the client)" : "upgrade this node)"));
  }
  ExpectStillServes();
}

// The frames of release 0.1.0 as they were recorded (tests/compat/0.1.0/protocol/): its BEGIN (protocol version
// 3) and a BEGIN of version 2 are each answered with an ERROR naming both versions, for the same request.
TEST_F(UploadReceiverTest, AnswersTheRecordedFramesOfRelease010) {
  RawSender raw(context_, endpoint());
  for (const auto& [frames, version, request_id] : {std::tuple{"0.1.0/protocol/begin_v3.frames", 3, 1u},
                                                    std::tuple{"0.1.0/protocol/begin_v2.frames", 2, 7u}}) {
    raw.Send(ReadRecordedFrames(frames));
    RawReply refused = raw.Receive();
    EXPECT_EQ(refused.header.command, static_cast<uint16_t>(Command::kError)) << frames;
    EXPECT_EQ(refused.header.version, 4);
    EXPECT_EQ(refused.header.request_id, request_id);
    protocol::ErrorReply error;
    ASSERT_TRUE(protocol::DecodeError(refused.payload, &error).ok());
    EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
    EXPECT_EQ(error.message, "unsupported protocol version " + std::to_string(version) +
                                 " (this node speaks 4; upgrade the client)");
  }
  EXPECT_TRUE(sink_.staged().empty());
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, UnknownCommandIsAnswered) {
  RawSender raw(context_, endpoint());
  std::string header = protocol::EncodeHeader(Command::kBegin, 5);
  PutU16(reinterpret_cast<uint8_t*>(header.data()) + 6, 0x0042);
  raw.Send({header, "x"});
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
  EXPECT_EQ(error.message,
            "unknown command 0x0042 (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, SNAPSHOT, FETCH, PREPARE, LIST_MERGED, OFFER_BATCH and SNAPSHOT_SINCE)");
  // A reply command sent as a request is no request either.
  raw.Request(Command::kReady, protocol::EncodeReady({Token{0, 1}, 2, 3, 4}));
  EXPECT_EQ(raw.ReceiveError().message,
            "unknown READY (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, SNAPSHOT, FETCH, PREPARE, LIST_MERGED, OFFER_BATCH and SNAPSHOT_SINCE)");
  ExpectStillServes();
}

// A sink without snapshots (BatchSink's default) makes SNAPSHOT an ERROR kNotSupported, not a hang.
TEST_F(UploadReceiverTest, SnapshotFromASinkWithoutSnapshotsIsNotSupported) {
  RawSender raw(context_, endpoint());
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"m", 0, 0}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
  EXPECT_EQ(error.message, "this node does not serve snapshots");
  EXPECT_THAT(receiver_->Log(), HasSubstr("snapshot error for map m: this node does not serve snapshots"));
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, BadMagicIsAnswered) {
  RawSender raw(context_, endpoint());
  std::string header = protocol::EncodeHeader(Command::kBegin, 9);
  header.replace(0, 4, "HTTP");
  raw.Send({header, "x"});
  RawReply reply = raw.Receive();
  EXPECT_EQ(reply.header.request_id, 9u);
  protocol::ErrorReply error;
  ASSERT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_THAT(error.message, HasSubstr("starts with bytes 48 54 54 50, not the magic \"PLNB\""));
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error from sender "));
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, ShortFramesAreAnswered) {
  RawSender raw(context_, endpoint());
  raw.Send({std::string("PLNB\x00\x01", 6)});
  EXPECT_EQ(raw.ReceiveError().message, "message header of 6 bytes is shorter than the 16 a header needs");
  raw.Send({protocol::EncodeHeader(Command::kBegin, 1)});
  EXPECT_EQ(raw.ReceiveError().message, "BEGIN message has 1 frames, needs 2 (header, payload)");
  raw.Send({protocol::EncodeHeader(Command::kChunk, 2), protocol::EncodeChunk({Token{0, 1}, 0})});
  EXPECT_EQ(raw.ReceiveError().message, "CHUNK message has 2 frames, needs 3 (header, payload, chunk bytes)");
  raw.Request(Command::kBegin, "abc");
  EXPECT_EQ(raw.ReceiveError().message,
            "BEGIN payload of 3 bytes ends inside field batch_id (needs 4 bytes at offset 0)");
  raw.Request(Command::kCommit, protocol::EncodeCommit({Token{0, 1}}) + "zz");
  EXPECT_EQ(raw.ReceiveError().message, "COMMIT payload of 26 bytes has 2 bytes after its last field");
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, UnknownTokenIsAnswered) {
  RawSender raw(context_, endpoint());
  std::string bytes = "abc";
  raw.Request(Command::kChunk, protocol::EncodeChunk({Token{0x1234, 0xabcdef}, 0}), &bytes);
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotFound);  // the sender starts again with BEGIN
  EXPECT_EQ(error.message,
            "CHUNK for unknown upload token 00000000... (never begun, expired, or the node restarted)");
  raw.Request(Command::kStatus, protocol::EncodeStatus({Token{0x1234, 0xabcdef}, 100}));
  EXPECT_THAT(raw.ReceiveError().message, HasSubstr("STATUS for unknown upload token 00000000..."));
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, OversizedChunkFailsItsUpload) {
  const std::string contents = RandomBytes(kChunk + 10, 5);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/big-chunk", contents, Xxh3(contents));
  EXPECT_EQ(ready.chunk_size, kChunk);
  EXPECT_EQ(ready.window, 3u);
  raw.Request(Command::kChunk, protocol::EncodeChunk({ready.token, 0}), &contents);
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "chunk of 262154 bytes at offset 0 is larger than this node's chunk size of 262144 bytes");
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/big-chunk: chunk of 262154 bytes"));
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, GapAndOverrunFailTheirUploads) {
  const std::string contents = RandomBytes(3 * kChunk, 6);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/gap", contents, Xxh3(contents));
  std::string chunk = contents.substr(kChunk, kChunk);
  raw.Request(Command::kChunk, protocol::EncodeChunk({ready.token, kChunk}), &chunk);
  EXPECT_EQ(raw.ReceiveError().message,
            "chunk at offset 262144 leaves a gap: only 0 bytes received so far (chunks must be sequential)");

  ready = raw.Begin("node1a/overrun", contents, Xxh3(contents));
  raw.Request(Command::kChunk, protocol::EncodeChunk({ready.token, 3 * kChunk - 5}), &chunk);
  EXPECT_EQ(raw.ReceiveError().message,
            "chunk of 262144 bytes at offset 786427 runs past the declared size of 786432 bytes");
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, ResentChunkIsAcknowledgedWithoutWriting) {
  const std::string contents = RandomBytes(2 * kChunk, 7);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/resend", contents, Xxh3(contents));
  EXPECT_EQ(raw.SendChunks(ready.token, contents, 0, kChunk, kChunk), kChunk);
  EXPECT_EQ(raw.SendChunks(ready.token, contents, 0, kChunk, kChunk), kChunk);  // the same chunk again
  EXPECT_EQ(raw.SendChunks(ready.token, contents, kChunk, 2 * kChunk, kChunk), 2 * kChunk);
  raw.Commit(ready.token);
  protocol::StatusReply status;
  RawReply reply = raw.Receive();
  ASSERT_EQ(reply.header.command, static_cast<uint16_t>(Command::kStatusReply)) << reply.payload;
  ASSERT_TRUE(protocol::DecodeStatusReply(reply.payload, &status).ok());
  EXPECT_EQ(status.state, protocol::UploadState::kVerifying);
  ASSERT_TRUE(sink_.WaitFor(1));
  EXPECT_EQ(ReadFile(sink_.staged()[0].path), contents);
}

TEST_F(UploadReceiverTest, DeclaredSizeOverTheLimitIsRefused) {
  receiver_.reset();
  ReceiverSettings settings = Settings();
  settings.max_upload_bytes = 1000;
  StartReceiver(settings);
  RawSender raw(context_, endpoint());
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/huge", 1001, 0}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message,
            "batch node1a/huge declares 1001 bytes, more than this node accepts (max_upload_bytes 1000)");
  raw.Request(Command::kBegin, protocol::EncodeBegin({"", 10, 0}));
  EXPECT_EQ(raw.ReceiveError().message, "BEGIN: a batch id of 0 bytes that is not valid (1 to 255 of A-Z a-z 0-9 . _ - : /)");
}

TEST_F(UploadReceiverTest, StalePartsAreClearedAtStartAndIdleUploadsExpire) {
  receiver_.reset();
  WriteFile(receive_dir() + "/00000000deadbeef.part", "left by a crash");
  ReceiverSettings settings = Settings();
  settings.idle_upload_expiry_ms = 500;
  StartReceiver(settings);
  const std::string contents = RandomBytes(2 * kChunk, 8);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/idle", contents, Xxh3(contents));
  raw.SendChunks(ready.token, contents, 0, kChunk, kChunk);
  // The stale part went at start; the idle upload goes once untouched for 500 ms.
  ASSERT_TRUE(WaitForNoParts());
  EXPECT_THAT(receiver_->Log(), HasSubstr("removed stale partial upload " + receive_dir() + "/00000000deadbeef.part"));
  auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
  while (receiver_->Log().find("dropping idle partial upload of batch node1a/idle") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_THAT(receiver_->Log(), ::testing::ContainsRegex("dropping idle partial upload of batch node1a/idle from sender "
                                                         "[0-9a-f]+ at 127.0.0.1 \\(262144 of 524288"));
  raw.Commit(ready.token);
  EXPECT_THAT(raw.ReceiveError().message, HasSubstr("unknown upload token"));
}

// Review of issue 11: a peer that keeps talking about an upload without sending its bytes (repeated BEGINs, STATUS
// polls, empty chunks) must not keep its slot and reservation past upload_idle_timeout.
TEST_F(UploadReceiverTest, TalkingWithoutSendingBytesDoesNotKeepAnUploadAlive) {
  ReceiverSettings settings = Settings();
  settings.idle_upload_expiry_ms = 500;
  RestartWith(settings);
  const std::string contents = RandomBytes(2 * kChunk, 17);
  RawSender raw(context_, endpoint());
  const protocol::ReadyReply ready = raw.Begin("node1a/chatty", contents, Xxh3(contents));
  raw.SendChunks(ready.token, contents, 0, kChunk, kChunk);
  const std::string nothing;
  const auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
  bool dropped = false;
  while (!dropped && std::chrono::steady_clock::now() < deadline) {
    // Resuming at 0 means the upload was dropped meanwhile and this BEGIN started a new one (which idles out too).
    if (raw.Begin("node1a/chatty", contents, Xxh3(contents)).resume_offset == 0) break;
    raw.Request(Command::kStatus, protocol::EncodeStatus({ready.token, 0}));
    (void)raw.Receive();
    raw.Request(Command::kChunk, protocol::EncodeChunk({ready.token, kChunk}), &nothing);
    (void)raw.Receive();
    dropped = receiver_->Log().find("dropping idle partial upload of batch node1a/chatty") != std::string::npos;
  }
  EXPECT_THAT(receiver_->Log(), ::testing::ContainsRegex("dropping idle partial upload of batch node1a/chatty from "
                                                         "sender [0-9a-f]+ at 127.0.0.1 \\(262144 of 524288"));
  EXPECT_TRUE(WaitForNoParts());
}

TEST_F(UploadReceiverTest, StoppingDropsPartialUploads) {
  const std::string contents = RandomBytes(2 * kChunk, 9);
  RawSender raw(context_, endpoint());
  protocol::ReadyReply ready = raw.Begin("node1a/cut", contents, Xxh3(contents));
  raw.SendChunks(ready.token, contents, 0, kChunk, kChunk);
  EXPECT_EQ(PartFiles(receive_dir()).size(), 1u);
  receiver_->Stop();
  EXPECT_TRUE(receiver_->run_status().ok()) << receiver_->run_status().message();
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
  EXPECT_THAT(receiver_->Log(), HasSubstr("dropped 1 unfinished upload"));
}

TEST_F(UploadReceiverTest, BindingABadEndpointNamesIt) {
  UploadReceiver receiver(context_, Settings(), sink_, nullptr);
  std::string bound;
  Status status = receiver.Bind("tcp://127.0.0.1:notaport", &bound);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_THAT(status.message(), HasSubstr("cannot bind upload receiver to tcp://127.0.0.1:notaport"));
}

TEST_F(UploadReceiverTest, BeginsBeyondMaxOpenUploadsAreBusy) {
  ReceiverSettings settings = Settings();
  ASSERT_EQ(settings.max_open_uploads, 64u);  // the default
  settings.max_client_share_percent = 100;    // one connection plays every client here (upload_share_test: each)
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  const std::string contents = RandomBytes(1000, 11);
  std::vector<protocol::ReadyReply> open;
  for (int i = 0; i < 70; ++i) {
    raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/b" + std::to_string(i), 1000, Xxh3(contents), 0}));
    RawReply reply = raw.Receive();
    if (i < 64) {
      protocol::ReadyReply ready;
      ASSERT_EQ(reply.header.command, static_cast<uint16_t>(Command::kReady)) << i << ": " << reply.payload;
      ASSERT_TRUE(protocol::DecodeReady(reply.payload, &ready).ok());
      open.push_back(ready);
      continue;
    }
    protocol::ErrorReply error;
    ASSERT_EQ(reply.header.command, static_cast<uint16_t>(Command::kError)) << i;
    ASSERT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
    EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
    EXPECT_EQ(error.message, "busy: 64 uploads in progress, retry later");
  }
  // The refused BEGINs opened nothing: one part file (and fd) per upload in progress.
  EXPECT_EQ(PartFiles(receive_dir()).size(), 64u);
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/b64: busy: 64 uploads in progress"));
  // Rejoining an upload in progress is no new upload.
  protocol::ReadyReply again = raw.Begin("node1a/b0", contents, Xxh3(contents));
  EXPECT_EQ(again.token, open[0].token);
  // An upload that ends (here: failed, committed short) frees its place.
  for (int i = 0; i < 2; ++i) {
    raw.Commit(open[i].token);
    EXPECT_THAT(raw.ReceiveError().message, HasSubstr("truncated upload"));
  }
  raw.Begin("node1a/b64", contents, Xxh3(contents));
  ExpectStillServes();  // the 64th place
}

TEST_F(UploadReceiverTest, BeginWithoutRoomOnDiskIsFull) {
  ReceiverSettings settings = Settings();
  settings.max_upload_bytes = std::numeric_limits<uint64_t>::max();
  settings.max_client_share_percent = 100;  // one connection plays every client here
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/huge", uint64_t{1} << 60, 0}));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_THAT(error.message, ::testing::StartsWith("disk full: "));
  // The sender is told why, not the node's directory or free bytes; the log keeps them.
  EXPECT_THAT(error.message, HasSubstr("batch node1a/huge needs about 2305843009213693952 bytes (twice its "
                                       "1152921504606846976 bytes: part file and verification); the node has too "
                                       "little room (its log says how much)"));
  EXPECT_THAT(error.message, Not(HasSubstr(receive_dir())));
  EXPECT_THAT(receiver_->Log(), HasSubstr("upload error for batch node1a/huge: disk full: "));
  EXPECT_THAT(receiver_->Log(), HasSubstr("part file and verification); " + receive_dir() + " has "));
  // A declared size whose double does not fit in 64 bits needs "everything".
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/max", std::numeric_limits<uint64_t>::max(), 0}));
  EXPECT_THAT(raw.ReceiveError().message, HasSubstr("batch node1a/max needs about 18446744073709551615 bytes (twice"));
  EXPECT_TRUE(PartFiles(receive_dir()).empty());

  // What uploads in progress have still to send counts too: each of these fits alone, not both.
  const uint64_t free_bytes = FreeBytes(receive_dir());
  const uint64_t first = free_bytes / 5 * 2, second = free_bytes / 20 * 7;
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/first", first, 0}));
  ASSERT_EQ(raw.Receive().header.command, static_cast<uint16_t>(Command::kReady));
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/second", second, 0}));
  error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_THAT(error.message,
              HasSubstr("batch node1a/second needs about " + std::to_string(2 * second + first) + " bytes (twice its " +
                        std::to_string(second) + " bytes: part file and verification, plus " + std::to_string(first) +
                        " bytes still to arrive for 1 other upload)"));
  EXPECT_EQ(PartFiles(receive_dir()).size(), 1u);
  ExpectStillServes();
}

// Review of issue 11: BEGIN keeps the margin free that unpacking keeps (disk_room.h), so an upload it accepts is
// not refused later by the extraction. A declared size that fits the free space but not above the margin is full.
TEST_F(UploadReceiverTest, BeginKeepsTheSameMarginAsUnpacking) {
  ReceiverSettings settings = Settings();
  settings.max_upload_bytes = std::numeric_limits<uint64_t>::max();
  RestartWith(settings);
  const DiskRoom room = MeasureDiskRoom(receive_dir());
  ASSERT_TRUE(room.known);
  ASSERT_GT(room.free_bytes, room.margin);
  // Twice the size lands half a margin below the free space: inside the free space, inside the margin.
  const uint64_t size = (room.free_bytes - room.margin / 2) / 2;
  RawSender raw(context_, endpoint());
  raw.Request(Command::kBegin, protocol::EncodeBegin({"node1a/margin", size, 0}));
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_THAT(error.message, HasSubstr("the node has too little room (its log says how much)"));
  EXPECT_THAT(receiver_->Log(), HasSubstr("and keeps " + std::to_string(room.margin) + " free (the larger of "));
  EXPECT_TRUE(PartFiles(receive_dir()).empty());
}

TEST_F(UploadReceiverTest, ChunkSizeIsKeptWithinTheProtocolMaximum) {
  const std::string contents = RandomBytes(100, 12);
  ReceiverSettings settings = Settings();
  settings.chunk_size = 64u << 20;
  RestartWith(settings);
  {
    RawSender raw(context_, endpoint());
    EXPECT_EQ(raw.Begin("node1a/big", contents, Xxh3(contents)).chunk_size, protocol::kMaxUploadChunkSize);
  }
  settings.chunk_size = 0;
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  EXPECT_EQ(raw.Begin("node1a/zero", contents, Xxh3(contents)).chunk_size, 1u);
}

TEST_F(UploadReceiverTest, OneHeldStatusPerUpload) {
  ReceiverSettings settings = Settings();
  settings.status_hold_ms = 60 * 1000;  // longer than the test deadline: a reply that comes was not a hold ending
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  const Token token = Stage(raw, "node1a/sync", RandomBytes(1000, 13), protocol::kFlagSynchroniseMerge);
  raw.Request(Command::kStatus, protocol::EncodeStatus({token, 60 * 1000}));
  const uint64_t first = raw.last_request_id();
  raw.Request(Command::kStatus, protocol::EncodeStatus({token, 60 * 1000}));
  const uint64_t second = raw.last_request_id();
  // The newer request replaces the held one, which is answered at once with the state as it is.
  uint64_t answered = 0;
  protocol::StatusReply status = raw.ReceiveStatus(&answered);
  EXPECT_EQ(answered, first);
  EXPECT_EQ(status.state, protocol::UploadState::kStaged);
  EXPECT_EQ(status.sequence, 1u);
  sink_.MarkMerged(1);
  status = raw.ReceiveStatus(&answered);
  EXPECT_EQ(answered, second);
  EXPECT_EQ(status.state, protocol::UploadState::kMerged);
}

TEST_F(UploadReceiverTest, HeldStatusesAreCapped) {
  ReceiverSettings settings = Settings();
  settings.status_hold_ms = 60 * 1000;
  settings.max_open_uploads = 1;  // at most 4 held
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  std::vector<Token> tokens;
  for (int i = 0; i < 5; ++i) {
    tokens.push_back(
        Stage(raw, "node1a/s" + std::to_string(i), RandomBytes(1000, 20 + i), protocol::kFlagSynchroniseMerge));
  }
  std::vector<uint64_t> request_ids;
  for (const Token& token : tokens) {
    raw.Request(Command::kStatus, protocol::EncodeStatus({token, 60 * 1000}));
    request_ids.push_back(raw.last_request_id());
  }
  // Four are held; the fifth is answered at once, unheld.
  uint64_t answered = 0;
  protocol::StatusReply status = raw.ReceiveStatus(&answered);
  EXPECT_EQ(answered, request_ids[4]);
  EXPECT_EQ(status.state, protocol::UploadState::kStaged);
  EXPECT_EQ(status.sequence, 5u);
  for (uint64_t sequence = 1; sequence <= 5; ++sequence) sink_.MarkMerged(sequence);
  std::set<uint64_t> merged;
  for (int i = 0; i < 4; ++i) {
    status = raw.ReceiveStatus(&answered);
    EXPECT_EQ(status.state, protocol::UploadState::kMerged);
    merged.insert(answered);
  }
  EXPECT_EQ(merged, std::set<uint64_t>(request_ids.begin(), request_ids.begin() + 4));
}

// Releases reads held by the sink when the test ends, so that stopping the receiver never waits on one.
struct ReleaseReadsAtEnd {
  TestSink& sink;
  ~ReleaseReadsAtEnd() { sink.ReleaseReads(); }
};

protocol::ReadResult ReceiveReadResult(RawSender& raw, uint64_t* request_id = nullptr) {
  RawReply reply = raw.Receive();
  protocol::ReadResult result;
  EXPECT_EQ(reply.header.command, static_cast<uint16_t>(Command::kReadResult)) << reply.payload;
  EXPECT_TRUE(protocol::DecodeReadResult(reply.payload, &result).ok());
  if (request_id != nullptr) *request_id = reply.header.request_id;
  return result;
}

TEST_F(UploadReceiverTest, ReadIsRunByTheSinkAndAnswered) {
  RawSender raw(context_, endpoint());
  raw.Request(Command::kRead, protocol::EncodeRead(LookupRead("m", {"a", "-b", "--home"})));
  uint64_t answered = 0;
  const protocol::ReadResult result = ReceiveReadResult(raw, &answered);
  EXPECT_EQ(answered, raw.last_request_id());
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.out, "lookup|m|a|-b|--home");  // keys that look like options are keys: no command line
  EXPECT_EQ(result.err, "err");
  raw.Request(Command::kRead, protocol::EncodeRead(QueryRead("m", "Key = 'a'")));
  EXPECT_EQ(ReceiveReadResult(raw).out, "query|m");
}

TEST_F(UploadReceiverTest, AReadThatDoesNotDecodeIsRefusedNamingTheField) {
  RawSender raw(context_, endpoint());
  // Version 2's READ (a command line: u32 argc, then strings) is no READ of this version.
  raw.Request(Command::kRead, std::string("\x00\x00\x00\x02\x00\x00\x00\x06lookup\x00\x00\x00\x01m", 19));
  protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "READ payload: unknown kind 0 (1 lookup, 2 query)");
  raw.Request(Command::kRead, std::string("\x01\x00\x00\x00\x01m\x04\x00\x00\x00\x00\x09xyz", 15));
  EXPECT_EQ(raw.ReceiveError().message, "READ payload: key_count 9 is more than the 3 remaining bytes can hold");
  ExpectStillServes();
}

TEST_F(UploadReceiverTest, ASlowReadDoesNotStallUploadsAndExtraReadsAreBusy) {
  ReceiverSettings settings = Settings();
  settings.max_pending_reads = 1;
  RestartWith(settings);
  ReleaseReadsAtEnd release{sink_};
  sink_.HoldReads();
  RawSender reader(context_, endpoint());
  reader.Request(Command::kRead, protocol::EncodeRead(LookupRead("m", {"k"})));
  const uint64_t held_request = reader.last_request_id();
  ASSERT_TRUE(sink_.WaitForReadsStarted(1));
  ExpectStillServes();  // a whole upload while the read runs
  RawSender other(context_, endpoint());
  other.Request(Command::kRead, protocol::EncodeRead(LookupRead("m", {"k2"})));
  protocol::ErrorReply error = other.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kFull);
  EXPECT_EQ(error.message, "busy: 1 READ requests in progress, retry later");
  sink_.ReleaseReads();
  uint64_t answered = 0;
  EXPECT_EQ(ReceiveReadResult(reader, &answered).out, "lookup|m|k");
  EXPECT_EQ(answered, held_request);
}

TEST_F(UploadReceiverTest, ASlowReadDoesNotBlockTheLookupsBehindIt) {
  ReleaseReadsAtEnd release{sink_};
  sink_.HoldReadsOf("slow");
  RawSender slow(context_, endpoint());
  slow.Request(Command::kRead, protocol::EncodeRead(QueryRead("slow")));
  ASSERT_TRUE(sink_.WaitForReadsStarted(1));
  // While the slow one runs, lookups are answered by the pool's other threads.
  for (int i = 0; i < 5; ++i) {
    RawSender lookup(context_, endpoint());
    lookup.Request(Command::kRead, protocol::EncodeRead(LookupRead("m", {"k" + std::to_string(i)})));
    EXPECT_EQ(ReceiveReadResult(lookup).out, "lookup|m|k" + std::to_string(i));
  }
  sink_.ReleaseReads();
  EXPECT_EQ(ReceiveReadResult(slow).out, "query|slow");
}

TEST_F(UploadReceiverTest, AReadTooLargeIsRefusedSayingSo) {
  ReceiverSettings settings = Settings();
  settings.chunk_size = 1 << 20;  // the node's default: frames up to about 2 MiB reach it
  RestartWith(settings);
  RawSender raw(context_, endpoint());
  const std::string key(1536 * 1024, 'k');  // under the socket's frame cap, over protocol::kMaxReadRequest
  raw.Request(Command::kRead, protocol::EncodeRead(LookupRead("m", {key})));
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kInvalidArgument);
  EXPECT_EQ(error.message, "request too large (1572880 bytes, limit 1048576)");
  // The client refuses it before sending, alike.
  ClusterConfig cluster;
  cluster.node_list = {"node1"};
  cluster.nodes["node1"] = {"node1", endpoint()};
  int exit_code = 0;
  std::string out, err, node;
  const Status status = RemoteRead(context_, cluster, LookupRead("m", {key}), &exit_code, &out, &err, &node);
  EXPECT_EQ(status.message(), "request too large (1572880 bytes, limit 1048576)");
}

}  // namespace
}  // namespace planb::testing
