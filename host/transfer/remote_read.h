// The client side of READ (docs/protocol.md): runs a typed lookup or query on a storage node and brings back its
// exit status, stdout and stderr byte for byte, so that `--remote` prints what the command prints there.
// Thread-safety: a RemoteReader per thread (RemoteRead makes one per call); the zmq context is shared (zmq
// contexts are thread-safe).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"
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
// Thread-safety: one thread at a time.
class RemoteReader {
 public:
  // REQUIRES: `context` and `cluster` outlive the reader.
  RemoteReader(zmq::context_t& context, const ClusterConfig& cluster) : context_(context), cluster_(cluster) {}
  RemoteReader(const RemoteReader&) = delete;
  RemoteReader& operator=(const RemoteReader&) = delete;

  // One READ, as described above. The connection to each node asked (and, with CURVE, its handshake) stays open
  // for the next Read while that node answered; one that failed in any way is closed and made afresh next time.
  Status Read(const protocol::ReadRequest& request, int* exit_code, std::string* out, std::string* err,
              std::string* node_used);

  // Connections made so far (each with its handshake): 1 for any number of Reads answered by one node.
  uint64_t connections_made() const { return connections_made_; }

 private:
  zmq::context_t& context_;
  const ClusterConfig& cluster_;
  std::map<std::string, std::unique_ptr<RequestChannel>> channels_;  // by node name: the open connections
  uint64_t next_request_id_ = 1;  // ids keep increasing across connections, so a late reply is never taken
  uint64_t connections_made_ = 0;
};

// One READ through a RemoteReader of its own: a connection per node asked, closed when it returns.
Status RemoteRead(zmq::context_t& context, const ClusterConfig& cluster, const protocol::ReadRequest& request,
                  int* exit_code, std::string* out, std::string* err, std::string* node_used);

// Splits a lookup of `keys` (`head` gives every other field; its own keys are ignored) into requests of at most
// protocol::kMaxReadRequest bytes each, keys in order; one request when they fit. A single key too large for
// a request of its own still gets one (RemoteRead refuses it, naming the sizes).
std::vector<protocol::ReadRequest> SplitLookupRequest(const protocol::ReadRequest& head,
                                                      const std::vector<std::string>& keys);

}  // namespace planb
