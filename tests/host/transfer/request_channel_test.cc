// RequestChannel against a raw ROUTER standing in for a node: framing, stale replies, timeouts and replies that
// do not decode; and against nobody (a refused connection).
#include "host/transfer/request_channel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>
#include <zmq_addon.hpp>

#include "planb/encoding.h"
#include "support/endpoints.h"

namespace planb {
namespace {

using protocol::Command;
using ::testing::HasSubstr;

class RequestChannelTest : public ::testing::Test {
 protected:
  RequestChannelTest() : node_(context_, zmq::socket_type::router) {
    node_.set(zmq::sockopt::linger, 0);
    node_.bind("tcp://127.0.0.1:*");
    channel_ = std::make_unique<RequestChannel>(
        context_, NodeAddress{"node", node_.get(zmq::sockopt::last_endpoint), std::nullopt}, 1000, &next_id_);
  }
  // The next request as the node sees it: routing id, header, payload(, chunk).
  std::vector<zmq::message_t> NodeReceive() {
    std::vector<zmq::message_t> frames;
    EXPECT_TRUE(zmq::recv_multipart(node_, std::back_inserter(frames)));
    return frames;
  }
  void NodeSend(const zmq::message_t& routing_id, const std::string& header, const std::string& payload) {
    node_.send(zmq::buffer(routing_id.data(), routing_id.size()), zmq::send_flags::sndmore);
    node_.send(zmq::buffer(header), zmq::send_flags::sndmore);
    node_.send(zmq::buffer(payload), zmq::send_flags::none);
  }
  RequestChannel::Clock::time_point Soon(int ms) {
    return RequestChannel::Clock::now() + std::chrono::milliseconds(ms);
  }

