// What one client with valid keys may hold of a real CURVE storage node's uploads and snapshot offers (issue 38,
// defects 3, 6 and 8): its share of the upload slots, of the room for uploads and of the served snapshots, a
// minimum transfer rate instead of an idle timeout alone, and batch ids that are the client's own. Meanwhile
// another client's load still goes through.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "host/security/batch_namespace.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";

// CURVE on; the loader "proc" may upload every map, "greedy" only kMap; `extra` top-level lines.
void StartSecureNode(ClusterFixture& cluster, const std::string& extra) {
  cluster.EnableCurve();
  cluster.client_sections = "[client.proc]\npublic_key = " + cluster.key("proc").public_key + "\nallow = upload\n" +
                            "[client.greedy]\npublic_key = " + cluster.NewKey("greedy").public_key +
                            "\nallow = upload, snapshot\nmaps = " + kMap + "\n";
  cluster.top_level_extra = extra;
  ASSERT_TRUE(cluster.StartNode(0)) << cluster.process(0).log();
}

CurveClientKeys Keys(const ClusterFixture& cluster, const std::string& client) {
  return CurveClientKeys{cluster.key("node1").public_key, cluster.key(client)};
}

// A batch id in `client`'s namespace (its key's: the node refuses others).
std::string IdOf(const ClusterFixture& cluster, const std::string& client, const std::string& name) {
  return BatchNamespace(cluster.key(client).public_key) + name;
}

// Sends a BEGIN and returns "" for READY, else the ERROR's message.
std::string TryBegin(testing::RawSender& sender, const std::string& batch_id, uint64_t size) {
  sender.Request(protocol::Command::kBegin, protocol::EncodeBegin({batch_id, size, 0}));
  const testing::RawReply reply = sender.Receive();
  if (reply.header.command == static_cast<uint16_t>(protocol::Command::kReady)) return "";
  protocol::ErrorReply error;
  EXPECT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
  return error.message;
}

void ExpectLoadWorks(ClusterFixture& cluster) {
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  EXPECT_EQ(load.exit_code, 0) << load.err;
  EXPECT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
}

// Before the share, 64 BEGINs took every slot and the loader was told "busy: 64 uploads" until they idled out.
TEST(UploadShare, OneClientHoldsAQuarterOfTheSlotsAndAnotherStillLoads) {
  ClusterFixture cluster(1);
  ASSERT_NO_FATAL_FAILURE(StartSecureNode(cluster, "upload_idle_timeout = 10m\n"));
  zmq::context_t context;
  testing::RawSender greedy(context, cluster.endpoint(0), Keys(cluster, "greedy"));
  int ready = 0;
  std::string refusal;
  for (int i = 0; i < 64; ++i) {
    const std::string answer = TryBegin(greedy, IdOf(cluster, "greedy", "b" + std::to_string(i)), 1000);
    if (answer.empty()) ++ready;
    if (!answer.empty()) refusal = answer;
  }
  EXPECT_EQ(ready, 16);
  EXPECT_EQ(refusal, "busy: this client has 16 uploads in progress, the most one client may have (16); retry later");
  ExpectLoadWorks(cluster);
}

// Before the share, BEGINs declaring a tenth of the free space each reserved it all, and every other client's
// load failed "disk full ... bytes still to arrive".
TEST(UploadShare, OneClientReservesAQuarterOfTheRoomAndAnotherStillLoads) {
  ClusterFixture cluster(1);
  ASSERT_NO_FATAL_FAILURE(StartSecureNode(cluster, "upload_idle_timeout = 10m\nmax_batch_size = 1024TiB\n"));
  struct statvfs fs;
  ASSERT_EQ(::statvfs(cluster.home(0).c_str(), &fs), 0);
  const uint64_t tenth = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize / 10;
  zmq::context_t context;
  testing::RawSender greedy(context, cluster.endpoint(0), Keys(cluster, "greedy"));
  EXPECT_EQ(TryBegin(greedy, IdOf(cluster, "greedy", "first"), tenth), "");  // twice a tenth (part file and verification): a fifth
  for (int i = 0; i < 10; ++i) {
    EXPECT_THAT(TryBegin(greedy, IdOf(cluster, "greedy", "more" + std::to_string(i)), tenth),
                HasSubstr("bytes of room one client may hold (max_client_share); retry later"));
  }
  ExpectLoadWorks(cluster);
}

