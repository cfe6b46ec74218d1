// The connections a storage node's ROUTER holds, watched through a ZeroMQ socket monitor, so that no peer can hold
// enough of them to run the node out of file descriptors (issue 38: 200 idle handshakes under nofile=128 put the
// node at 100% CPU and failed its merges with "Too many open files"). It
// - refuses a connection past the node's cap, or past one owner's share of it, by shutting its socket down as
//   soon as it is accepted (ZeroMQ then closes it: no descriptor is held for long);
// - closes a connection that has sent nothing for the idle timeout;
// - logs a handshake the node refused, naming the peer's address: a plaintext client at a CURVE node, a CURVE
//   client at a plaintext one, a key the node does not know.
// A connection's owner is its peer's address until it sends a request, then (with keys) its client's name, so
// that one client's connections count together from whichever address. ZeroMQ names a connection by its socket
// (the monitor's events and ZMQ_SRCFD of each message).
// Thread-safety: the receiver's Run thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "host/common/log_text.h"

namespace planb {

struct ConnectionLimits {
  uint32_t max_connections = 1024;       // open at once, every peer together
  uint32_t max_per_owner = 256;          // open at once for one owner (address, or client with keys)
  int64_t idle_timeout_ms = 5 * 60 * 1000;  // a connection that sends nothing this long is closed
};

class ConnectionGuard {
 public:
  using Clock = std::chrono::steady_clock;
  using LogFunction = std::function<void(const std::string&)>;

  // Starts monitoring `router` (before it binds, so that no connection is missed); `curve`: whether it requires
  // CURVE (for the log's hint). Throws zmq::error_t.
  ConnectionGuard(zmq::context_t& context, zmq::socket_t& router, bool curve, ConnectionLimits limits,
                  LogFunction log);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // Readable when events wait: poll it with the router.
  zmq::socket_t& events() { return monitor_; }
  // Takes every waiting event: counts connections, refuses those over a cap, logs refused handshakes.
  void TakeEvents(Clock::time_point now);
  // A request arrived on the connection whose socket is `fd` (ZMQ_SRCFD), from `client` ("" in plaintext: its
  // address stays its owner). False when that makes the client hold more than its share: the connection is
  // shut down and the request should be dropped.
  bool Seen(int fd, std::string_view client, Clock::time_point now);
  // Shuts down connections that have sent nothing for the idle timeout.
  void CloseIdle(Clock::time_point now);

  // Connections open and not refused.
  size_t Open() const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Connection {
    std::string peer;   // "ADDRESS:PORT"
    std::string owner;  // "address ADDRESS", or "client NAME" once it sent a request with keys
    std::string client;  // NAME then; "" before
    Clock::time_point last_active;
    bool refused = false;  // shut down by this guard; gone at its DISCONNECTED event
  };
  void Accepted(int fd, Clock::time_point now);
  void Refuse(int fd, Connection& connection, const std::string& why);
  size_t OwnedBy(const std::string& owner) const;
  void LogLimited(const std::string& kind, const std::string& line);

  ConnectionLimits limits_;
  bool curve_;
  LogFunction log_;
  zmq::socket_t& router_;
  std::string endpoint_;
  zmq::socket_t monitor_;
  std::map<int, Connection> connections_;
  // A handshake failure is reported before its connection's DISCONNECTED event, without the socket: the reason
  // waits here for that event (one ZeroMQ I/O thread reports both, in that order).
  std::string failed_handshake_;
  RepeatLimiter limiter_;
  RepeatLimiter handshake_limiter_{std::chrono::minutes(1)};
};

}  // namespace planb
