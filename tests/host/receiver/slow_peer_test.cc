// Peers that connect and then stall (issue 16, "Faults"): raw TCP connections to a real receiver that send
// nothing, or half a ZMTP greeting, are closed by the node once its handshake timeout passes, while a real
// client's upload goes through meanwhile.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/host/transfer/upload_fixture.h"

namespace planb::testing {
namespace {

// A TCP connection to 127.0.0.1:`port` that only sends `bytes` and never answers.
class StalledPeer {
 public:
  StalledPeer(int port, const std::string& bytes) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (connected_ && !bytes.empty()) connected_ = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) > 0;
  }
  ~StalledPeer() { ::close(fd_); }
  bool connected() const { return connected_; }

  // Reads what the node sends (its greeting) until the node closes the connection; false if it is still open
  // at the test deadline.
  bool WaitClosedByNode() {
    const auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
    char buffer[256];
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd item{fd_, POLLIN, 0};
      if (::poll(&item, 1, static_cast<int>(left.count())) <= 0) continue;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

int PortOf(const std::string& endpoint) { return std::stoi(endpoint.substr(endpoint.rfind(':') + 1)); }

TEST_F(UploadFixture, StalledConnectionsAreClosedAndOthersServed) {
  ReceiverSettings settings = Settings();
  settings.handshake_timeout_ms = 300;
  StartReceiver(settings);
  std::vector<std::unique_ptr<StalledPeer>> peers;
  for (int i = 0; i < 20; ++i) {
    // Nothing at all, or the first 3 bytes of a ZMTP 3 greeting (signature 0xFF, 8 padding bytes, 0x7F, ...).
    peers.push_back(std::make_unique<StalledPeer>(PortOf(endpoint()), i % 2 == 0 ? "" : std::string("\xff\0\0", 3)));
    ASSERT_TRUE(peers.back()->connected());
  }
  ExpectStillServes();
  for (auto& peer : peers) EXPECT_TRUE(peer->WaitClosedByNode());
  ExpectStillServes();
}

}  // namespace
}  // namespace planb::testing
