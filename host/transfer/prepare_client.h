// The sender's side of PREPARE (docs/protocol.md): asks one storage node whether it can take a load's maps.
// Thread-safety: one call per thread; the zmq context is shared.
#pragma once

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"
#include "planb/status.h"

namespace planb {

// Sends `request` to `node` and waits up to `timeout_ms` for its PREPARE_REPLY, which must answer every map in
// order. Errors (the node's name is the caller's to add): kIOError "timed out after N ms" or the transport's;
// kPermissionDenied "not authorised for upload on MAPS: ..." when the node does not know this client's key (or
// "PREPARE refused: not authorised for upload on MAP ..." from the node), or it did not prove its identity; an
// ERROR reply as its code and message; a reply that does not decode or does not match.
Status PrepareOnNode(zmq::context_t& context, const NodeAddress& node, const protocol::PrepareRequest& request,
                     int64_t timeout_ms, protocol::PrepareReply* reply);

}  // namespace planb
