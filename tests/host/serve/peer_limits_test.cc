// What one peer may hold on a real storage node process (issue 11, defect 3): idle BEGINs lose their upload slots
// after upload_idle_timeout, and a remote query is stopped by the node's caps (terms in --where, rows examined)
// with exit 2 and a message naming the cap, while the node keeps serving.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "support/cluster_fixture.h"
#include "tests/host/transfer/upload_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

ProcessResult Remote(const ClusterFixture& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/empty-home"});
  return RunPlanb(args);
}

TEST(PeerLimits, IdleBeginsLoseTheirSlotsAfterUploadIdleTimeout) {
  ClusterFixture cluster(1);
  cluster.top_level_extra = "upload_idle_timeout = 300ms\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  zmq::context_t context;
  // Every upload slot (max_open_uploads, 64) taken by BEGINs that never send a byte: four plaintext connections
  // (each a client of its own), each holding its share of 16.
  std::vector<std::unique_ptr<testing::RawSender>> senders;
  for (int c = 0; c < 4; ++c) {
    senders.push_back(std::make_unique<testing::RawSender>(context, cluster.endpoint(0)));
    for (int i = 0; i < 16; ++i) {
      senders.back()->Begin("attacker/b" + std::to_string(c * 16 + i), std::string(1000, 'x'), 1);
    }
  }
  testing::RawSender raw(context, cluster.endpoint(0));
  raw.Request(protocol::Command::kBegin, protocol::EncodeBegin({"attacker/extra", 1000, 0}));
  EXPECT_TRUE(Contains(raw.ReceiveError().message, "busy: 64 uploads in progress"));
  // Each is dropped once idle for upload_idle_timeout, with its part file and reservation.
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return Count(cluster.process(0).log(), "dropping idle partial upload of batch attacker/") == 64; },
      {cluster.process(0).log_file()}))
      << cluster.process(0).log();
  EXPECT_TRUE(Contains(cluster.process(0).log(), "nothing for 300 ms: upload_idle_timeout"));
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  EXPECT_EQ(load.exit_code, 0) << load.err;
}

TEST(PeerLimits, RemoteQueriesAreStoppedByTheNodesCaps) {
  ClusterFixture cluster(1);
  cluster.top_level_extra = "max_remote_where_terms = 100\nmax_remote_rows_examined = 5\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const ProcessResult load = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();

  std::string where = "Key in ('Albania'";
  for (int i = 0; i < 150; ++i) where += ", 'k" + std::to_string(i) + "'";
  where += ")";
  const ProcessResult terms = Remote(cluster, {"query", "--remote", "country_to_capital", "--where", where});
  EXPECT_EQ(terms.exit_code, 2);
  EXPECT_EQ(terms.out, "");
  EXPECT_EQ(terms.err,
            "planb: remote read cap: --where has 151 terms, more than this node's max_remote_where_terms of 100\n");

  const ProcessResult rows = Remote(cluster, {"query", "--remote", "country_to_capital"});
  EXPECT_EQ(rows.exit_code, 2);
  EXPECT_EQ(rows.out, "");  // no partial result
  EXPECT_TRUE(Contains(rows.err, "remote read cap: more than 5 rows examined (the node's max_remote_rows_examined)"))
      << rows.err;

  // Within the caps the node still answers.
  const ProcessResult found = Remote(cluster, {"lookup", "--remote", "country_to_capital", "Albania"});
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(found.out, "Tirana\n");
}

}  // namespace
}  // namespace planb