  zmq::context_t context_;
  zmq::socket_t node_;
  uint64_t next_id_ = 7;
  std::unique_ptr<RequestChannel> channel_;
};

TEST_F(RequestChannelTest, SendsFramesWithIncreasingRequestIds) {
  uint64_t first = 0, second = 0;
  ASSERT_TRUE(channel_->Send(Command::kCommit, protocol::EncodeCommit({Token{0, 5}}), nullptr, &first));
  zmq::message_t chunk(std::string("bytes"));
  ASSERT_TRUE(channel_->Send(Command::kChunk, protocol::EncodeChunk({Token{0, 5}, 0}), &chunk, &second));
  EXPECT_EQ(first, 7u);
  EXPECT_EQ(second, 8u);
  EXPECT_EQ(next_id_, 9u);
  std::vector<zmq::message_t> commit = NodeReceive();
  ASSERT_EQ(commit.size(), 3u);
  EXPECT_EQ(commit[1].to_string(), protocol::EncodeHeader(Command::kCommit, 7));
  EXPECT_EQ(commit[2].to_string(), protocol::EncodeCommit({Token{0, 5}}));
  std::vector<zmq::message_t> chunk_frames = NodeReceive();
  ASSERT_EQ(chunk_frames.size(), 4u);
  EXPECT_EQ(chunk_frames[3].to_string(), "bytes");
}

TEST_F(RequestChannelTest, StaleRepliesAreDropped) {
  uint64_t id = 0;
  ASSERT_TRUE(channel_->Send(Command::kStatus, protocol::EncodeStatus({Token{0, 1}, 0}), nullptr, &id));
  std::vector<zmq::message_t> request = NodeReceive();
  NodeSend(request[0], protocol::EncodeHeader(Command::kStatusReply, id - 1), "stale");
  NodeSend(request[0], protocol::EncodeHeader(Command::kStatusReply, id), "fresh");
  RequestChannel::Reply reply;
  bool timed_out = true;
  Status status = channel_->Await(
      Soon(5000), [id](uint64_t got) { return got == id; }, &reply, &timed_out);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(reply.command, static_cast<uint16_t>(Command::kStatusReply));
  EXPECT_EQ(reply.payload, "fresh");
}

TEST_F(RequestChannelTest, NoReplyTimesOut) {
  uint64_t id = 0;
  ASSERT_TRUE(channel_->Send(Command::kStatus, protocol::EncodeStatus({Token{0, 1}, 0}), nullptr, &id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  auto start = RequestChannel::Clock::now();
  ASSERT_TRUE(channel_
                  ->Await(
                      Soon(50), [](uint64_t) { return true; }, &reply, &timed_out)
                  .ok());
  EXPECT_TRUE(timed_out);
  EXPECT_GE(RequestChannel::Clock::now() - start, std::chrono::milliseconds(50));
}

TEST_F(RequestChannelTest, ReplyInAnotherVersionIsFinal) {
  uint64_t id = 0;
  ASSERT_TRUE(channel_->Send(Command::kBegin, protocol::EncodeBegin({"b", 1, 0}), nullptr, &id));
  std::vector<zmq::message_t> request = NodeReceive();
  std::string header = protocol::EncodeHeader(Command::kReady, id);
  PutU16(reinterpret_cast<uint8_t*>(header.data()) + 4, 1);  // a node from before 128-bit tokens
  NodeSend(request[0], header, "");
  RequestChannel::Reply reply;
  bool timed_out = false;
  Status status = channel_->Await(
      Soon(5000), [](uint64_t) { return true; }, &reply, &timed_out);
  EXPECT_EQ(status.code(), Code::kNotSupported);
  EXPECT_EQ(status.message(),
            "bad reply from the node: the node answered in protocol version 1 (this sender speaks 4; upgrade the node)");
}

TEST_F(RequestChannelTest, ReplyWithBadMagicIsFinal) {
  uint64_t id = 0;
  ASSERT_TRUE(channel_->Send(Command::kBegin, protocol::EncodeBegin({"b", 1, 0}), nullptr, &id));
  std::vector<zmq::message_t> request = NodeReceive();
  NodeSend(request[0], "HTTP/1.1 200 OK\r\n", "");
  RequestChannel::Reply reply;
  bool timed_out = false;
  Status status = channel_->Await(
      Soon(5000), [](uint64_t) { return true; }, &reply, &timed_out);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("bad reply from the node: message header starts with bytes 48 54 54 50"));
}

// Issue 11 #15: nobody listening is known at once (the connect fails), not after the deadline.
TEST_F(RequestChannelTest, NobodyListeningIsRefusedBeforeTheDeadline) {
  const std::string down = testing::UnusedEndpoint(context_);
  uint64_t id = 1;
  RequestChannel channel(context_, NodeAddress{"down", down, std::nullopt}, 1000, &id);
  uint64_t request_id = 0;
  ASSERT_TRUE(channel.Send(Command::kStatus, protocol::EncodeStatus({Token{0, 1}, 0}), nullptr, &request_id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  const Status status = channel.Await(
      Soon(60 * 1000), [](uint64_t) { return true; }, &reply, &timed_out);
  EXPECT_EQ(status.code(), Code::kIOError);
  EXPECT_EQ(status.message(), "connection refused by " + down);
  EXPECT_TRUE(channel.refused());
  EXPECT_FALSE(timed_out);
}

TEST_F(RequestChannelTest, ANodeThatAcceptsButNeverAnswersTimesOutNotRefused) {
  testing::SilentNode silent(context_);
  uint64_t id = 1;
  RequestChannel channel(context_, NodeAddress{"silent", silent.endpoint(), std::nullopt}, 1000, &id);
  uint64_t request_id = 0;
  ASSERT_TRUE(channel.Send(Command::kStatus, protocol::EncodeStatus({Token{0, 1}, 0}), nullptr, &request_id));
  RequestChannel::Reply reply;
  bool timed_out = false;
  ASSERT_TRUE(channel.Await(
                  Soon(300), [](uint64_t) { return true; }, &reply, &timed_out)
                  .ok());
  EXPECT_TRUE(timed_out);
  EXPECT_FALSE(channel.refused());
}

}  // namespace
}  // namespace planb
