#include "host/transfer/protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planb/encoding.h"
#include "tests/support/recorded_frames.h"

namespace planb::protocol {
namespace {

using ::testing::HasSubstr;

// Tokens whose halves differ, so that a codec that dropped or swapped one would show.
const Token kTokenA{0x0123456789abcdefull, 0xfedcba9876543210ull};
const Token kTokenB{0x1111111111111111ull, 0xabcdefull};

TEST(Protocol, HeaderIsMagicVersionCommandRequestIdBigEndian) {
  std::string header = EncodeHeader(Command::kChunkAck, 0x0102030405060708ull);
  ASSERT_EQ(header.size(), kHeaderSize);
  EXPECT_EQ(header, std::string("PLNB\x00\x04\x80\x02\x01\x02\x03\x04\x05\x06\x07\x08", 16));
  Header decoded;
  ASSERT_TRUE(DecodeHeader(header, &decoded).ok());
  EXPECT_EQ(decoded.version, 4);
  EXPECT_EQ(decoded.command, static_cast<uint16_t>(Command::kChunkAck));
  EXPECT_EQ(decoded.request_id, 0x0102030405060708ull);
}

// Messages of release 0.1.0 (protocol version 3), kept in tests/compat/0.1.0/protocol/: their headers decode (the
// version is the receiver's to refuse: upload_receiver_test.cc), and their payloads keep their layout: READ's
// fields are the same, BEGIN's checksum of the whole zip is the place of version 4's tail hash.
TEST(Protocol, DecodesAndWritesTheFramesOfRelease010) {
  const std::vector<std::string> begin = testing::ReadRecordedFrames("0.1.0/protocol/begin_v3.frames");
  ASSERT_EQ(begin.size(), 2u);
  Header header;
  ASSERT_TRUE(DecodeHeader(begin[0], &header).ok());
  EXPECT_EQ(header.version, 3);
  EXPECT_EQ(header.command, static_cast<uint16_t>(Command::kBegin));
  EXPECT_EQ(header.request_id, 1u);
  BeginRequest request;
  const Status decoded = DecodeBegin(begin[1], &request);
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(request.batch_id, "compat/0.1.0");
  EXPECT_EQ(request.total_size, 1000u);
  EXPECT_EQ(request.tail_hash, 0x0123456789abcdefull);
  EXPECT_EQ(request.flags, 0u);
  EXPECT_EQ(EncodeBegin({"compat/0.1.0", 1000, 0x0123456789abcdefull, 0}), begin[1]);

  const std::vector<std::string> read = testing::ReadRecordedFrames("0.1.0/protocol/read_v3.frames");
  ASSERT_EQ(read.size(), 2u);
  ASSERT_TRUE(DecodeHeader(read[0], &header).ok());
  EXPECT_EQ(header.version, 3);
  EXPECT_EQ(header.command, static_cast<uint16_t>(Command::kRead));
  EXPECT_EQ(header.request_id, 2u);
  ReadRequest lookup;
  const Status read_decoded = DecodeRead(read[1], &lookup);
  ASSERT_TRUE(read_decoded.ok()) << read_decoded.message();
  EXPECT_EQ(lookup.kind, ReadKind::kLookup);
  EXPECT_EQ(lookup.map, "cities");
  EXPECT_EQ(lookup.format, ReadFormat::kWire);
  EXPECT_EQ(lookup.keys, (std::vector<std::string>{"Paris", "Lyon"}));
  EXPECT_FALSE(lookup.time_ms.has_value());
  EXPECT_FALSE(lookup.quiet);
  EXPECT_EQ(EncodeRead(lookup), read[1]);

  // A version 2 header still decodes (the version is the receiver's to refuse: upload_receiver_test.cc).
  const std::vector<std::string> old = testing::ReadRecordedFrames("0.1.0/protocol/begin_v2.frames");
  ASSERT_EQ(old.size(), 2u);
  ASSERT_TRUE(DecodeHeader(old[0], &header).ok());
  EXPECT_EQ(header.version, 2);
  EXPECT_EQ(header.request_id, 7u);
}

TEST(Protocol, RequestsRoundTrip) {
  BeginRequest begin{"node1a/orders", 123456789012ull, 0xfedcba9876543210ull, kFlagSynchroniseMerge};
  BeginRequest begin_out;
  ASSERT_TRUE(DecodeBegin(EncodeBegin(begin), &begin_out).ok());
  EXPECT_EQ(begin_out.batch_id, begin.batch_id);
  EXPECT_EQ(begin_out.total_size, begin.total_size);
  EXPECT_EQ(begin_out.tail_hash, begin.tail_hash);
  EXPECT_EQ(begin_out.flags, begin.flags);

  ChunkRequest chunk_out;
  ASSERT_TRUE(DecodeChunk(EncodeChunk({kTokenA, 1u << 20}), &chunk_out).ok());
  EXPECT_EQ(chunk_out.token, kTokenA);
  EXPECT_EQ(chunk_out.offset, 1u << 20);

  CommitRequest commit_out;
  ASSERT_TRUE(DecodeCommit(EncodeCommit({Token{~0ull, ~0ull}, 0xfedcba9876543210ull}), &commit_out).ok());
  EXPECT_EQ(commit_out.token, (Token{~0ull, ~0ull}));
  EXPECT_EQ(commit_out.checksum, 0xfedcba9876543210ull);

  StatusRequest status_out;
  ASSERT_TRUE(DecodeStatus(EncodeStatus({kTokenB, 2500}), &status_out).ok());
  EXPECT_EQ(status_out.token, kTokenB);
  EXPECT_EQ(status_out.hold_ms, 2500u);
}

TEST(Protocol, RepliesRoundTrip) {
  ReadyReply ready_out;
  ASSERT_TRUE(DecodeReady(EncodeReady({kTokenA, 4096, 1u << 20, 8}), &ready_out).ok());
  EXPECT_EQ(ready_out.token, kTokenA);
  EXPECT_EQ(ready_out.resume_offset, 4096u);
  EXPECT_EQ(ready_out.chunk_size, 1u << 20);
  EXPECT_EQ(ready_out.window, 8u);

  ChunkAck ack_out;
  ASSERT_TRUE(DecodeChunkAck(EncodeChunkAck({kTokenA, 8192}), &ack_out).ok());
  EXPECT_EQ(ack_out.token, kTokenA);
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
  BeginRequest out{"x", 1, 1};
  ASSERT_TRUE(DecodeBegin(EncodeBegin({"", 0, 0}), &out).ok());
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
      {"READY", EncodeReady({kTokenA, 2, 3, 4}),
       [](std::string_view p) {
         ReadyReply m;
         return DecodeReady(p, &m);
       }},
      {"CHUNK", EncodeChunk({kTokenA, 2}),
       [](std::string_view p) {
         ChunkRequest m;
         return DecodeChunk(p, &m);
       }},
      {"CHUNK_ACK", EncodeChunkAck({kTokenA, 2}),
       [](std::string_view p) {
         ChunkAck m;
         return DecodeChunkAck(p, &m);
       }},
      {"COMMIT", EncodeCommit({kTokenA, 5}),
       [](std::string_view p) {
         CommitRequest m;
         return DecodeCommit(p, &m);
       }},
      {"STATUS", EncodeStatus({kTokenA, 2}),
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
      {"SNAPSHOT", EncodeSnapshot({"city_to_country", 3, 4}),
       [](std::string_view p) {
         SnapshotRequest m;
         return DecodeSnapshot(p, &m);
       }},
      {"SNAPSHOT_OFFER", EncodeSnapshotOffer({0, kTokenA, 2, 3, 4, 5, 6, 7}),
       [](std::string_view p) {
         SnapshotOffer m;
         return DecodeSnapshotOffer(p, &m);
       }},
      {"FETCH", EncodeFetch({kTokenA, 2, 3}),
       [](std::string_view p) {
         FetchRequest m;
         return DecodeFetch(p, &m);
       }},
      {"FETCH_DATA", EncodeFetchData({kTokenA, 2}),
       [](std::string_view p) {
         FetchData m;
         return DecodeFetchData(p, &m);
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
  ReadRequest lookup;
  lookup.kind = ReadKind::kLookup;
  lookup.map = "city_to_country";
  lookup.format = ReadFormat::kWire;
  lookup.keys = {"Paris", "", "--home", std::string("a\0b", 3)};
  lookup.time_ms = -1;  // before the epoch is an instant too
  lookup.quiet = true;
  ReadRequest out;
  ASSERT_TRUE(DecodeRead(EncodeRead(lookup), &out).ok());
  EXPECT_EQ(out.kind, ReadKind::kLookup);
  EXPECT_EQ(out.map, lookup.map);
  EXPECT_EQ(out.format, ReadFormat::kWire);
  EXPECT_EQ(out.keys, lookup.keys);
  EXPECT_EQ(out.time_ms, std::optional<int64_t>(-1));
  EXPECT_TRUE(out.quiet);
  lookup.time_ms.reset();
  lookup.quiet = false;
  ASSERT_TRUE(DecodeRead(EncodeRead(lookup), &out).ok());
  EXPECT_FALSE(out.time_ms.has_value());
  EXPECT_FALSE(out.quiet);

  ReadRequest query;
  query.kind = ReadKind::kQuery;
  query.map = "geo";
  query.format = ReadFormat::kCsv;
  query.where = "Key = 'a'";
  query.limit = 10;
  query.explain = true;
  ASSERT_TRUE(DecodeRead(EncodeRead(query), &out).ok());
  EXPECT_EQ(out.kind, ReadKind::kQuery);
  EXPECT_EQ(out.map, "geo");
  EXPECT_EQ(out.format, ReadFormat::kCsv);
  EXPECT_EQ(out.where, std::optional<std::string>("Key = 'a'"));
  EXPECT_EQ(out.limit, std::optional<uint64_t>(10));
  EXPECT_TRUE(out.explain);
  EXPECT_TRUE(out.keys.empty());
  query.where.reset();
  query.limit.reset();
  query.explain = false;
  query.format = ReadFormat::kTable;
  ASSERT_TRUE(DecodeRead(EncodeRead(query), &out).ok());
  EXPECT_FALSE(out.where.has_value());
  EXPECT_FALSE(out.limit.has_value());

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

// A lookup's READ with the fields given as bytes: kind, map, format, flags, then `rest`.
std::string LookupBytes(uint8_t format, uint8_t flags, const std::string& rest, const std::string& map = "m") {
  std::string bytes = {'\x01', '\0', '\0', '\0', '\0'};
  PutU32(reinterpret_cast<uint8_t*>(bytes.data()) + 1, static_cast<uint32_t>(map.size()));
  return bytes + map + std::string{static_cast<char>(format), static_cast<char>(flags)} + rest;
}
std::string QueryBytes(uint8_t format, uint8_t flags, const std::string& rest) {
  return std::string("\x02\x00\x00\x00\x01m", 6) + std::string{static_cast<char>(format), static_cast<char>(flags)} +
         rest;
}

TEST(Protocol, MalformedReadPayloadsNameTheField) {
  ReadRequest read;
  const std::string one_key("\x00\x00\x00\x01\x00\x00\x00\x01k", 9);
  ASSERT_TRUE(DecodeRead(LookupBytes(1, 0, one_key), &read).ok());
  EXPECT_EQ(read.keys, std::vector<std::string>{"k"});
  EXPECT_EQ(DecodeRead("", &read).message(), "READ payload of 0 bytes ends inside field kind (needs 1 bytes at offset 0)");
  // Version 2's command line (u32 argc first) is refused by its first byte.
  EXPECT_EQ(DecodeRead(std::string("\x00\x00\x00\x01\x00\x00\x00\x06lookup", 14), &read).message(),
            "READ payload: unknown kind 0 (1 lookup, 2 query)");
  EXPECT_EQ(DecodeRead(std::string("\x03", 1), &read).message(), "READ payload: unknown kind 3 (1 lookup, 2 query)");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, one_key, ""), &read).message(), "READ payload: map of 0 bytes (1 to 255)");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, one_key, std::string(256, 'm')), &read).message(),
            "READ payload: map of 256 bytes (1 to 255)");
  EXPECT_EQ(DecodeRead(LookupBytes(5, 0, one_key), &read).message(),
            "READ payload: format 5 is not one a lookup prints (1 text, 2 json, 3 csv, 4 wire, 6 answers)");
  EXPECT_EQ(DecodeRead(QueryBytes(4, 0, ""), &read).message(),
            "READ payload: format 4 is not one a query prints (5 table, 2 json, 3 csv)");
  EXPECT_EQ(DecodeRead(QueryBytes(0, 0, ""), &read).code(), Code::kInvalidArgument);
  EXPECT_EQ(DecodeRead(LookupBytes(1, 4, one_key), &read).message(), "READ payload: unknown flags 4 for a lookup");
  EXPECT_EQ(DecodeRead(QueryBytes(5, 0x80, ""), &read).message(), "READ payload: unknown flags 128 for a query");
  // Key counts: none, or more than the payload could hold, refused before anything is allocated.
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, std::string(4, '\0')), &read).message(),
            "READ payload: key_count 0 is no key");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8)), &read).message(),
            "READ payload: key_count 4294967295 is more than the 4 remaining bytes can hold");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 1, std::string(3, '\0')), &read).message(),
            "READ payload of 11 bytes ends inside field time_ms (needs 8 bytes at offset 8)");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, one_key.substr(0, 8)), &read).message(),
            "READ payload: string field keys[0] declares 1 bytes but only 0 remain");
  EXPECT_EQ(DecodeRead(LookupBytes(1, 0, one_key + "z"), &read).message(),
            "READ payload of 18 bytes has 1 bytes after its last field");
  // A query's where is bounded; its limit is above 0.
  const std::string where(kMaxReadWhere + 1, 'x');
  std::string length(4, '\0');
  PutU32(reinterpret_cast<uint8_t*>(length.data()), static_cast<uint32_t>(where.size()));
  EXPECT_EQ(DecodeRead(QueryBytes(5, 1, length + where), &read).message(),
            "READ payload: where of 65537 bytes (at most 65536)");
  EXPECT_EQ(DecodeRead(QueryBytes(5, 2, std::string(8, '\0')), &read).message(),
            "READ payload: limit 0 (a limit is above 0)");
  EXPECT_EQ(DecodeRead(QueryBytes(5, 2, std::string(7, '\0')), &read).message(),
            "READ payload of 15 bytes ends inside field limit (needs 8 bytes at offset 8)");
  EXPECT_EQ(ReadKindName(2), "query");
  EXPECT_EQ(ReadKindName(7), "read kind 7");

  ReadResult result;
  const std::string full = EncodeReadResult({1, "out", "err"});
  Status s = DecodeReadResult(full.substr(0, 3), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload of 3 bytes ends inside field exit_code (needs 4 bytes at offset 0)");
  s = DecodeReadResult(full.substr(0, full.size() - 1), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload: string field err declares 3 bytes but only 2 remain");
  s = DecodeReadResult(full.substr(0, 9), &result);
  EXPECT_EQ(s.message(), "READ_RESULT payload: string field out declares 3 bytes but only 1 remain");
}

TEST(Protocol, SnapshotAndFetchRoundTrip) {
  SnapshotRequest request{"City_To_Country", 12, 0xfedcba9876543210ull};
  SnapshotRequest request_out;
  ASSERT_TRUE(DecodeSnapshot(EncodeSnapshot(request), &request_out).ok());
  EXPECT_EQ(request_out.map, "City_To_Country");
  EXPECT_EQ(request_out.have_batches, 12u);
  EXPECT_EQ(request_out.have_digest, 0xfedcba9876543210ull);
  // Holding nothing is the version 0, 0.
  ASSERT_TRUE(DecodeSnapshot(EncodeSnapshot({"m", 0, 0}), &request_out).ok());
  EXPECT_EQ(request_out.have_batches, 0u);
  EXPECT_EQ(request_out.have_digest, 0u);

  SnapshotOffer offer;
  offer.token = kTokenB;
  offer.total_size = 123456789ull;
  offer.checksum = 0x1111222233334444ull;
  offer.batches = 7;
  offer.digest = 0x5555666677778888ull;
  offer.create_time_ms = 1700000000123;
  offer.chunk_size = 1u << 20;
  SnapshotOffer offer_out;
  ASSERT_TRUE(DecodeSnapshotOffer(EncodeSnapshotOffer(offer), &offer_out).ok());
  EXPECT_EQ(offer_out.not_modified, 0);
  EXPECT_EQ(offer_out.token, kTokenB);
  EXPECT_EQ(offer_out.total_size, 123456789ull);
  EXPECT_EQ(offer_out.checksum, 0x1111222233334444ull);
  EXPECT_EQ(offer_out.batches, 7u);
  EXPECT_EQ(offer_out.digest, 0x5555666677778888ull);
  EXPECT_EQ(offer_out.create_time_ms, 1700000000123);
  EXPECT_EQ(offer_out.chunk_size, 1u << 20);

  SnapshotOffer not_modified;
  not_modified.not_modified = 1;
  not_modified.batches = 7;
  not_modified.digest = 9;
  ASSERT_TRUE(DecodeSnapshotOffer(EncodeSnapshotOffer(not_modified), &offer_out).ok());
  EXPECT_EQ(offer_out.not_modified, 1);
  EXPECT_EQ(offer_out.token, Token{});
  EXPECT_EQ(offer_out.batches, 7u);
  EXPECT_EQ(offer_out.digest, 9u);
  // A create time before the epoch survives the u64 on the wire.
  offer.create_time_ms = -5;
  ASSERT_TRUE(DecodeSnapshotOffer(EncodeSnapshotOffer(offer), &offer_out).ok());
  EXPECT_EQ(offer_out.create_time_ms, -5);

  FetchRequest fetch_out;
  ASSERT_TRUE(DecodeFetch(EncodeFetch({kTokenA, 1u << 20, 65536}), &fetch_out).ok());
  EXPECT_EQ(fetch_out.token, kTokenA);
  EXPECT_EQ(fetch_out.offset, 1u << 20);
  EXPECT_EQ(fetch_out.length, 65536u);
  FetchData data_out;
  ASSERT_TRUE(DecodeFetchData(EncodeFetchData({kTokenB, 42}), &data_out).ok());
  EXPECT_EQ(data_out.token, kTokenB);
  EXPECT_EQ(data_out.offset, 42u);

  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kSnapshot)), "SNAPSHOT");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kSnapshotOffer)), "SNAPSHOT_OFFER");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kFetch)), "FETCH");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kFetchData)), "FETCH_DATA");
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kSnapshot)));
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kFetch)));
  EXPECT_FALSE(IsRequest(static_cast<uint16_t>(Command::kSnapshotOffer)));
  EXPECT_FALSE(IsRequest(static_cast<uint16_t>(Command::kFetchData)));
}

