// The sender's side of PREPARE (docs/protocol.md): asks one storage node whether it can take a load's maps.
// Thread-safety: one call per thread; the zmq context is shared.
#pragma once

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

// Sends `request` to the node at `endpoint` and waits up to `timeout_ms` for its PREPARE_REPLY, which must answer
// every map in order. Errors (the node's name is the caller's to add): kIOError "timed out after N ms" or the
// transport's; an ERROR reply as its code and message; a reply that does not decode or does not match.
Status PrepareOnNode(zmq::context_t& context, const std::string& endpoint, const protocol::PrepareRequest& request,
                     int64_t timeout_ms, protocol::PrepareReply* reply);

}  // namespace planb
