// A ZMTP 3.0 DEALER with the NULL mechanism (a plaintext node's peer) over a TCP socket of its own, for tests of
// what a node does with peers that misbehave at the connection level: it reads replies only when told to (a
// ZeroMQ socket takes them in on its I/O thread whether the program reads them or not), it can connect from any
// loopback address (each 127.x.y.z is a peer of its own), and it can tell when the node closed its connection.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "host/transfer/protocol.h"
#include "planb/encoding.h"

namespace planb::testing {

class RawZmtpPeer {
 public:
  // Connects to `endpoint` (tcp://127.0.0.1:PORT) from `source` and completes the handshake. The receive buffer
  // is small, so that what this peer does not read stays on the node.
  explicit RawZmtpPeer(const std::string& endpoint, const std::string& source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 16 << 10;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from), 0) << source;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to), 0) << endpoint;
    std::string greeting(64, '\0');
    greeting[0] = '\xff';
    greeting[9] = '\x7f';
    greeting[10] = 3;  // version 3.0
    std::memcpy(&greeting[12], "NULL", 4);
    Write(greeting);
    handshaken_ = ReadExactly(64).size() == 64;  // the node's greeting
    const std::string ready = std::string("\x05READY", 6) + "\x0bSocket-Type" + std::string("\0\0\0\x06", 4) + "DEALER";
    Write(std::string{'\x04', static_cast<char>(ready.size())} + ready);
    bool more = false;
    handshaken_ = handshaken_ && ReadFrame(&more).find("READY") != std::string::npos;  // the node's READY
  }
  ~RawZmtpPeer() { ::close(fd_); }
  RawZmtpPeer(const RawZmtpPeer&) = delete;
  RawZmtpPeer& operator=(const RawZmtpPeer&) = delete;

  // Whether the node answered the handshake (a node that closed the connection at once did not).
  bool handshaken() const { return handshaken_; }

  void Request(protocol::Command command, uint64_t request_id, const std::string& payload) {
    WriteFrame(protocol::EncodeHeader(command, request_id), true);
    WriteFrame(payload, false);
  }
  // The next reply's frames (header, payload).
  std::vector<std::string> Receive() {
    std::vector<std::string> frames;
    bool more = true;
    while (more && frames.size() < 4) frames.push_back(ReadFrame(&more));
    return frames;
  }
  // Whether the node closes this connection within `deadline` (anything it sends before is skipped).
  bool ClosedByNode(std::chrono::milliseconds deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd item{fd_, POLLIN, 0};
      if (::poll(&item, 1, static_cast<int>(left.count())) <= 0) continue;
      char skipped[4096];
      const ssize_t r = ::recv(fd_, skipped, sizeof skipped, 0);
      if (r <= 0) return true;
    }
  }

 private:
  void Write(const std::string& bytes) {
    (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  void WriteFrame(const std::string& body, bool more) {
    std::string head(9, '\0');
    head[0] = static_cast<char>(0x02 | (more ? 0x01 : 0));  // long frames always: an 8-byte size
    PutU64(reinterpret_cast<uint8_t*>(&head[1]), body.size());
    Write(head + body);
  }
  std::string ReadExactly(size_t n) {
    std::string bytes(n, '\0');
    for (size_t got = 0; got < n;) {
      const ssize_t r = ::recv(fd_, &bytes[got], n - got, 0);
      if (r <= 0) return bytes.substr(0, got);
      got += static_cast<size_t>(r);
    }
    return bytes;
  }
  std::string ReadFrame(bool* more) {
    *more = false;
    const std::string flags = ReadExactly(1);
    if (flags.empty()) return "";
    *more = (flags[0] & 0x01) != 0;
    uint64_t size = 0;
    if ((flags[0] & 0x02) != 0) {
      const std::string length = ReadExactly(8);
      size = length.size() == 8 ? GetU64(reinterpret_cast<const uint8_t*>(length.data())) : 0;
    } else {
      const std::string length = ReadExactly(1);
      size = length.empty() ? 0 : static_cast<uint8_t>(length[0]);
    }
    return ReadExactly(size);
  }

  int fd_ = -1;
  bool handshaken_ = false;
};

}  // namespace planb::testing