TEST(Protocol, SnapshotSinceRoundTripsWithAndWithoutAMaintenanceMark) {
  SnapshotSinceRequest ask{"geo", 7, 0xabcdefULL, int64_t{0}};  // time 0 is a real instant, not "none"
  SnapshotSinceRequest got;
  ASSERT_TRUE(DecodeSnapshotSince(EncodeSnapshotSince(ask), &got).ok());
  EXPECT_EQ(got.map, "geo");
  EXPECT_EQ(got.have_batches, 7u);
  EXPECT_EQ(got.have_digest, 0xabcdefULL);
  ASSERT_TRUE(got.last_condensed_ms.has_value());
  EXPECT_EQ(*got.last_condensed_ms, 0);
  ask.last_condensed_ms = -5;  // before the epoch: still a time
  ASSERT_TRUE(DecodeSnapshotSince(EncodeSnapshotSince(ask), &got).ok());
  EXPECT_EQ(got.last_condensed_ms, std::optional<int64_t>(-5));
  ask.last_condensed_ms.reset();
  ASSERT_TRUE(DecodeSnapshotSince(EncodeSnapshotSince(ask), &got).ok());
  EXPECT_FALSE(got.last_condensed_ms.has_value());
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kSnapshotSince)));
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kSnapshotSince)), "SNAPSHOT_SINCE");
}