// A trickle keeps an upload from going idle but not above min_transfer_rate: it is dropped as slow.
TEST(UploadShare, ATrickleBelowTheMinimumRateIsDropped) {
  ClusterFixture cluster(1);
  ASSERT_NO_FATAL_FAILURE(StartSecureNode(cluster, "upload_idle_timeout = 400ms\nmin_transfer_rate = 1MiB\n"));
  zmq::context_t context;
  testing::RawSender greedy(context, cluster.endpoint(0), Keys(cluster, "greedy"));
  const std::string zip(10 << 20, 'z');
  const protocol::ReadyReply ready = greedy.Begin(IdOf(cluster, "greedy", "slow"), zip, 1);
  const auto deadline = std::chrono::steady_clock::now() + testing::kTestDeadline;
  bool dropped = false;
  // One byte per round trip, each acknowledged before the next: far below 1 MiB/s, yet never idle. Ends when the
  // node answers a chunk with an error (it dropped the upload) or at the test deadline.
  for (size_t offset = 0; !dropped && std::chrono::steady_clock::now() < deadline; ++offset) {
    const std::string byte = zip.substr(offset, 1);
    greedy.Request(protocol::Command::kChunk, protocol::EncodeChunk({ready.token, offset}), &byte);
    const testing::RawReply reply = greedy.Receive();
    dropped = reply.header.command == static_cast<uint16_t>(protocol::Command::kError);
  }
  ASSERT_TRUE(dropped);
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("dropping slow partial upload of batch " + IdOf(cluster, "greedy", "slow") + " from client greedy"));
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("less than min_transfer_rate of 1048576 bytes/s"));
}

// A batch id is its client's: another client's BEGIN with the same id is refused (the id is outside its
// namespace), so it cannot drop the first client's upload in progress, which resumes where it was.
TEST(UploadShare, AnotherClientsBeginWithTheSameBatchIdLeavesTheUploadAlone) {
  ClusterFixture cluster(1);
  ASSERT_NO_FATAL_FAILURE(StartSecureNode(cluster, "upload_idle_timeout = 10m\n"));
  zmq::context_t context;
  testing::RawSender proc(context, cluster.endpoint(0), Keys(cluster, "proc"));
  testing::RawSender greedy(context, cluster.endpoint(0), Keys(cluster, "greedy"));
  const std::string zip(4096, 'p');
  const std::string shared = IdOf(cluster, "proc", "shared-id");
  const protocol::ReadyReply first = proc.Begin(shared, zip, 7);
  EXPECT_EQ(proc.SendChunks(first.token, zip, 0, 1024, 1024), 1024u);
  EXPECT_THAT(TryBegin(greedy, shared, 100),
              HasSubstr("batch ids of client greedy start with " + BatchNamespace(cluster.key("greedy").public_key)));
  EXPECT_THAT(cluster.process(0).log(), ::testing::Not(HasSubstr("its sender began a different zip")));
  const protocol::ReadyReply again = proc.Begin(shared, zip, 7);  // a resume after a lost connection
  EXPECT_EQ(again.token, first.token);
  EXPECT_EQ(again.resume_offset, 1024u);
  // The other client cannot address the first one's upload by its token either.
  const std::string chunk = zip.substr(1024, 1);
  greedy.Request(protocol::Command::kChunk, protocol::EncodeChunk({first.token, 1024}), &chunk);
  EXPECT_THAT(greedy.ReceiveError().message, HasSubstr("CHUNK for unknown upload token"));
}

// Each client has its share of the served snapshot slots (a quarter of 64).
TEST(UploadShare, OneClientHoldsAQuarterOfTheSnapshotOffers) {
  ClusterFixture cluster(1);
  ASSERT_NO_FATAL_FAILURE(StartSecureNode(cluster, "upload_idle_timeout = 10m\n"));
  ExpectLoadWorks(cluster);
  zmq::context_t context;
  testing::RawSender greedy(context, cluster.endpoint(0), Keys(cluster, "greedy"));
  int offered = 0;
  std::string refusal;
  for (int i = 0; i < 20; ++i) {
    greedy.Request(protocol::Command::kSnapshot, protocol::EncodeSnapshot({kMap, 0, 0}));
    const testing::RawReply reply = greedy.Receive();
    if (reply.header.command == static_cast<uint16_t>(protocol::Command::kSnapshotOffer)) {
      ++offered;
      continue;
    }
    protocol::ErrorReply error;
    ASSERT_TRUE(protocol::DecodeError(reply.payload, &error).ok());
    refusal = error.message;
  }
  EXPECT_EQ(offered, 16);
  EXPECT_EQ(refusal,
            "busy: this client has 16 snapshots being fetched, the most one client may have (16); retry later");
}

}  // namespace
}  // namespace planb
