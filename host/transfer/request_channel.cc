#include "host/transfer/request_channel.h"

#include <atomic>
#include <cstring>
#include <cerrno>
#include <vector>
#include <zmq_addon.hpp>

namespace planb {

namespace {

// Each channel's monitor needs its own inproc address.
std::string NewMonitorAddress() {
  static std::atomic<uint64_t> next{0};
  return "inproc://planb-request-channel-monitor-" + std::to_string(next.fetch_add(1));
}

constexpr int kMonitoredEvents = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_DISCONNECTED |
                                  ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                  ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

}  // namespace

NodeAddress AddressOf(const ClusterConfig& cluster, const std::string& node) {
  return NodeAddress{node, cluster.nodes.at(node).endpoint, cluster.KeysFor(node)};
}

RequestChannel::RequestChannel(zmq::context_t& context, const NodeAddress& node, int64_t send_timeout_ms,
                               uint64_t* next_request_id)
    : endpoint_(node.endpoint),
      curve_(node.keys.has_value()),
      socket_(context, zmq::socket_type::dealer),
      monitor_(context, zmq::socket_type::pair),
      next_request_id_(next_request_id) {
  socket_.set(zmq::sockopt::linger, 0);
  monitor_.set(zmq::sockopt::linger, 0);
  // The monitor must exist before connect() so that the first attempt's events are seen.
  const std::string monitor_address = NewMonitorAddress();
  if (zmq_socket_monitor(socket_.handle(), monitor_address.c_str(), kMonitoredEvents) != 0) throw zmq::error_t();
  monitor_.connect(monitor_address);
  socket_.set(zmq::sockopt::sndtimeo, static_cast<int>(send_timeout_ms));
  // No reply is larger than a READ_RESULT's output cap (a FETCH_DATA chunk is far smaller): a node sending more
  // has its connection dropped by zmq before the frame is allocated, and the request times out.
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(2 * protocol::kMaxReadOutput + (1 << 20)));
  if (curve_) {
    // The handshake fails unless the node proves it holds the secret of curve_serverkey.
    socket_.set(zmq::sockopt::curve_serverkey, node.keys->server_public_key);
    socket_.set(zmq::sockopt::curve_publickey, node.keys->own.public_key);
    socket_.set(zmq::sockopt::curve_secretkey, node.keys->own.secret_key);
    own_public_key_ = node.keys->own.public_key;
  }
  socket_.connect(endpoint_);
}

RequestChannel::~RequestChannel() { (void)zmq_socket_monitor(socket_.handle(), nullptr, 0); }

bool RequestChannel::DrainMonitor() {
  bool failed = false;
  for (;;) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(monitor_, std::back_inserter(frames), zmq::recv_flags::dontwait)) return failed;
    // libzmq 4.x: frame 1 is u16 event + u32 value (native byte order), frame 2 the endpoint.
    if (frames.empty() || frames[0].size() < 2) continue;
    uint16_t event = 0;
    std::memcpy(&event, frames[0].data(), sizeof event);
    uint32_t value = 0;
    if (frames[0].size() >= 6) std::memcpy(&value, static_cast<const char*>(frames[0].data()) + 2, sizeof value);
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH && curve_) {
      // The node's ZAP handler said no (400): the key is in none of its [client.NAME] sections.
      key_refused_ = true;
      handshake_failure_ = Status::PermissionDenied(
          "the node does not know this client's key " + own_public_key_ +
          " (it is in none of the node's [client.NAME] sections; handshake status " + std::to_string(value) + ")");
    } else if ((event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) &&
               curve_) {
      // The node could not read our HELLO, sealed for the configured public key: it holds another secret, or it
      // does not speak CURVE at all.
      handshake_failure_ = Status::PermissionDenied(
          "the node at " + endpoint_ +
          " did not prove its identity: the CURVE handshake failed (it does not hold the secret of the public_key "
          "configured for it, or it does not use CURVE)");
    } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      handshake_failure_ = Status::PermissionDenied(
          "the node at " + endpoint_ +
          " requires CURVE: this client connects in plaintext (configure secret_key_file and every [node.NAME] "
          "public_key, docs/security.md)");
    } else if (event == ZMQ_EVENT_CONNECTED) {
      connected_ = true;
      failed = false;
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
      if (connected_ && !answered_) dropped_unanswered_ = true;
      connected_ = false;
    } else if (event == ZMQ_EVENT_CONNECT_RETRIED && !connected_) {
      failed = true;
    }
  }
}

