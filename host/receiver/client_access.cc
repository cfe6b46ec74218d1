#include "host/receiver/client_access.h"

#include <array>
#include <vector>
#include <zmq_addon.hpp>

#include "host/common/hex.h"
#include "host/security/batch_namespace.h"

namespace planb {

namespace {

// libzmq asks the ZAP handler of the socket's context at this address (RFC 27).
constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
constexpr char kZapDomain[] = "planb";
constexpr size_t kZapRequestFrames = 7;  // version, request id, domain, address, routing id, mechanism, key

std::string_view View(const zmq::message_t& m) { return {static_cast<const char*>(m.data()), m.size()}; }

}  // namespace

ClientAccess::ClientAccess(AccessSettings settings, Log log) : settings_(std::move(settings)), log_(std::move(log)) {
  for (const auto& [name, client] : settings_.clients) {
    for (const std::string& key : client.public_keys) by_key_.emplace(key, &client);
  }
}

ClientAccess::~ClientAccess() = default;

Status ClientAccess::Secure(zmq::context_t& context, zmq::socket_t& router) {
  if (!curve()) return Status::Ok();
  PLANB_RETURN_IF_ERROR(RequireCurve());
  try {
    auto zap = std::make_unique<zmq::socket_t>(context, zmq::socket_type::rep);
    zap->set(zmq::sockopt::linger, 0);
    zap->bind(kZapEndpoint);
    router.set(zmq::sockopt::curve_server, 1);
    router.set(zmq::sockopt::curve_secretkey, settings_.server_key->secret_key);
    // libzmq lets a CURVE connection in unasked when no handler is bound; ours is bound first, and Check refuses
    // any message without the client name the handler gives, so a missing handler opens nothing.
    router.set(zmq::sockopt::zap_domain, kZapDomain);
    zap_ = std::move(zap);
  } catch (const zmq::error_t& e) {
    return Status::IOError(std::string("cannot start the CURVE authentication handler (") + kZapEndpoint +
                           "): " + e.what());
  }
  return Status::Ok();
}

void ClientAccess::ServeZap() {
  if (zap_ == nullptr) return;
  for (;;) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(*zap_, std::back_inserter(frames), zmq::recv_flags::dontwait)) return;
    // Only libzmq itself talks to this inproc socket, but a reply must go back for every request (REP).
    const bool well_formed = frames.size() == kZapRequestFrames && View(frames[0]) == "1.0" &&
                             View(frames[5]) == "CURVE" && frames[6].size() == 32;
    std::string status = "500";
    std::string user;
    if (well_formed) {
      std::array<char, kZ85KeyLength + 1> z85{};
      zmq_z85_encode(z85.data(), static_cast<const uint8_t*>(frames[6].data()), 32);
      const std::string key(z85.data(), kZ85KeyLength);
      const auto client = by_key_.find(key);
      if (client != by_key_.end()) {
        status = "200";
        user = client->second->name;
      } else {
        status = "400";
        // One kind for every unknown key: fresh keys cost an attacker nothing, log lines must not be that cheap.
        RefuseLogged("unknown key", "refused a connection from " + LogValue(View(frames[3])) + ": key " + key +
                                        " is in no [client.NAME] section");
      }
    }
    const std::string request_id = frames.size() > 1 ? frames[1].to_string() : std::string();
    const std::string text = status == "200" ? "OK" : "not authorised";
    std::vector<zmq::const_buffer> reply = {zmq::str_buffer("1.0"), zmq::buffer(request_id), zmq::buffer(status),
                                            zmq::buffer(text),       zmq::buffer(user),       zmq::const_buffer()};
    (void)zmq::send_multipart(*zap_, reply, zmq::send_flags::dontwait);
  }
}

Status ClientAccess::Check(const zmq::message_t& frame, Right right, const std::string* map, MapScope* scope) {
  scope->reset();
  if (!curve()) return Status::Ok();
  const char* name = zmq_msg_gets(const_cast<zmq_msg_t*>(frame.handle()), "User-Id");
  const auto client = name == nullptr ? settings_.clients.end() : settings_.clients.find(name);
  const std::string what = std::string("not authorised for ") + RightName(right) +
                           (map == nullptr ? std::string() : " on " + LogValue(*map));
  if (client == settings_.clients.end()) {
    // Only a connection the handler let in gets here, so this is a handler that did not run: refuse all.
    RefuseLogged("anonymous", "refused a request on a connection without a client name");
    return Status::PermissionDenied(what + " (the connection carries no client name)");
  }
  const ClientConfig& who = client->second;
  if ((who.rights & static_cast<uint32_t>(right)) == 0 || (map != nullptr && !who.Allows(right, *map))) {
    // Per client and right, not per map: maps named at random must not make a line each.
    const std::string kind = who.name + " " + RightName(right);
    RefuseLogged(kind, "refused client " + who.name + ": " + what);
    return Status::PermissionDenied(what + " (client " + who.name + ")");
  }
  *scope = who.maps;
  return Status::Ok();
}

bool ClientAccess::Holds(const zmq::message_t& frame, Right right) const {
  if (!curve()) return true;
  const char* name = zmq_msg_gets(const_cast<zmq_msg_t*>(frame.handle()), "User-Id");
  const auto client = name == nullptr ? settings_.clients.end() : settings_.clients.find(name);
  return client != settings_.clients.end() && (client->second.rights & static_cast<uint32_t>(right)) != 0;
}

std::string ClientAccess::ClientName(const zmq::message_t& frame) const {
  if (!curve()) return "";
  const char* name = zmq_msg_gets(const_cast<zmq_msg_t*>(frame.handle()), "User-Id");
  return name == nullptr ? "" : name;
}

Status ClientAccess::CheckBatchId(const std::string& client_name, std::string_view batch_id) const {
  if (!curve()) return Status::Ok();
  const auto client = settings_.clients.find(client_name);
  if (client == settings_.clients.end()) {
    return Status::PermissionDenied("batch ids are checked against the client's keys, and the connection carries no "
                                    "client name");
  }
  std::string namespaces;
  for (const std::string& key : client->second.public_keys) {
    const std::string prefix = BatchNamespace(key);
    if (!prefix.empty() && batch_id.substr(0, prefix.size()) == prefix) return Status::Ok();
    namespaces += (namespaces.empty() ? "" : " or ") + prefix;
  }
  return Status::PermissionDenied("batch ids of client " + client->first + " start with " + namespaces +
                                  " (its public key; docs/security.md): this one does not, so it may be another "
                                  "client's");
}

std::string ClientAccess::Identify(const zmq::message_t& frame, const std::string& routing_id) const {
  zmq_msg_t* msg = const_cast<zmq_msg_t*>(frame.handle());
  if (curve()) {
    const char* name = zmq_msg_gets(msg, "User-Id");
    return "client " + LogValue(name == nullptr ? "(none)" : name);
  }
  const char* address = zmq_msg_gets(msg, "Peer-Address");
  return "sender " + HexString(routing_id) + (address == nullptr ? "" : " at " + LogValue(address));
}

void ClientAccess::RefuseLogged(const std::string& kind, const std::string& line) {
  uint64_t suppressed = 0;
  if (!refusals_.Admit(kind, std::chrono::steady_clock::now(), &suppressed)) return;
  log_(line + (suppressed > 0 ? " (" + std::to_string(suppressed) + " more since the last such line)" : ""));
}

}  // namespace planb
