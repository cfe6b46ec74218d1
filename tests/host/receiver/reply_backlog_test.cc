// A reply's bytes count for its client from the moment the receiver hands them to ZeroMQ until ZeroMQ frees
// them, whichever thread that happens on; the bound admits one reply of any size to a client with none unread.
#include "host/receiver/reply_backlog.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <zmq.hpp>

namespace planb {
namespace {

TEST(ReplyBacklogLedger, BytesCountUntilZeroMqFreesThem) {
  zmq::context_t context;
  zmq::socket_t out(context, zmq::socket_type::pair);
  zmq::socket_t in(context, zmq::socket_type::pair);
  out.bind("inproc://reply-backlog-test");
  in.connect("inproc://reply-backlog-test");
  ReplyBacklog backlog(1000);
  ASSERT_TRUE(out.send(backlog.Message("alice", std::string(600, 'a')), zmq::send_flags::none));
  ASSERT_TRUE(out.send(backlog.Message("bob", std::string(10, 'b')), zmq::send_flags::none));
  // inproc hands the message itself over: it is freed when the receiving side lets go of it.
  EXPECT_EQ(backlog.Unread("alice"), 600u);
  EXPECT_EQ(backlog.Unread("bob"), 10u);
  uint64_t unread = 0;
  EXPECT_TRUE(backlog.Admits("alice", 400, &unread));
  EXPECT_FALSE(backlog.Admits("alice", 401, &unread));
  EXPECT_EQ(unread, 600u);
  EXPECT_TRUE(backlog.Admits("carol", 5000, &unread));  // nothing unread: one reply of any size goes
  // Received and dropped on another thread, as ZeroMQ's I/O threads free what they have written.
  std::thread reader([&in] {
    for (int i = 0; i < 2; ++i) {
      zmq::message_t message;
      (void)in.recv(message);
    }
  });
  reader.join();
  EXPECT_EQ(backlog.Unread("alice"), 0u);
  EXPECT_EQ(backlog.Unread("bob"), 0u);
}

TEST(ReplyBacklogLedger, AMessageZeroMqCouldNotSendIsFreedAtOnce) {
  zmq::context_t context;
  zmq::socket_t out(context, zmq::socket_type::dealer);  // no peer: a non-blocking send fails
  ReplyBacklog backlog(1000);
  EXPECT_FALSE(out.send(backlog.Message("alice", std::string(100, 'a')), zmq::send_flags::dontwait));
  EXPECT_EQ(backlog.Unread("alice"), 0u);
}

}  // namespace
}  // namespace planb
