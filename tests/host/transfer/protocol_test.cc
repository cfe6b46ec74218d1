#include "host/transfer/protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace planb::protocol {
namespace {

using ::testing::HasSubstr;

TEST(Protocol, HeaderIsMagicVersionCommandRequestIdBigEndian) {
  std::string header = EncodeHeader(Command::kChunkAck, 0x0102030405060708ull);
  ASSERT_EQ(header.size(), kHeaderSize);
  EXPECT_EQ(header, std::string("PLNB\x00\x01\x80\x02\x01\x02\x03\x04\x05\x06\x07\x08", 16));
  Header decoded;
  ASSERT_TRUE(DecodeHeader(header, &decoded).ok());
  EXPECT_EQ(decoded.version, 1);
  EXPECT_EQ(decoded.command, static_cast<uint16_t>(Command::kChunkAck));
  EXPECT_EQ(decoded.request_id, 0x0102030405060708ull);
}

TEST(Protocol, RequestsRoundTrip) {
  BeginRequest begin{"node1a/orders", 123456789012ull, 0xfedcba9876543210ull, kFlagSynchroniseMerge};
  BeginRequest begin_out;
  ASSERT_TRUE(DecodeBegin(EncodeBegin(begin), &begin_out).ok());
  EXPECT_EQ(begin_out.batch_id, begin.batch_id);
  EXPECT_EQ(begin_out.total_size, begin.total_size);
  EXPECT_EQ(begin_out.checksum, begin.checksum);
  EXPECT_EQ(begin_out.flags, begin.flags);

  ChunkRequest chunk_out;
  ASSERT_TRUE(DecodeChunk(EncodeChunk({7, 1u << 20}), &chunk_out).ok());
  EXPECT_EQ(chunk_out.token, 7u);
  EXPECT_EQ(chunk_out.offset, 1u << 20);

  CommitRequest commit_out;
  ASSERT_TRUE(DecodeCommit(EncodeCommit({~0ull}), &commit_out).ok());
  EXPECT_EQ(commit_out.token, ~0ull);

  StatusRequest status_out;
  ASSERT_TRUE(DecodeStatus(EncodeStatus({9, 2500}), &status_out).ok());
  EXPECT_EQ(status_out.token, 9u);
  EXPECT_EQ(status_out.hold_ms, 2500u);
}

TEST(Protocol, RepliesRoundTrip) {
  ReadyReply ready_out;
  ASSERT_TRUE(DecodeReady(EncodeReady({11, 4096, 1u << 20, 8}), &ready_out).ok());
  EXPECT_EQ(ready_out.token, 11u);
  EXPECT_EQ(ready_out.resume_offset, 4096u);
  EXPECT_EQ(ready_out.chunk_size, 1u << 20);
  EXPECT_EQ(ready_out.window, 8u);

  ChunkAck ack_out;
  ASSERT_TRUE(DecodeChunkAck(EncodeChunkAck({11, 8192}), &ack_out).ok());
  EXPECT_EQ(ack_out.token, 11u);
  EXPECT_EQ(ack_out.received_total, 8192u);

  StatusReply status{UploadState::kMergeFailed, 42, static_cast<uint16_t>(Code::kFull), "map m: disk full"};
  StatusReply status_out;
  ASSERT_TRUE(DecodeStatusReply(EncodeStatusReply(status), &status_out).ok());
  EXPECT_EQ(status_out.state, UploadState::kMergeFailed);
  EXPECT_EQ(status_out.sequence, 42u);
  EXPECT_EQ(status_out.code, static_cast<uint16_t>(Code::kFull));
  EXPECT_EQ(status_out.message, "map m: disk full");

  ErrorReply error_out;
  ASSERT_TRUE(
      DecodeError(EncodeError({static_cast<uint16_t>(Code::kCorruption), "checksum mismatch"}), &error_out).ok());
  EXPECT_EQ(CodeFromWire(error_out.code), Code::kCorruption);
  EXPECT_EQ(error_out.message, "checksum mismatch");
}

TEST(Protocol, EmptyStringsRoundTrip) {
  BeginRequest out{"x", 1, 1, 1};
  ASSERT_TRUE(DecodeBegin(EncodeBegin({"", 0, 0, 0}), &out).ok());
  EXPECT_EQ(out.batch_id, "");
  EXPECT_EQ(out.total_size, 0u);
}

TEST(Protocol, ShortHeaderNamesItsSize) {
  Header header;
  Status status = DecodeHeader(std::string("PLNB\x00\x01\x00", 7), &header);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("message header of 7 bytes is shorter than the 16"));
  EXPECT_THAT(DecodeHeader("", &header).message(), HasSubstr("message header of 0 bytes"));
}

