// Replies a client does not read cannot pile up in a real storage node's memory (issue 38, defect 4): a client that
// asked for forty 10 MB query results and read none made ZeroMQ queue 420 MiB on the node, since a ROUTER's
// high-water mark counts messages, not bytes. Now the bytes a client leaves unread are bounded
// (max_unread_reply_bytes): past the bound its reads are refused, saying so, while another client is served,
// and the hold ends with its connection.
// The client that does not read speaks ZMTP over a plain TCP socket of its own (raw_zmtp_peer.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "host/transfer/protocol.h"
#include "support/cluster_fixture.h"
#include "tests/host/cli/cli_test_env.h"
#include "tests/support/raw_zmtp_peer.h"
#include "tests/support/read_requests.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";
constexpr int kRows = 20;  // of 1 MB each: one query's result is 20 MB, over the 8 MiB bound set below

// "" for a READ_RESULT of exit 0 holding every big row; else the ERROR's message (or what was wrong).
std::string Outcome(const std::vector<std::string>& frames) {
  protocol::Header header;
  if (frames.size() != 2 || !protocol::DecodeHeader(frames[0], &header).ok()) return "not a reply";
  if (header.command == static_cast<uint16_t>(protocol::Command::kReadResult)) {
    protocol::ReadResult result;
    if (!protocol::DecodeReadResult(frames[1], &result).ok()) return "a READ_RESULT that does not decode";
    if (result.exit_code != 0 || result.out.size() < size_t{kRows} << 20) {
      return "exit " + std::to_string(result.exit_code) + ", " + std::to_string(result.out.size()) + " bytes: " +
             result.err;
    }
    return "";
  }
  protocol::ErrorReply error;
  if (!protocol::DecodeError(frames[1], &error).ok()) return "an ERROR that does not decode";
  return error.message;
}

TEST(UnreadReplies, AClientThatDoesNotReadIsRefusedOthersAreServedAndTheHoldEndsWithItsConnection) {
  ClusterFixture cluster(1);
  cluster.top_level_extra = "max_unread_reply_bytes = 8MiB\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  std::string body;
  for (int i = 0; i < kRows; ++i) {
    body += testing::Ref(kMap, "big" + std::to_string(i), std::string(1 << 20, static_cast<char>('a' + i))) + "\n";
  }
  body += testing::Ref(kMap, "Albania", "Tirana");
  const std::string file = cluster.dir() + "/big.xml";
  testing::WriteFile(file, testing::ReferenceData(body));
  ASSERT_TRUE(cluster.LoadAndWaitMerged({file}));

  const std::string query =
      protocol::EncodeRead(testing::QueryRead(kMap, std::string("Key startsWith 'big'"), protocol::ReadFormat::kCsv));
  const auto logged = [&cluster](const std::string& text) {
    return testing::WaitUntil([&] { return cluster.process(0).log().find(text) != std::string::npos; },
                              {cluster.process(0).log_file()});
  };
  {
    // Four reads (the most one client may have pending), then nothing read. The first result fills the socket's
    // buffers and stays on the node; before the bound, the node queued the other three whole as well.
    testing::RawZmtpPeer lazy(cluster.endpoint(0));
    for (uint64_t id = 1; id <= 4; ++id) lazy.Request(protocol::Command::kRead, id, query);
    ASSERT_TRUE(logged("bytes of replies to this client are not yet read (max_unread_reply_bytes 8388608); read "
                       "them before asking for more"))
        << cluster.process(0).log();
    // More reads while nothing is read: each refused at once.
    for (uint64_t id = 5; id <= 8; ++id) lazy.Request(protocol::Command::kRead, id, query);
    // Another client is served meanwhile.
    cluster.WriteReaderConfig("reader");
    const ProcessResult r = cluster.RunOnReader("reader", {"lookup", "--remote", kMap, "Albania"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "Tirana\n");
    // What the lazy client finally reads, by request id: the first result whole, and refusals for every read
    // sent while it lay unread. (Of reads 2 to 4, those still running once the client starts reading may
    // finish whole: reading is what releases the hold. One of them was refused: the line above.)
    std::map<uint64_t, std::string> outcomes;
    for (int i = 0; i < 8; ++i) {
      const std::vector<std::string> frames = lazy.Receive();
      protocol::Header header;
      ASSERT_TRUE(!frames.empty() && protocol::DecodeHeader(frames[0], &header).ok());
      outcomes[header.request_id] = Outcome(frames);
    }
    ASSERT_EQ(outcomes.size(), 8u);
    EXPECT_EQ(outcomes[1], "");
    for (uint64_t id = 5; id <= 8; ++id) EXPECT_THAT(outcomes[id], HasSubstr("not yet read")) << id;
  }
  // A client that reads gets every result, one after another.
  testing::RawZmtpPeer reading(cluster.endpoint(0));
  for (uint64_t id = 1; id <= 3; ++id) {
    reading.Request(protocol::Command::kRead, id, query);
    EXPECT_EQ(Outcome(reading.Receive()), "") << id;
  }
}

}  // namespace
}  // namespace planb