TEST(Protocol, MalformedSnapshotSincePayloadsNameTheField) {
  SnapshotSinceRequest got;
  std::string payload = EncodeSnapshotSince({"geo", 1, 2, std::nullopt});
  // map (4 + 3) + 2 x 8, then the flag at offset 23 and the time at 24.
  std::string bad = payload;
  bad[23] = 2;
  EXPECT_EQ(DecodeSnapshotSince(bad, &got).message(), "SNAPSHOT_SINCE payload: condensed is 2, not 0 or 1");
  bad = payload;
  bad[31] = 1;  // the u64 is big-endian on the wire
  EXPECT_EQ(DecodeSnapshotSince(bad, &got).message(),
            "SNAPSHOT_SINCE payload: last_condensed_ms is 1 where condensed is 0 (must be 0)");
  EXPECT_EQ(DecodeSnapshotSince(payload.substr(0, 28), &got).message(),
            "SNAPSHOT_SINCE payload of 28 bytes ends inside field last_condensed_ms (needs 8 bytes at offset 24)");
  EXPECT_EQ(DecodeSnapshotSince(payload + "x", &got).code(), Code::kInvalidArgument);
}

TEST(Protocol, MalformedSnapshotAndFetchPayloadsNameTheField) {
  SnapshotOffer offer;
  std::string payload = EncodeSnapshotOffer({1, Token{}, 0, 0, 3, 4, 0, 0});
  payload[0] = 3;
  Status s = DecodeSnapshotOffer(payload, &offer);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "SNAPSHOT_OFFER payload: not_modified is 3, not 0, 1 or 2");
  payload[0] = static_cast<char>(0xff);
  EXPECT_EQ(DecodeSnapshotOffer(payload, &offer).message(),
            "SNAPSHOT_OFFER payload: not_modified is 255, not 0, 1 or 2");
  payload[0] = static_cast<char>(kOfferDiff);
  ASSERT_TRUE(DecodeSnapshotOffer(payload, &offer).ok());
  EXPECT_EQ(offer.not_modified, kOfferDiff);
  // 1 + 16 + 5 * 8 + 4 bytes: cut inside create_time_ms (offset 49) and chunk_size (offset 57).
  payload[0] = 0;
  EXPECT_EQ(DecodeSnapshotOffer(payload.substr(0, 53), &offer).message(),
            "SNAPSHOT_OFFER payload of 53 bytes ends inside field create_time_ms (needs 8 bytes at offset 49)");
  EXPECT_EQ(DecodeSnapshotOffer(payload.substr(0, 59), &offer).message(),
            "SNAPSHOT_OFFER payload of 59 bytes ends inside field chunk_size (needs 4 bytes at offset 57)");
  EXPECT_EQ(DecodeSnapshotOffer(payload + "zz", &offer).message(),
            "SNAPSHOT_OFFER payload of 63 bytes has 2 bytes after its last field");

  SnapshotRequest request;
  std::string snapshot = EncodeSnapshot({"abc", 1, 2});  // 4 + 3 + 8 + 8 bytes
  EXPECT_EQ(DecodeSnapshot(snapshot.substr(0, 10), &request).message(),
            "SNAPSHOT payload of 10 bytes ends inside field have_batches (needs 8 bytes at offset 7)");
  EXPECT_EQ(DecodeSnapshot(snapshot.substr(0, 20), &request).message(),
            "SNAPSHOT payload of 20 bytes ends inside field have_digest (needs 8 bytes at offset 15)");
  snapshot[3] = 50;  // map now claims 50 bytes
  EXPECT_EQ(DecodeSnapshot(snapshot, &request).message(),
            "SNAPSHOT payload: string field map declares 50 bytes but only 19 remain");

  FetchRequest fetch;
  const std::string fetch_payload = EncodeFetch({kTokenA, 2, 3});  // 16 + 8 + 4 bytes
  EXPECT_EQ(DecodeFetch(fetch_payload.substr(0, 26), &fetch).message(),
            "FETCH payload of 26 bytes ends inside field length (needs 4 bytes at offset 24)");
  EXPECT_EQ(DecodeFetch(fetch_payload.substr(0, 12), &fetch).message(),
            "FETCH payload of 12 bytes ends inside field token (needs 8 bytes at offset 8)");
  EXPECT_EQ(DecodeFetch(fetch_payload + "x", &fetch).message(),
            "FETCH payload of 29 bytes has 1 bytes after its last field");
  FetchData data;
  EXPECT_EQ(DecodeFetchData(EncodeFetchData({kTokenA, 2}).substr(0, 20), &data).message(),
            "FETCH_DATA payload of 20 bytes ends inside field offset (needs 8 bytes at offset 16)");
}