TEST(Protocol, BadMagicShowsTheBytesAndKeepsTheRequestId) {
  std::string frame = EncodeHeader(Command::kBegin, 77);
  frame[0] = 'G';
  frame[1] = 'E';
  frame[2] = 'T';
  frame[3] = ' ';
  Header header;
  Status status = DecodeHeader(frame, &header);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("starts with bytes 47 45 54 20, not the magic \"PLNB\""));
  EXPECT_EQ(header.request_id, 77u);
}

TEST(Protocol, OtherVersionsDecodeForTheCallerToRefuse) {
  std::string frame = EncodeHeader(Command::kBegin, 5);
  frame[5] = 2;
  Header header;
  ASSERT_TRUE(DecodeHeader(frame, &header).ok());
  EXPECT_EQ(header.version, 2);
  EXPECT_EQ(header.request_id, 5u);
}

// Every payload cut short, at every length, fails with an error naming the command and the field it ends in.
TEST(Protocol, EveryTruncatedPayloadNamesCommandAndField) {
  struct Case {
    std::string name;
    std::string payload;
    std::function<Status(std::string_view)> decode;
  };
  std::vector<Case> cases = {
      {"BEGIN", EncodeBegin({"batch", 1, 2, 3}),
       [](std::string_view p) {
         BeginRequest m;
         return DecodeBegin(p, &m);
       }},
      {"READY", EncodeReady({1, 2, 3, 4}),
       [](std::string_view p) {
         ReadyReply m;
         return DecodeReady(p, &m);
       }},
      {"CHUNK", EncodeChunk({1, 2}),
       [](std::string_view p) {
         ChunkRequest m;
         return DecodeChunk(p, &m);
       }},
      {"CHUNK_ACK", EncodeChunkAck({1, 2}),
       [](std::string_view p) {
         ChunkAck m;
         return DecodeChunkAck(p, &m);
       }},
      {"COMMIT", EncodeCommit({1}),
       [](std::string_view p) {
         CommitRequest m;
         return DecodeCommit(p, &m);
       }},
      {"STATUS", EncodeStatus({1, 2}),
       [](std::string_view p) {
         StatusRequest m;
         return DecodeStatus(p, &m);
       }},
      {"STATUS reply", EncodeStatusReply({UploadState::kFailed, 1, 2, "why"}),
       [](std::string_view p) {
         StatusReply m;
         return DecodeStatusReply(p, &m);
       }},
      {"ERROR", EncodeError({2, "bad"}),
       [](std::string_view p) {
         ErrorReply m;
         return DecodeError(p, &m);
       }},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(c.decode(c.payload).ok()) << c.name;
    for (size_t length = 0; length < c.payload.size(); ++length) {
      Status status = c.decode(std::string_view(c.payload).substr(0, length));
      EXPECT_EQ(status.code(), Code::kInvalidArgument) << c.name << " cut to " << length;
      EXPECT_THAT(status.message(), HasSubstr(c.name + " payload")) << length;
      EXPECT_TRUE(status.message().find("ends inside field") != std::string::npos ||
                  status.message().find("string field") != std::string::npos)
          << status.message();
    }
    Status trailing = c.decode(c.payload + "x");
    EXPECT_THAT(trailing.message(), HasSubstr(c.name + " payload of " + std::to_string(c.payload.size() + 1) +
                                              " bytes has 1 bytes after its last field"));
  }
}

TEST(Protocol, TruncationMessageNamesFieldAndOffset) {
  std::string payload = EncodeBegin({"ab", 1, 2, 3});  // 4 + 2 + 8 + 8 + 4 bytes
  BeginRequest m;
  EXPECT_EQ(DecodeBegin(payload.substr(0, 10), &m).message(),
            "BEGIN payload of 10 bytes ends inside field total_size (needs 8 bytes at offset 6)");
  EXPECT_EQ(DecodeBegin(payload.substr(0, 2), &m).message(),
            "BEGIN payload of 2 bytes ends inside field batch_id (needs 4 bytes at offset 0)");
}

TEST(Protocol, StringLongerThanThePayloadIsRefused) {
  std::string payload = EncodeBegin({"abc", 1, 2, 3});
  payload[3] = 100;  // batch_id now claims 100 bytes
  BeginRequest m;
  EXPECT_EQ(DecodeBegin(payload, &m).message(),
            "BEGIN payload: string field batch_id declares 100 bytes but only 23 remain");
}

