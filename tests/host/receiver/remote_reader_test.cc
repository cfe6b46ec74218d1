// RemoteReader (host/transfer/remote_read.h): READs over connections kept open across calls, against a real
// UploadReceiver on loopback; the fixture's sink answers each lookup with "lookup|MAP|KEYS".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/transfer/remote_read.h"
#include "tests/host/transfer/upload_fixture.h"
#include "tests/support/read_requests.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;

class RemoteReaderTest : public UploadFixture {
 protected:
  void SetUp() override {
    StartReceiver();
    cluster_.node_list = {"node1"};
    cluster_.nodes["node1"] = {"node1", endpoint()};
  }

  // One READ of `key` in map m: its stdout, or the error's message.
  std::string Read(RemoteReader& reader, const std::string& key) {
    int exit_code = -1;
    std::string out, err, node;
    const Status s = reader.Read(LookupRead("m", {key}), &exit_code, &out, &err, &node);
    if (!s.ok()) return "error: " + s.message();
    EXPECT_EQ(node, "node1");
    return out;
  }

  ClusterConfig cluster_;
};

TEST_F(RemoteReaderTest, ReadsShareOneConnection) {
  RemoteReader reader(context_, cluster_);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Read(reader, "k" + std::to_string(i)), "lookup|m|k" + std::to_string(i));
  EXPECT_EQ(reader.connections_made(), 1u);
}

// A read that timed out leaves its reply on its way: the connection is dropped, so that reply can never be taken
// for the next request's, and the next read makes a new one.
TEST_F(RemoteReaderTest, AConnectionWhoseReadTimedOutIsReplacedAndNeverAnswersTheNextRead) {
  cluster_.request_timeout_ms = 300;
  RemoteReader reader(context_, cluster_);
  EXPECT_EQ(Read(reader, "first"), "lookup|m|first");
  sink_.HoldReads();
  EXPECT_THAT(Read(reader, "held"), HasSubstr("no storage node answered: node1 (timed out after 300 ms)"));
  ASSERT_TRUE(sink_.WaitForReadsStarted(2));
  sink_.ReleaseReads();
  EXPECT_EQ(Read(reader, "after"), "lookup|m|after");
  EXPECT_EQ(reader.connections_made(), 2u);
}

// A node that is gone fails the read naming it; once a node listens at the endpoint again, the same reader's
// next read is answered over a new connection.
TEST_F(RemoteReaderTest, ANodeThatWentAwayIsAskedAfreshWhenItIsBack) {
  cluster_.request_timeout_ms = 2000;
  RemoteReader reader(context_, cluster_);
  EXPECT_EQ(Read(reader, "before"), "lookup|m|before");
  const std::string address = endpoint();
  receiver_.reset();
  EXPECT_THAT(Read(reader, "while down"), HasSubstr("no storage node answered: node1 ("));
  NewReceiver(Settings()).Start(address);
  EXPECT_EQ(Read(reader, "back"), "lookup|m|back");
  EXPECT_GE(reader.connections_made(), 2u);
}

}  // namespace
}  // namespace planb::testing
