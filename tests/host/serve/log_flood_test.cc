// A real storage node's log against hostile names (issue 11, defect 4): 60 KB map names and names with a newline
// in 1000 SNAPSHOT requests each, and batch ids with a newline in BEGIN, grow the log by a bounded amount and
// write no line the node did not mean to write.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using protocol::Command;

TEST(LogFlood, HostileNamesNeitherFloodNorForgeTheLog) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string log_file = cluster.process(0).log_file();
  const uintmax_t before = std::filesystem::file_size(log_file);
  zmq::context_t context;
  testing::RawSender raw(context, cluster.endpoint(0));
  const std::string huge(60 * 1024, 'a');
  const std::string forged = "x\n2030-01-01T00:00:00Z node1: FORGED merged 1 batch(es)";
  for (int i = 0; i < 1000; ++i) {
    raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({huge, 0, 0}));
    const protocol::ErrorReply error = raw.ReceiveError();
    ASSERT_LT(error.message.size(), 200u);  // the reply does not echo the name either
    raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({forged, 0, 0}));
    ASSERT_EQ(raw.ReceiveError().message.find("FORGED"), std::string::npos);
  }
  raw.Request(Command::kBegin, protocol::EncodeBegin({forged, 10, 0}));
  EXPECT_EQ(raw.ReceiveError().message.find("FORGED"), std::string::npos);
  // Still serving: a good request is answered.
  raw.Request(Command::kSnapshot, protocol::EncodeSnapshot({"country_to_capital", 0, 0}));
  EXPECT_EQ(raw.Receive().header.command & 0x8000, 0x8000);

  const std::string log = cluster.process(0).log();
  EXPECT_LT(std::filesystem::file_size(log_file) - before, 16u * 1024) << log;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("FORGED"), std::string::npos) << line;
    EXPECT_LT(line.size(), 1024u);
  }
  EXPECT_NE(log.find("snapshot error from sender"), std::string::npos) << log;
}

}  // namespace
}  // namespace planb