TEST(Protocol, UnknownStateIsRefused) {
  std::string payload = EncodeStatusReply({UploadState::kStaged, 1, 0, ""});
  payload[0] = 9;
  StatusReply m;
  EXPECT_EQ(DecodeStatusReply(payload, &m).message(), "STATUS reply payload: unknown state 9");
}

TEST(Protocol, CommandNamesAndDirections) {
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kBegin)), "BEGIN");
  EXPECT_EQ(CommandName(0x1234), "command 0x1234");
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kStatus)));
  EXPECT_FALSE(IsRequest(static_cast<uint16_t>(Command::kReady)));
  EXPECT_FALSE(IsRequest(0x0042));
}

TEST(Protocol, UnknownCodesBecomeInternal) {
  EXPECT_EQ(CodeFromWire(static_cast<uint16_t>(Code::kFull)), Code::kFull);
  EXPECT_EQ(CodeFromWire(999), Code::kInternal);
}

TEST(Protocol, ReadAndReadResultRoundTrip) {
  ReadRequest read{{"query", "--where", "Key = 'a'", "", "--", "city_to_country"}};
  ReadRequest read_out;
  ASSERT_TRUE(DecodeRead(EncodeRead(read), &read_out).ok());
  EXPECT_EQ(read_out.args, read.args);
  ASSERT_TRUE(DecodeRead(EncodeRead({}), &read_out).ok());
  EXPECT_TRUE(read_out.args.empty());

  ReadResult result{-3, std::string("a\0b\n", 4), "planb: no key 'x'\n"};
  ReadResult result_out;
  ASSERT_TRUE(DecodeReadResult(EncodeReadResult(result), &result_out).ok());
  EXPECT_EQ(result_out.exit_code, -3);
  EXPECT_EQ(result_out.out, result.out);
  EXPECT_EQ(result_out.err, result.err);
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kRead)), "READ");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kReadResult)), "READ_RESULT");
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kRead)));
  EXPECT_FALSE(IsRequest(static_cast<uint16_t>(Command::kReadResult)));
}

TEST(Protocol, MalformedReadPayloadsNameTheField) {
  ReadRequest read;
  Status s = DecodeRead(std::string("\x00\x00", 2), &read);
  EXPECT_EQ(s.message(), "READ payload of 2 bytes ends inside field argc (needs 4 bytes at offset 0)");
  // An argc no payload of this size could hold is refused before anything is allocated.
  s = DecodeRead(std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8), &read);
  EXPECT_EQ(s.message(), "READ payload: argc 4294967295 is more than the 4 remaining bytes can hold");
  const std::string two = EncodeRead({{"lookup", "m"}});
  s = DecodeRead(two.substr(0, two.size() - 1), &read);
  EXPECT_EQ(s.message(), "READ payload: string field args[1] declares 1 bytes but only 0 remain");
  s = DecodeRead(two + "z", &read);
  EXPECT_EQ(s.message(),
            "READ payload of " + std::to_string(two.size() + 1) + " bytes has 1 bytes after its last field");

  ReadResult result;
  const std::string full = EncodeReadResult({1, "out", "err"});
  s = DecodeReadResult(full.substr(0, 3), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload of 3 bytes ends inside field exit_code (needs 4 bytes at offset 0)");
  s = DecodeReadResult(full.substr(0, full.size() - 1), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload: string field err declares 3 bytes but only 2 remain");
  s = DecodeReadResult(full.substr(0, 9), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload: string field out declares 3 bytes but only 1 remain");
}

TEST(Protocol, ReadArgsAreLookupOrQueryWithoutGlobalOptions) {
  EXPECT_TRUE(CheckReadArgs({"lookup", "--time", "2024-01-01T00:00:00Z", "--", "m", "k"}).ok());
  EXPECT_TRUE(CheckReadArgs({"query", "--", "--config"}).ok());  // an argument after "--"
  EXPECT_EQ(CheckReadArgs({"serve"}).message(), "READ runs lookup or query only, not 'serve'");
  EXPECT_EQ(CheckReadArgs({"query", "--config=x", "m"}).message(),
            "READ refuses the option --config: a remote command runs on the node's own home, config and plugins");
  EXPECT_EQ(CheckReadArgs({"query", "--plugin-dir", "d", "m"}).code(), Code::kInvalidArgument);
  EXPECT_TRUE(CheckReadArgs({"query", "--homer", "m"}).ok());  // not a global option (the parser refuses it)
}

}  // namespace
}  // namespace planb::protocol