TEST(Protocol, PrepareAndItsReplyRoundTrip) {
  PrepareRequest request;
  request.maps = {{"city_to_country", 123456789012ull}, {"m", 0}};
  PrepareRequest request_out;
  ASSERT_TRUE(DecodePrepare(EncodePrepare(request), &request_out).ok());
  ASSERT_EQ(request_out.maps.size(), 2u);
  EXPECT_EQ(request_out.maps[0].map, "city_to_country");
  EXPECT_EQ(request_out.maps[0].bytes, 123456789012ull);
  EXPECT_EQ(request_out.maps[1].map, "m");
  EXPECT_EQ(request_out.maps[1].bytes, 0u);

  PrepareReply reply;
  reply.maps = {{"city_to_country", PrepareVerdict::kOk, 7, 0xfedcba9876543210ull, ""},
                {"m", PrepareVerdict::kNoRoomInMap, 0, 0, "map m: 10 bytes used + 20 > max_store_size 25"},
                {"h", PrepareVerdict::kHeldBack, 3, 4, "map 'h' is held back behind quarantined batch Q"}};
  PrepareReply reply_out;
  ASSERT_TRUE(DecodePrepareReply(EncodePrepareReply(reply), &reply_out).ok());
  ASSERT_EQ(reply_out.maps.size(), 3u);
  EXPECT_EQ(reply_out.maps[2].verdict, PrepareVerdict::kHeldBack);
  EXPECT_EQ(reply_out.maps[2].batches, 3u);
  EXPECT_EQ(reply_out.maps[0].verdict, PrepareVerdict::kOk);
  EXPECT_EQ(reply_out.maps[0].batches, 7u);
  EXPECT_EQ(reply_out.maps[0].digest, 0xfedcba9876543210ull);
  EXPECT_EQ(reply_out.maps[1].verdict, PrepareVerdict::kNoRoomInMap);
  EXPECT_EQ(reply_out.maps[1].message, "map m: 10 bytes used + 20 > max_store_size 25");
  // No maps at all is a valid (empty) load.
  ASSERT_TRUE(DecodePrepare(EncodePrepare({}), &request_out).ok());
  EXPECT_TRUE(request_out.maps.empty());
}

