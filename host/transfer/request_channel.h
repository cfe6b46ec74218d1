// One DEALER connection from a sender to a storage node, speaking the upload protocol's framing
// (docs/protocol.md): requests go out with increasing request ids, replies come back matched by request id.
// UploadBatch opens one channel per attempt and drops it (linger 0) when the attempt ends. A monitor on the
// socket tells a node that is down (its port refuses the connection) from a slow one, so callers can say
// "connection refused" at once instead of after the whole timeout, and a failed CURVE handshake from a slow
// node: a node that does not know this client's key, or that cannot prove it is the node configured (a wrong
// public key, or no CURVE), fails at once and for good (kPermissionDenied).
// Thread-safety: one thread at a time (a zmq socket).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/security/curve_key.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

// A storage node as a client reaches it: its name (for messages), endpoint and, with CURVE, the keys.
struct NodeAddress {
  std::string node_name;
  std::string endpoint;                 // tcp://HOST:PORT
  std::optional<CurveClientKeys> keys = std::nullopt;  // absent: plaintext
};
// `node`'s address from the config. REQUIRES: `node` is in cluster.nodes.
NodeAddress AddressOf(const ClusterConfig& cluster, const std::string& node);

class RequestChannel {
 public:
  using Clock = std::chrono::steady_clock;
  struct Reply {
    uint64_t request_id = 0;  // of the request it answers
    uint16_t command = 0;
    std::string payload;
    bool has_data = false;  // frame C came with the reply (FETCH_DATA)
    zmq::message_t data;    // frame C, handed over without a copy
  };

  // Connects a DEALER to `node` (CURVE when it has keys); a send waits at most `send_timeout_ms` for room in the
  // queue. Request ids come from `*next_request_id`, which outlives the channel so that ids keep increasing
  // across reconnects. Throws zmq::error_t (EINVAL and the like for a malformed endpoint or key).
  RequestChannel(zmq::context_t& context, const NodeAddress& node, int64_t send_timeout_ms,
                 uint64_t* next_request_id);
  ~RequestChannel();
  RequestChannel(const RequestChannel&) = delete;
  RequestChannel& operator=(const RequestChannel&) = delete;

  // Sends one request (frame C = `chunk` when not null, moved out); false when the socket would not take it
  // in time. Throws zmq::error_t on transport errors.
  bool Send(protocol::Command command, const std::string& payload, zmq::message_t* chunk, uint64_t* request_id);
  // Waits until `deadline` for a reply whose request id `awaited` accepts; replies to anything else are stale
  // (an earlier request) and dropped. `*timed_out` when none came. Non-OK for a reply that does not decode
  // (another version, bad header, not 2 or 3 frames): final, retrying cannot help. Non-OK too, kIOError
  // "connection refused by ENDPOINT", as soon as a connection attempt failed while not connected (nobody listens at the
  // endpoint: the node is down or restarting); refused() then says so, as retrying later may help.
  // kPermissionDenied, final, when the handshake failed: the node does not know this client's key ("the node
  // does not know this client's key ..."; callers say for which action and maps), or the node did not prove
  // its identity. Throws zmq::error_t on transport errors.
  Status Await(Clock::time_point deadline, const std::function<bool(uint64_t)>& awaited, Reply* reply, bool* timed_out);

  // Whether the last Await ended on a refused connection.
  bool refused() const { return refused_; }
  // Whether the node refused this client's key at the handshake (kPermissionDenied; not: the node did not
  // prove its identity). Callers name the action and maps it was refused for.
  bool key_refused() const { return key_refused_; }

 private:
  // Reads the monitor's pending events; true when a connection attempt failed while not connected. A failed
  // handshake sets handshake_failure_.
  bool DrainMonitor();

  std::string endpoint_;
  bool curve_ = false;
  std::string own_public_key_;  // CURVE: for the message when the node refuses it
  Status handshake_failure_;
  bool key_refused_ = false;
  zmq::socket_t socket_;
  zmq::socket_t monitor_;  // PAIR receiving socket_'s connect events
  bool connected_ = false;
  bool refused_ = false;
  // Plaintext only: a connection was made and dropped before the node ever answered. A CURVE node drops a
  // plaintext client right after the greetings, often before this side's mechanism-mismatch event is seen, so a
  // later refusal says the node may require CURVE rather than only "connection refused".
  bool answered_ = false;
  bool dropped_unanswered_ = false;
  uint64_t* next_request_id_;
};

}  // namespace planb
