// Endpoints for the two ways a node fails to answer: nobody listens (the connection is refused at once) and a
// node that accepts the connection and never replies (the request times out).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <zmq.hpp>

namespace planb::testing {

// A loopback endpoint nobody listens on (a port just bound and released): connections to it are refused.
inline std::string UnusedEndpoint(zmq::context_t& context) {
  zmq::socket_t probe(context, zmq::socket_type::router);
  probe.set(zmq::sockopt::linger, 0);
  probe.bind("tcp://127.0.0.1:*");
  std::string endpoint = probe.get(zmq::sockopt::last_endpoint);
  probe.unbind(endpoint);
  return endpoint;
}

// A loopback endpoint for a node that starts later (a cluster's ports are written into every config first): a free
// port below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), so that no `tcp://...:*` bind
// and no outgoing connection of a test running meanwhile can be given it before the node binds it (a port taken
// from that range once was: "Address already in use" under ctest -j2). Falls back to UnusedEndpoint when the
// range leaves no room below it.
inline std::string ReservedEndpoint(zmq::context_t& context) {
  int ephemeral_low = 32768;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range >> ephemeral_low;
  constexpr int kLowest = 10000;
  if (ephemeral_low - 1 <= kLowest) return UnusedEndpoint(context);
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> pick(kLowest, ephemeral_low - 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = pick(random);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ::close(fd);
    if (free) return "tcp://127.0.0.1:" + std::to_string(port);
  }
  return UnusedEndpoint(context);
}

// A node that takes connections and requests and never answers, for as long as it lives.
class SilentNode {
 public:
  explicit SilentNode(zmq::context_t& context) : socket_(context, zmq::socket_type::router) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::socket_t socket_;
  std::string endpoint_;
};

}  // namespace planb::testing
