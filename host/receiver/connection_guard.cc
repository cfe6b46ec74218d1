#include "host/receiver/connection_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>

#include "host/common/log_text.h"

namespace planb {

namespace {

// "ADDRESS:PORT" of the peer of socket `fd` ("[ADDRESS]:PORT" for IPv6); "" when it is not a TCP peer.
std::string PeerOf(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "";
}

// The address part of a peer ("10.0.0.7" of "10.0.0.7:51234").
std::string AddressOf(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

// Why a handshake failed, from its monitor event. The side that reads the other's greeting first sees a
// mechanism mismatch; when that is the client, the node sees only the connection end (EPIPE, ECONNRESET).
std::string HandshakeFailure(uint16_t event, int32_t value, bool curve) {
  const std::string hint = curve ? "; this node requires CURVE, so a plaintext client, or one that has another key for "
                                   "this node, fails so"
                                 : "; this node speaks plaintext, so a client configured with keys fails so";
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
    return "its security mechanism is not this node's" + hint;
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    return "protocol error " + std::to_string(value) + " in its handshake" + hint;
  }
  return "its handshake failed (" + std::string(std::strerror(value)) + ")" + hint;
}

std::atomic<uint64_t> next_monitor{1};

}  // namespace

ConnectionGuard::ConnectionGuard(zmq::context_t& context, zmq::socket_t& router, bool curve, ConnectionLimits limits,
                                 LogFunction log)
    : limits_(limits),
      curve_(curve),
      log_(std::move(log)),
      router_(router),
      // Unique in the process: a stopped monitor's inproc endpoint may linger a moment after it stops.
      endpoint_("inproc://planb-connections-" + std::to_string(next_monitor.fetch_add(1))),
      monitor_(context, zmq::socket_type::pair) {
  // Not ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: the node's ZAP handler logs the keys it refuses, naming them.
  const int events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
  if (zmq_socket_monitor(router_.handle(), endpoint_.c_str(), events) != 0) throw zmq::error_t();
  monitor_.set(zmq::sockopt::linger, 0);
  // No high-water mark on the events' pipe: a burst of connections must not drop the DISCONNECTED events that
  // keep the counts right (ZeroMQ drops a monitor's events when its pipe is full).
  monitor_.set(zmq::sockopt::rcvhwm, 0);
  monitor_.connect(endpoint_);
}

ConnectionGuard::~ConnectionGuard() { (void)zmq_socket_monitor(router_.handle(), nullptr, 0); }

void ConnectionGuard::TakeEvents(Clock::time_point now) {
  for (;;) {
    zmq::message_t event;
    zmq::message_t address;
    if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    if (event.size() < 6) continue;
    uint16_t id = 0;
    int32_t value = 0;
    std::memcpy(&id, event.data(), sizeof id);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, sizeof value);
    switch (id) {
      case ZMQ_EVENT_ACCEPTED:
        Accepted(value, now);
        break;
      case ZMQ_EVENT_DISCONNECTED: {
        const auto it = connections_.find(value);
        if (!failed_handshake_.empty()) {
          const std::string peer = it == connections_.end() ? std::string("an unknown peer") : it->second.peer;
          // Once a minute per address and cause: a TCP health check that connects and hangs up looks the same.
          uint64_t suppressed = 0;
          if (handshake_limiter_.Admit(AddressOf(peer) + " " + failed_handshake_, Clock::now(), &suppressed)) {
            log_(LogValue("refused a connection from " + peer + ": " + failed_handshake_, 2 * kLogValueCap) +
                 (suppressed > 0 ? " (" + std::to_string(suppressed) + " similar suppressed)" : ""));
          }
          failed_handshake_.clear();
        }
        if (it != connections_.end()) connections_.erase(it);
        break;
      }
      default:
        failed_handshake_ = HandshakeFailure(id, value, curve_);
        break;
    }
  }
}

void ConnectionGuard::Accepted(int fd, Clock::time_point now) {
  Connection& connection = connections_[fd];
  // A connection that ended before this event was taken (a failed handshake is quick) has no peer left to ask.
  std::string peer = PeerOf(fd);
  if (peer.empty()) peer = "a peer gone before the node looked";
  connection = Connection{std::move(peer), "", "", now, false};
  connection.owner = "address " + AddressOf(connection.peer);
  const size_t open = Open();
  if (open > limits_.max_connections) {
    return Refuse(fd, connection,
                  std::to_string(open - 1) + " connections are open, the most this node takes (max_connections " +
                      std::to_string(limits_.max_connections) + ")");
  }
  const size_t owned = OwnedBy(connection.owner);
  if (owned > limits_.max_per_owner) {
    Refuse(fd, connection,
           "its " + connection.owner + " has " + std::to_string(owned - 1) + " connections open, the most one " +
               "client may hold (max_client_share of max_connections: " + std::to_string(limits_.max_per_owner) +
               ")");
  }
}

bool ConnectionGuard::Seen(int fd, std::string_view client, Clock::time_point now) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return true;  // accepted before the monitor saw it: nothing to go by
  Connection& connection = it->second;
  if (connection.refused) return false;
  connection.last_active = now;
  // Compared without building a string: this runs for every message, chunks of uploads included.
  if (client.empty() || connection.client == client) return true;
  connection.client = std::string(client);
  connection.owner = "client " + connection.client;
  const size_t owned = OwnedBy(connection.owner);
  if (owned <= limits_.max_per_owner) return true;
  Refuse(fd, connection,
         connection.owner + " has " + std::to_string(owned - 1) + " connections open, the most one client may " +
             "hold (max_client_share of max_connections: " + std::to_string(limits_.max_per_owner) + ")");
  return false;
}

// A socket number is reused once ZeroMQ closes it; its DISCONNECTED event, taken just before this, tells that it
// closed, so only a connection accepted in the moments since could be shut down in its place.
void ConnectionGuard::CloseIdle(Clock::time_point now) {
  const auto idle = std::chrono::milliseconds(limits_.idle_timeout_ms);
  for (auto& [fd, connection] : connections_) {
    if (connection.refused || now - connection.last_active < idle) continue;
    Refuse(fd, connection,
           "it sent nothing for " + std::to_string(limits_.idle_timeout_ms) + " ms (idle_connection_timeout)");
  }
}

void ConnectionGuard::Refuse(int fd, Connection& connection, const std::string& why) {
  connection.refused = true;
  // ZeroMQ owns the socket: shutting it down (not closing it) makes ZeroMQ see the end of the connection and
  // close it itself, which the DISCONNECTED event then reports.
  ::shutdown(fd, SHUT_RDWR);
  LogLimited("closed " + connection.owner + why.substr(0, why.find_first_of("0123456789")),
             "closed the connection from " + connection.peer + " (" + connection.owner + "): " + why);
}

size_t ConnectionGuard::Open() const {
  size_t open = 0;
  for (const auto& [fd, connection] : connections_) open += !connection.refused;
  return open;
}

size_t ConnectionGuard::OwnedBy(const std::string& owner) const {
  size_t owned = 0;
  for (const auto& [fd, connection] : connections_) owned += !connection.refused && connection.owner == owner;
  return owned;
}

void ConnectionGuard::LogLimited(const std::string& kind, const std::string& line) {
  uint64_t suppressed = 0;
  if (!limiter_.Admit(kind, Clock::now(), &suppressed)) return;
  log_(LogValue(line, 2 * kLogValueCap) + (suppressed > 0 ? " (" + std::to_string(suppressed) + " similar suppressed)" : ""));
}

}  // namespace planb