TEST(Protocol, MalformedPreparesNameWhatIsWrong) {
  PrepareRequest request;
  // A count above the cap, and one above what the bytes could hold, are refused before anything is allocated.
  std::string payload = EncodePrepare({{{"m", 1}}});
  PutU32(reinterpret_cast<uint8_t*>(payload.data()), 5000);
  EXPECT_EQ(DecodePrepare(payload, &request).message(), "PREPARE payload: 5000 maps, more than 4096 allowed");
  PutU32(reinterpret_cast<uint8_t*>(payload.data()), 2);
  EXPECT_EQ(DecodePrepare(payload, &request).message(),
            "PREPARE payload: 2 maps, more than the remaining 13 bytes hold");
  PutU32(reinterpret_cast<uint8_t*>(payload.data()), 1);
  EXPECT_EQ(DecodePrepare(payload.substr(0, 12), &request).message(),
            "PREPARE payload: 1 maps, more than the remaining 8 bytes hold");
  EXPECT_EQ(DecodePrepare(payload.substr(0, 16), &request).message(),
            "PREPARE payload of 16 bytes ends inside field bytes (needs 8 bytes at offset 9)");
  EXPECT_EQ(DecodePrepare(payload + "x", &request).message(),
            "PREPARE payload of 18 bytes has 1 bytes after its last field");
  EXPECT_EQ(DecodePrepare("", &request).message(),
            "PREPARE payload of 0 bytes ends inside field count (needs 4 bytes at offset 0)");

  PrepareReply reply;
  std::string answer = EncodePrepareReply({{{"m", PrepareVerdict::kOk, 1, 2, ""}}});
  answer[4 + 4 + 1] = 9;  // the verdict, after the count and the map name
  EXPECT_EQ(DecodePrepareReply(answer, &reply).message(), "PREPARE_REPLY payload: unknown verdict 9");
  PutU32(reinterpret_cast<uint8_t*>(answer.data()), 4097);
  EXPECT_EQ(DecodePrepareReply(answer, &reply).message(),
            "PREPARE_REPLY payload: 4097 maps, more than 4096 allowed");
}

