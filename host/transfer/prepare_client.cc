#include "host/transfer/prepare_client.h"

#include <chrono>

#include "host/transfer/request_channel.h"

namespace planb {

Status PrepareOnNode(zmq::context_t& context, const NodeAddress& node, const protocol::PrepareRequest& request,
                     int64_t timeout_ms, protocol::PrepareReply* reply) {
  using protocol::Command;
  const std::string timed_out_message = "timed out after " + std::to_string(timeout_ms) + " ms";
  try {
    uint64_t next_request_id = 1;
    RequestChannel channel(context, node, timeout_ms, &next_request_id);
    uint64_t request_id = 0;
    if (!channel.Send(Command::kPrepare, protocol::EncodePrepare(request), nullptr, &request_id)) {
      return Status::IOError(timed_out_message + " sending PREPARE");
    }
    RequestChannel::Reply answer;
    bool timed_out = false;
    const Status awaited = channel.Await(RequestChannel::Clock::now() + std::chrono::milliseconds(timeout_ms),
                                         [request_id](uint64_t id) { return id == request_id; }, &answer, &timed_out);
    if (channel.key_refused()) {
      std::string maps;
      for (const protocol::PrepareMap& map : request.maps) maps += (maps.empty() ? "" : ", ") + map.map;
      return Status::PermissionDenied("not authorised for upload on " + maps + ": " + awaited.message());
    }
    PLANB_RETURN_IF_ERROR(awaited);
    if (timed_out) return Status::IOError(timed_out_message + " waiting for the PREPARE_REPLY");
    if (answer.command == static_cast<uint16_t>(Command::kError)) {
      protocol::ErrorReply error;
      PLANB_RETURN_IF_ERROR(protocol::DecodeError(answer.payload, &error).WithContext("bad reply to PREPARE"));
      return Status(protocol::CodeFromWire(error.code), "PREPARE refused: " + error.message);
    }
    if (answer.command != static_cast<uint16_t>(Command::kPrepareReply)) {
      return Status::Invalid("unexpected reply " + protocol::CommandName(answer.command) + " to PREPARE");
    }
    PLANB_RETURN_IF_ERROR(protocol::DecodePrepareReply(answer.payload, reply).WithContext("bad reply to PREPARE"));
  } catch (const zmq::error_t& e) {
    return Status::IOError("endpoint " + node.endpoint + ": " + e.what());
  }
  if (reply->maps.size() != request.maps.size()) {
    return Status::Invalid("PREPARE_REPLY answers " + std::to_string(reply->maps.size()) + " maps, not " +
                           std::to_string(request.maps.size()));
  }
  for (size_t i = 0; i < request.maps.size(); ++i) {
    if (reply->maps[i].map != request.maps[i].map) {
      return Status::Invalid("PREPARE_REPLY answers map '" + reply->maps[i].map + "' where '" + request.maps[i].map +
                             "' was asked");
    }
  }
  return Status::Ok();
}

}  // namespace planb
