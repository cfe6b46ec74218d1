// Hostile or broken batches sent to a real `planb serve`: each is refused with an error that reaches the sender,
// nothing is staged, the shards do not change, and the node goes on serving. The batches come through
// UploadBatch; broken uploads and messages come frame by frame from a raw DEALER (upload_fixture.h).
#include <gtest/gtest.h>
#include <zip.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "host/transfer/protocol.h"
#include "host/transfer/upload_client.h"
#include "planb/encoding.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb {
namespace {

using ::planb::protocol::Command;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::RandomBytes;
using ::planb::testing::RawSender;
using ::planb::testing::Xxh3;

using Entries = std::vector<std::pair<std::string, std::string>>;

// A zip with `entries` (name, bytes) in order, deflated.
std::string MakeZip(const std::string& path, const Entries& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) return "";
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) return "";
    zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 9);
  }
  return zip_close(zip) == 0 ? path : "";
}

const std::string kManifest = "planb-batch 2\nid test/bad\n";

class BadUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.top_level_extra = "max_batch_size = 8MiB\n";
    ASSERT_TRUE(cluster_.StartNode(0)) << cluster_.process(0).log();
    ASSERT_EQ(cluster_.Load({ExampleDataFiles()[0]}).exit_code, 0);
    ASSERT_TRUE(cluster_.WaitMerged(0));
    shards_before_ = cluster_.Dump(0);
  }

  // Uploads the zip and returns the node's answer; checks that nothing was staged or merged.
  Status Upload(const std::string& zip_path) {
    UploadSettings settings;
    settings.request_timeout_ms = 5000;
    UploadOutcome outcome;
    const Status s = UploadBatch(context_, UploadTarget{"node1", cluster_.endpoint(0)}, zip_path, "test/" + zip_path,
                                 settings, &outcome);
    EXPECT_EQ(outcome.attempts, 1) << "a refused batch is not retried";
    EXPECT_TRUE(cluster_.WaitMerged(0));
    EXPECT_EQ(cluster_.Dump(0), shards_before_);
    return s;
  }

  // After a refused raw upload or message: no part file left in receive/, nothing staged, the shards as they were,
  // and the node's log names the problem.
  void ExpectNothingKept(const std::string& logged) {
    EXPECT_TRUE(testing::PartFiles(cluster_.home(0) + "/receive").empty());
    EXPECT_TRUE(cluster_.WaitMerged(0));
    EXPECT_EQ(cluster_.Dump(0), shards_before_);
    EXPECT_TRUE(testing::WaitUntil([&] { return cluster_.process(0).log().find(logged) != std::string::npos; },
                                   {cluster_.process(0).log_file()}))
        << "no \"" << logged << "\" in the node's log:\n"
        << cluster_.process(0).log();
  }

  void TearDown() override {
    // Still serving: a good load goes through.
    EXPECT_TRUE(cluster_.process(0).running()) << cluster_.process(0).log();
    EXPECT_EQ(cluster_.Load({ExampleDataFiles()[1]}).exit_code, 0);
  }

  ClusterFixture cluster_{1};
  zmq::context_t context_;
  std::string shards_before_;
};

