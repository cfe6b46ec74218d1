// The client side of READ (docs/protocol.md): runs a typed lookup or query on a storage node and brings back its
// exit status, stdout and stderr byte for byte, so that `--remote` prints what the command prints there.
// Thread-safety: one call per thread; the zmq context is shared (zmq contexts are thread-safe).
#pragma once

#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

// Asks the storage nodes of `cluster.node_list` in order, one attempt each, and returns the first READ_RESULT:
// `*node_used` names the node that answered. Each attempt waits request_timeout for a lookup and
// max(request_timeout, 60 s) for a query. A node that times out, cannot be reached or is busy is skipped; an
// ERROR refusing the request itself (kInvalidArgument: a request the node cannot decode) is final, since
// every node would refuse it alike; so is kPermissionDenied (the node does not know this client's key, did not
// prove its identity, or this client may not read the map: "not authorised for read on MAP"). Errors: "--remote needs a node_list in the config" without a node list;
// kIOError "no storage node answered: node1 (timed out after 5000 ms), node2 (...)" when all fail.
// A request over protocol::kMaxReadRequest is refused here: kInvalidArgument "request too large (N bytes, limit
// M)" (split a lookup's keys with SplitLookupRequest first).
Status RemoteRead(zmq::context_t& context, const ClusterConfig& cluster, const protocol::ReadRequest& request,
                  int* exit_code, std::string* out, std::string* err, std::string* node_used);

// Splits a lookup of `keys` (`head` gives every other field; its own keys are ignored) into requests of at most
// protocol::kMaxReadRequest bytes each, keys in order; one request when they fit. A single key too large for
// a request of its own still gets one (RemoteRead refuses it, naming the sizes).
std::vector<protocol::ReadRequest> SplitLookupRequest(const protocol::ReadRequest& head,
                                                      const std::vector<std::string>& keys);

}  // namespace planb