bool RequestChannel::Send(protocol::Command command, const std::string& payload, zmq::message_t* chunk,
                          uint64_t* request_id) {
  *request_id = (*next_request_id_)++;
  std::string header = protocol::EncodeHeader(command, *request_id);
  // Once the first frame is queued, zmq takes the rest of the message without blocking.
  if (!socket_.send(zmq::buffer(header), zmq::send_flags::sndmore)) return false;
  if (chunk == nullptr) return socket_.send(zmq::buffer(payload), zmq::send_flags::none).has_value();
  (void)socket_.send(zmq::buffer(payload), zmq::send_flags::sndmore);
  return socket_.send(*chunk, zmq::send_flags::none).has_value();
}

Status RequestChannel::Await(Clock::time_point deadline, const std::function<bool(uint64_t)>& awaited, Reply* reply,
                             bool* timed_out) {
  *timed_out = false;
  refused_ = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0}, {monitor_.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, left);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;  // a signal is no transport error: wait on
    }
    const zmq::pollitem_t& item = items[0];
    // A reply already here wins over a refusal seen since (the node answered, then went away).
    if ((item.revents & ZMQ_POLLIN) == 0 && (items[1].revents & ZMQ_POLLIN) != 0) {
      const bool refused = DrainMonitor();
      if (!handshake_failure_.ok()) return handshake_failure_;
      if (refused) {
        refused_ = true;
        if (!curve_ && dropped_unanswered_) {
          // Still retryable (the node may have stopped), but the likely cause named.
          return Status::IOError("connection refused by " + endpoint_ +
                                 " after it closed a connection before answering: the node requires CURVE if it "
                                 "has keys, and this client connects in plaintext (configure secret_key_file and "
                                 "every [node.NAME] public_key, docs/security.md); else it stopped");
        }
        return Status::IOError("connection refused by " + endpoint_);
      }
    }
    if ((item.revents & ZMQ_POLLIN) == 0) {
      if (Clock::now() >= deadline) {
        *timed_out = true;
        return Status::Ok();
      }
      continue;
    }
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) continue;
    protocol::Header header;
    Status status =
        frames.empty() ? Status::Invalid("empty message") : protocol::DecodeHeader(frames[0].to_string_view(), &header);
    if (status.ok() && header.version != protocol::kProtocolVersion) {
      status = Status::NotSupported("the node answered in protocol version " + std::to_string(header.version) +
                                    " (this sender speaks " + std::to_string(protocol::kProtocolVersion) +
                                    (header.version < protocol::kProtocolVersion ? "; upgrade the node)"
                                                                                 : "; upgrade this client)"));
    }
    if (status.ok() && frames.size() != 2 && frames.size() != 3) {
      status = Status::Invalid("reply of " + std::to_string(frames.size()) + " frames, expected 2 or 3");
    }
    if (!status.ok()) return status.WithContext("bad reply from the node");
    answered_ = true;
    if (!awaited(header.request_id)) continue;  // stale
    reply->request_id = header.request_id;
    reply->command = header.command;
    reply->payload = frames[1].to_string();
    reply->has_data = frames.size() == 3;
    if (reply->has_data) {
      reply->data = std::move(frames[2]);
    } else {
      reply->data.rebuild(size_t{0});
    }
    return Status::Ok();
  }
}

}  // namespace planb
