// RequestChannel replies with and without frame C (FETCH_DATA carries its bytes there), against a raw ROUTER on
// tcp://127.0.0.1:* that answers frame by frame.
#include "host/transfer/request_channel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>
#include <zmq_addon.hpp>

namespace planb {
namespace {

using ::testing::HasSubstr;
using Clock = RequestChannel::Clock;

class RequestChannelFramesTest : public ::testing::Test {
 protected:
  RequestChannelFramesTest() : router_(context_, zmq::socket_type::router) {
    router_.set(zmq::sockopt::linger, 0);
    router_.bind("tcp://127.0.0.1:*");
    channel_ = std::make_unique<RequestChannel>(
        context_, NodeAddress{"node", router_.get(zmq::sockopt::last_endpoint), std::nullopt}, 1000, &next_id_);
  }
  // Sends `command` and returns the routing id the router saw it from (and its request id).
  std::string SendAndReceive(protocol::Command command, uint64_t* request_id) {
    EXPECT_TRUE(channel_->Send(command, "payload", nullptr, request_id));
    std::vector<zmq::message_t> frames;
    EXPECT_TRUE(zmq::recv_multipart(router_, std::back_inserter(frames)));
    EXPECT_EQ(frames.size(), 3u);
    protocol::Header header;
    EXPECT_TRUE(protocol::DecodeHeader(frames[1].to_string_view(), &header).ok());
    EXPECT_EQ(header.command, static_cast<uint16_t>(command));
    EXPECT_EQ(header.request_id, *request_id);
    EXPECT_EQ(frames[2].to_string(), "payload");
    return frames[0].to_string();
  }
  void Reply(const std::string& routing_id, const std::vector<std::string>& frames) {
    router_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore);
    for (size_t i = 0; i < frames.size(); ++i) {
      router_.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  }
  Status Await(uint64_t request_id, RequestChannel::Reply* reply, bool* timed_out, int ms = 5000) {
    return channel_->Await(Clock::now() + std::chrono::milliseconds(ms),
                           [request_id](uint64_t id) { return id == request_id; }, reply, timed_out);
  }

  uint64_t next_id_ = 1;
  zmq::context_t context_;
  zmq::socket_t router_;
  std::unique_ptr<RequestChannel> channel_;
};

TEST_F(RequestChannelFramesTest, ReturnsTheDataFrameAndSkipsStaleReplies) {
  uint64_t first = 0;
  const std::string routing_id = SendAndReceive(protocol::Command::kFetch, &first);
  uint64_t second = 0;
  SendAndReceive(protocol::Command::kFetch, &second);
  EXPECT_EQ(second, first + 1);
  // A reply to the first request is stale for a caller awaiting the second.
  Reply(routing_id, {protocol::EncodeHeader(protocol::Command::kFetchData, first), "old", "stale bytes"});
  Reply(routing_id, {protocol::EncodeHeader(protocol::Command::kFetchData, second), "new", "the bytes"});
  RequestChannel::Reply reply;
  bool timed_out = true;
  const Status s = Await(second, &reply, &timed_out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(reply.request_id, second);
  EXPECT_EQ(reply.command, static_cast<uint16_t>(protocol::Command::kFetchData));
  EXPECT_EQ(reply.payload, "new");
  ASSERT_TRUE(reply.has_data);
  EXPECT_EQ(reply.data.to_string(), "the bytes");
}

TEST_F(RequestChannelFramesTest, AReplyWithoutDataHasNone) {
  uint64_t id = 0;
  const std::string routing_id = SendAndReceive(protocol::Command::kSnapshot, &id);
  Reply(routing_id, {protocol::EncodeHeader(protocol::Command::kSnapshotOffer, id), "offer"});
  RequestChannel::Reply reply;
  bool timed_out = true;
  ASSERT_TRUE(Await(id, &reply, &timed_out).ok());
  EXPECT_FALSE(reply.has_data);
  EXPECT_EQ(reply.data.size(), 0u);
  EXPECT_EQ(reply.payload, "offer");
}

TEST_F(RequestChannelFramesTest, TimesOutWhenNothingComes) {
  uint64_t id = 0;
  SendAndReceive(protocol::Command::kSnapshot, &id);
  RequestChannel::Reply reply;
  bool timed_out = false;
  ASSERT_TRUE(Await(id, &reply, &timed_out, 20).ok());
  EXPECT_TRUE(timed_out);
}

TEST_F(RequestChannelFramesTest, RefusesRepliesThatDoNotDecode) {
  uint64_t id = 0;
  const std::string routing_id = SendAndReceive(protocol::Command::kFetch, &id);
  RequestChannel::Reply reply;
  bool timed_out = false;

  Reply(routing_id, {protocol::EncodeHeader(protocol::Command::kFetchData, id), "a", "b", "c"});
  Status s = Await(id, &reply, &timed_out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad reply from the node: reply of 4 frames, expected 2 or 3");

  std::string other_version = protocol::EncodeHeader(protocol::Command::kFetchData, id);
  other_version[5] = 9;  // the version's low byte (big-endian u16 after the magic)
  Reply(routing_id, {other_version, "a"});
  s = Await(id, &reply, &timed_out);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_THAT(s.message(), HasSubstr("the node answered in protocol version 9 (this sender speaks 4; upgrade this client)"));

  Reply(routing_id, {"XXXX", "a"});
  s = Await(id, &reply, &timed_out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("bad reply from the node: "));
}

}  // namespace
}  // namespace planb