TEST_F(BadUpload, AnEntryEscapingTheDirectoryIsRefused) {
  const Status s =
      Upload(MakeZip(cluster_.dir() + "/slip.zip", {{"planb-batch", kManifest}, {"../evil/data.mdb", "x"}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("../evil/data.mdb"), std::string::npos) << s.message();
}

TEST_F(BadUpload, AZipBombIsRefusedBeforeItIsUnpacked) {
  const std::string zeros(64 << 20, '\0');  // 64 MiB declared, a few tens of KiB on the wire
  const Status s =
      Upload(MakeZip(cluster_.dir() + "/bomb.zip", {{"planb-batch", kManifest}, {"city_to_country/data.mdb", zeros}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("bomb.zip"), std::string::npos) << s.message();
}

TEST_F(BadUpload, ABatchForAMapThisNodeDoesNotKnowIsRefused) {
  const Status s =
      Upload(MakeZip(cluster_.dir() + "/unknown.zip", {{"planb-batch", kManifest}, {"no_such_map/data.mdb", "x"}}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("no_such_map"), std::string::npos) << s.message();
}

TEST_F(BadUpload, ACorruptLmdbFileIsRefused) {
  std::string garbage(256 << 10, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 2654435761u) >> 13);
  const Status s = Upload(
      MakeZip(cluster_.dir() + "/corrupt.zip", {{"planb-batch", kManifest}, {"city_to_country/data.mdb", garbage}}));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("city_to_country"), std::string::npos) << s.message();
}

TEST_F(BadUpload, SomethingThatIsNotAZipIsRefused) {
  testing::WriteFile(cluster_.dir() + "/text.zip", "not a zip at all");
  const Status s = Upload(cluster_.dir() + "/text.zip");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("text.zip"), std::string::npos) << s.message();
}

constexpr size_t kRawChunk = 64 * 1024;

TEST_F(BadUpload, ACommitBeforeEveryByteArrivedIsATruncatedUpload) {
  RawSender raw(context_, cluster_.endpoint(0));
  const std::string contents = RandomBytes(300 * 1024, 1);
  const protocol::ReadyReply ready = raw.Begin("test/truncated", contents, Xxh3(contents));
  EXPECT_EQ(raw.SendChunks(ready.token, contents, 0, 100 * 1024, kRawChunk), 100u * 1024);
  raw.Commit(ready.token);
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kCorruption);
  EXPECT_EQ(error.message, "truncated upload: received 102400 of 307200 bytes");
  ExpectNothingKept("upload error for batch test/truncated: truncated upload: received 102400 of 307200 bytes");
}

TEST_F(BadUpload, BytesThatDoNotHashToTheDeclaredChecksumAreRefused) {
  RawSender raw(context_, cluster_.endpoint(0));
  const std::string contents = RandomBytes(300 * 1024, 2);
  const protocol::ReadyReply ready = raw.Begin("test/checksum", contents, Xxh3(contents) ^ 1);
  EXPECT_EQ(raw.SendChunks(ready.token, contents, 0, contents.size(), kRawChunk), contents.size());
  raw.Commit(ready.token);
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kCorruption);
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "checksum mismatch: received data hashes to %016llx, sender declared %016llx",
                static_cast<unsigned long long>(Xxh3(contents)), static_cast<unsigned long long>(Xxh3(contents) ^ 1));
  EXPECT_EQ(error.message, expected);
  ExpectNothingKept(std::string("upload error for batch test/checksum: ") + expected);
}

TEST_F(BadUpload, AnUnknownProtocolVersionIsRefused) {
  RawSender raw(context_, cluster_.endpoint(0));
  std::string header = protocol::EncodeHeader(Command::kBegin, 41);
  PutU16(reinterpret_cast<uint8_t*>(header.data()) + 4, 7);
  raw.Send({header, protocol::EncodeBegin({"test/v7", 1, 0})});
  const testing::RawReply reply = raw.Receive();
  EXPECT_EQ(reply.header.version, protocol::kProtocolVersion);
  EXPECT_EQ(reply.header.command, static_cast<uint16_t>(Command::kError));
  EXPECT_EQ(reply.header.request_id, 41u);
  protocol::ErrorReply error;
  ASSERT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
  EXPECT_EQ(error.message, "unsupported protocol version 7 (this node speaks 4; upgrade this node)");
  ExpectNothingKept("unsupported protocol version 7 (this node speaks 4; upgrade this node)");
}

TEST_F(BadUpload, AnUnknownCommandIsRefused) {
  RawSender raw(context_, cluster_.endpoint(0));
  std::string header = protocol::EncodeHeader(Command::kBegin, 5);
  PutU16(reinterpret_cast<uint8_t*>(header.data()) + 6, 0x0042);
  raw.Send({header, "x"});
  const protocol::ErrorReply error = raw.ReceiveError();
  EXPECT_EQ(protocol::CodeFromWire(error.code), Code::kNotSupported);
  EXPECT_EQ(error.message,
            "unknown command 0x0042 (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, SNAPSHOT, FETCH, PREPARE, LIST_MERGED, OFFER_BATCH and SNAPSHOT_SINCE)");
  ExpectNothingKept("unknown command 0x0042 (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, SNAPSHOT, FETCH, PREPARE, LIST_MERGED, OFFER_BATCH and SNAPSHOT_SINCE)");
}

}  // namespace
}  // namespace planb