TEST(Protocol, CatchUpRequestsAndTheListRoundTrip) {
  ListMergedRequest list_out;
  ASSERT_TRUE(DecodeListMerged(EncodeListMerged({"city", "key-ab/7", 12}), &list_out).ok());
  EXPECT_EQ(list_out.map, "city");
  EXPECT_EQ(list_out.after, "key-ab/7");
  EXPECT_EQ(list_out.limit, 12u);
  ASSERT_TRUE(DecodeListMerged(EncodeListMerged({"city", "", kMaxListedBatches}), &list_out).ok());
  EXPECT_EQ(list_out.after, "");

  MergedList list;
  list.batches = 9;
  list.digest = 0x0123456789abcdefull;
  list.now_ms = 1700000000123;
  list.more = 1;
  list.ids = {{"content:00ff", 0, 1}, {"node1/42", -5, 0}};  // time 0 and before the epoch are instants too
  MergedList list_back;
  ASSERT_TRUE(DecodeMergedList(EncodeMergedList(list), &list_back).ok());
  EXPECT_EQ(list_back.batches, 9u);
  EXPECT_EQ(list_back.digest, 0x0123456789abcdefull);
  EXPECT_EQ(list_back.now_ms, 1700000000123);
  EXPECT_EQ(list_back.more, 1);
  ASSERT_EQ(list_back.ids.size(), 2u);
  EXPECT_EQ(list_back.ids[0].id, "content:00ff");
  EXPECT_EQ(list_back.ids[0].merged_ms, 0);
  EXPECT_EQ(list_back.ids[0].retained, 1);
  EXPECT_EQ(list_back.ids[1].id, "node1/42");
  EXPECT_EQ(list_back.ids[1].merged_ms, -5);
  EXPECT_EQ(list_back.ids[1].retained, 0);

  OfferBatchRequest offer_out;
  ASSERT_TRUE(DecodeOfferBatch(EncodeOfferBatch({"key-ab/content:12"}), &offer_out).ok());
  EXPECT_EQ(offer_out.batch_id, "key-ab/content:12");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kListMerged)), "LIST_MERGED");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kMergedList)), "MERGED_LIST");
  EXPECT_EQ(CommandName(static_cast<uint16_t>(Command::kOfferBatch)), "OFFER_BATCH");
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kListMerged)));
  EXPECT_TRUE(IsRequest(static_cast<uint16_t>(Command::kOfferBatch)));
  EXPECT_FALSE(IsRequest(static_cast<uint16_t>(Command::kMergedList)));
}

