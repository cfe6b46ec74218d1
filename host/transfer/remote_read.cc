#include "host/transfer/remote_read.h"

#include <algorithm>
#include <chrono>

#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"

namespace planb {

namespace {

constexpr int64_t kMinQueryTimeoutMs = 60 * 1000;

// One attempt on one node, through `*channel` (connected here when null). OK with `*answered` set when the node
// gave a READ_RESULT; OK without it (and `why` for the summary) when the next node should be tried; an error when
// the request itself was refused. `*keep` says whether the connection may serve the next request: only when the
// exchange ended cleanly (a reply that decoded), never after a timeout, a refusal or a transport error.
Status AskNode(zmq::context_t& context, const NodeAddress& node, int64_t timeout_ms, uint64_t* next_request_id,
               std::unique_ptr<RequestChannel>* channel, const std::string& payload, protocol::ReadResult* result,
               bool* answered, bool* keep, std::string* why) {
  *answered = false;
  *keep = false;
  RequestChannel::Reply reply;
  try {
    if (*channel == nullptr) *channel = std::make_unique<RequestChannel>(context, node, timeout_ms, next_request_id);
    const auto deadline = RequestChannel::Clock::now() + std::chrono::milliseconds(timeout_ms);
    uint64_t request_id = 0;
    if (!(*channel)->Send(protocol::Command::kRead, payload, nullptr, &request_id)) {
      *why = "timed out after " + std::to_string(timeout_ms) + " ms sending the request";
      return Status::Ok();
    }
    bool timed_out = false;
    Status status =
        (*channel)->Await(deadline, [request_id](uint64_t id) { return id == request_id; }, &reply, &timed_out);
    // Refused keys and unproven identities are final: a client misconfigured for one node is told so.
    if ((*channel)->key_refused()) return Status::PermissionDenied("not authorised for read: " + status.message());
    if (status.code() == Code::kPermissionDenied) return status;
    if (!status.ok()) {
      *why = status.message();
      return Status::Ok();
    }
    if (timed_out) {
      *why = "timed out after " + std::to_string(timeout_ms) + " ms";
      return Status::Ok();
    }
  } catch (const zmq::error_t& e) {
    *why = "endpoint " + node.endpoint + ": " + e.what();
    return Status::Ok();
  }
  if (reply.command == static_cast<uint16_t>(protocol::Command::kReadResult)) {
    Status status = protocol::DecodeReadResult(reply.payload, result);
    if (!status.ok()) {
      *why = "bad reply: " + status.message();
      return Status::Ok();
    }
    *answered = true;
    *keep = true;
    return Status::Ok();
  }
  if (reply.command == static_cast<uint16_t>(protocol::Command::kError)) {
    protocol::ErrorReply error;
    Status status = protocol::DecodeError(reply.payload, &error);
    if (!status.ok()) {
      *why = "bad reply: " + status.message();
      return Status::Ok();
    }
    const Code code = protocol::CodeFromWire(error.code);
    // Every node refuses a request it cannot run alike; anything else (busy, a node without READ) is this
    // node's own state, and another node may answer.
    if (code == Code::kInvalidArgument || code == Code::kPermissionDenied) return Status(code, error.message);
    *why = error.message;
    *keep = true;  // a busy node answered: the connection is sound
    return Status::Ok();
  }
  *why = "unexpected reply " + protocol::CommandName(reply.command) + " to READ";
  return Status::Ok();
}

}  // namespace

Status RemoteReader::Read(const protocol::ReadRequest& request, int* exit_code, std::string* out, std::string* err,
                          std::string* node_used) {
  const ClusterConfig& cluster = cluster_;
  if (cluster.node_list.empty()) return Status::Invalid("--remote needs a node_list in the config");
  const bool query = request.kind == protocol::ReadKind::kQuery;
  const int64_t timeout_ms =
      query ? std::max<int64_t>(cluster.request_timeout_ms, kMinQueryTimeoutMs) : cluster.request_timeout_ms;
  const std::string payload = protocol::EncodeRead(request);  // once, for every node asked
  if (payload.size() > protocol::kMaxReadRequest) {
    return Status::Invalid("request too large (" + std::to_string(payload.size()) + " bytes, limit " +
                           std::to_string(protocol::kMaxReadRequest) + ")");
  }
  std::string failures;
  for (const std::string& node : cluster.node_list) {
    std::string why;
    protocol::ReadResult result;
    bool answered = false;
    const auto found = cluster.nodes.find(node);
    if (found == cluster.nodes.end() || found->second.endpoint.empty()) {
      why = "no endpoint: add [node." + node + "] endpoint = tcp://HOST:PORT";
    } else {
      std::unique_ptr<RequestChannel>& channel = channels_[node];
      connections_made_ += channel == nullptr ? 1 : 0;
      bool keep = false;
      const Status asked = AskNode(context_, AddressOf(cluster, node), timeout_ms, &next_request_id_, &channel,
                                   payload, &result, &answered, &keep, &why);
      if (!keep) channel.reset();  // linger 0: whatever was queued on it goes
      PLANB_RETURN_IF_ERROR(asked.WithContext("storage node " + node));
    }
    if (answered) {
      *exit_code = result.exit_code;
      *out = std::move(result.out);
      *err = std::move(result.err);
      *node_used = node;
      return Status::Ok();
    }
    failures += (failures.empty() ? "" : ", ") + node + " (" + why + ")";
  }
  return Status::IOError("no storage node answered: " + failures);
}

Status RemoteRead(zmq::context_t& context, const ClusterConfig& cluster, const protocol::ReadRequest& request,
                  int* exit_code, std::string* out, std::string* err, std::string* node_used) {
  RemoteReader reader(context, cluster);
  return reader.Read(request, exit_code, out, err, node_used);
}

std::vector<protocol::ReadRequest> SplitLookupRequest(const protocol::ReadRequest& head,
                                                      const std::vector<std::string>& keys) {
  // A lookup's READ payload is its fixed fields, then each key as u32 length + bytes (protocol.cc).
  protocol::ReadRequest empty = head;
  empty.keys.clear();
  const size_t head_size = protocol::EncodeRead(empty).size();
  std::vector<protocol::ReadRequest> requests;
  protocol::ReadRequest current = empty;
  size_t size = head_size;
  for (const std::string& key : keys) {
    const size_t key_size = 4 + key.size();
    if (!current.keys.empty() && size + key_size > protocol::kMaxReadRequest) {
      requests.push_back(std::move(current));
      current = empty;
      size = head_size;
    }
    current.keys.push_back(key);
    size += key_size;
  }
  requests.push_back(std::move(current));
  return requests;
}

}  // namespace planb
