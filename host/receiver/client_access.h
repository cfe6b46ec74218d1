// Who may do what on this storage node (docs/security.md). With CURVE, a ZAP handler (ZeroMQ's authentication
// hook, RFC 27) lets in only the keys of the config's [client.NAME] sections and labels each connection with
// its client's name, which every message from it then carries as its User-Id; each request is checked for its
// right (upload, read, snapshot) and map before anything is done. Without CURVE every peer may do everything
// (`planb serve` allows that only on loopback, or with allow_plaintext).
// Thread-safety: the receiver's Run thread only.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "host/common/log_text.h"
#include "host/config/config.h"
#include "host/security/curve_key.h"
#include "planb/status.h"

namespace planb {

struct AccessSettings {
  std::optional<CurveKeyPair> server_key;        // CURVE with this pair; absent: plaintext, no checks
  std::map<std::string, ClientConfig> clients;  // who may connect, and their rights (CURVE only)
};

class ClientAccess {
 public:
  using Log = std::function<void(const std::string&)>;
  ClientAccess(AccessSettings settings, Log log);
  ~ClientAccess();
  ClientAccess(const ClientAccess&) = delete;
  ClientAccess& operator=(const ClientAccess&) = delete;

  bool curve() const { return settings_.server_key.has_value(); }
  // With CURVE: binds the ZAP handler in `context` (one CURVE receiver per context: libzmq asks the handler at a
  // fixed inproc address) and makes `router` a CURVE server. Call before `router` binds. Nothing without CURVE.
  Status Secure(zmq::context_t& context, zmq::socket_t& router);
  // The ZAP handler's socket, to poll beside the router; nullptr without CURVE.
  zmq::socket_t* zap_socket() { return zap_.get(); }
  // Answers every ZAP request waiting (each a connection's handshake): 200 with the client's name for a listed
  // key, 400 for any other (logged once a minute per key).
  void ServeZap();

  // Whether the message carrying `frame` may use `right` on `map` (nullptr: a request naming no map, such as an
  // upload's chunks). Fills `scope` with the maps its client may touch. kPermissionDenied "not authorised for
  // RIGHT on MAP" when not, logged once a minute per client, right and map.
  Status Check(const zmq::message_t& frame, Right right, const std::string* map, MapScope* scope);

  // With CURVE the name of the client whose connection carried `frame` (its User-Id), else "".
  std::string ClientName(const zmq::message_t& frame) const;
  // With CURVE: whether `batch_id` is in the namespace of client `client_name` (batch_namespace.h): OK, or
  // kPermissionDenied naming the namespace its ids must start with. Without CURVE every id is every sender's.
  // Whether the connection's client holds `right` (always, without CURVE), without logging anything.
  bool Holds(const zmq::message_t& frame, Right right) const;
  Status CheckBatchId(const std::string& client_name, std::string_view batch_id) const;

  // Who sent the message carrying `frame` on the connection `routing_id`: with CURVE "client NAME" (every
  // connection with that client's key is the same client), in plaintext "sender HEX at ADDRESS" (each
  // connection is its own). What per-client bounds count by and log lines name; already escaped.
  std::string Identify(const zmq::message_t& frame, const std::string& routing_id) const;

 private:
  void RefuseLogged(const std::string& kind, const std::string& line);

  AccessSettings settings_;
  Log log_;
  std::map<std::string, const ClientConfig*> by_key_;  // Z85 public key -> its client
  std::unique_ptr<zmq::socket_t> zap_;
  RepeatLimiter refusals_{std::chrono::minutes(1), 1024};
};

}  // namespace planb