TEST(Protocol, MalformedCatchUpPayloadsNameWhatIsWrong) {
  ListMergedRequest list_request;
  EXPECT_EQ(DecodeListMerged(EncodeListMerged({"m", "", 0}), &list_request).message(),
            "LIST_MERGED payload: limit 0 is not 1 to 4096");
  EXPECT_EQ(DecodeListMerged(EncodeListMerged({"m", "", 4097}), &list_request).message(),
            "LIST_MERGED payload: limit 4097 is not 1 to 4096");
  EXPECT_EQ(DecodeListMerged(EncodeListMerged({"m", "a\nb", 1}), &list_request).message(),
            "LIST_MERGED payload: field after is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");
  EXPECT_EQ(DecodeListMerged(EncodeListMerged({"m", "", 1}) + "x", &list_request).message(),
            "LIST_MERGED payload of 14 bytes has 1 bytes after its last field");
  EXPECT_EQ(DecodeListMerged("", &list_request).message(),
            "LIST_MERGED payload of 0 bytes ends inside field map (needs 4 bytes at offset 0)");

  OfferBatchRequest offer;
  EXPECT_EQ(DecodeOfferBatch(EncodeOfferBatch({""}), &offer).message(),
            "OFFER_BATCH payload: batch_id is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");
  EXPECT_EQ(DecodeOfferBatch(EncodeOfferBatch({std::string(256, 'a')}), &offer).message(),
            "OFFER_BATCH payload: batch_id is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");
  EXPECT_EQ(DecodeOfferBatch(EncodeOfferBatch({"../../etc/passwd\x01"}), &offer).message(),
            "OFFER_BATCH payload: batch_id is not a batch id (1 to 255 bytes of A-Z a-z 0-9 . _ - : /)");

  MergedList list;
  MergedList good;
  good.ids = {{"a", 1, 1}};
  const std::string payload = EncodeMergedList(good);  // batches, digest, now, more, count, then the id
  std::string bad = payload;
  bad[24] = 2;  // more
  EXPECT_EQ(DecodeMergedList(bad, &list).message(), "MERGED_LIST payload: more is 2, not 0 or 1");
  bad = payload;
  bad.back() = 3;  // retained
  EXPECT_EQ(DecodeMergedList(bad, &list).message(), "MERGED_LIST payload: retained is 3, not 0 or 1");
  bad = payload;
  PutU32(reinterpret_cast<uint8_t*>(bad.data()) + 25, 5000);
  EXPECT_EQ(DecodeMergedList(bad, &list).message(), "MERGED_LIST payload: 5000 ids, more than 4096 allowed");
  PutU32(reinterpret_cast<uint8_t*>(bad.data()) + 25, 2);
  EXPECT_EQ(DecodeMergedList(bad, &list).message(),
            "MERGED_LIST payload: 2 ids, more than the remaining 14 bytes hold");
  MergedList control;
  control.ids = {{"a b", 1, 0}};
  EXPECT_EQ(DecodeMergedList(EncodeMergedList(control), &list).message(),
            "MERGED_LIST payload: an id that is not a batch id");
  // A cut entry: refused by the count, before an id is read.
  EXPECT_EQ(DecodeMergedList(payload.substr(0, payload.size() - 1), &list).message(),
            "MERGED_LIST payload: 1 ids, more than the remaining 13 bytes hold");
}

}  // namespace
}  // namespace planb::protocol
