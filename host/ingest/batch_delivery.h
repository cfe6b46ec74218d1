// Where a load's batches go when there is a node_list: the load job (load_job.h) hands each zip to a
// BatchDelivery, which cluster/ implements (cluster_delivery.h) over the storage nodes. The load job knows the
// order (check everything, then one stream after the other) but not the network.
// Thread-safety: one call at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/transfer/protocol.h"
#include "host/transfer/upload_client.h"
#include "planb/status.h"

namespace planb {

struct NodeDelivery {
  std::string node;
  bool local = false;      // staged on this machine without the network
  Status status;
  uint64_t sequence = 0;   // the node's staging sequence number
  bool merged = false;     // synchronise_merge: merged on that node before returning (and when already merged)
  // The node had merged this batch before (a retried load): nothing was staged there. The id it recorded.
  std::string already_merged;
  UploadOutcome upload;    // remote nodes only
};

// One node's answer to PREPARE: `status` not OK when it could not answer (unreachable, refused); else `reply`
// has one verdict per map.
struct NodeCheck {
  std::string node;
  bool local = false;
  Status status;
  protocol::PrepareReply reply;
};

// Called (from upload threads, one at a time) with a node's index in nodes() and the bytes it has acknowledged.
using DeliveryProgress = std::function<void(size_t node, uint64_t bytes)>;

class BatchDelivery {
 public:
  virtual ~BatchDelivery() = default;
  // The storage nodes, in the order checks and deliveries report them.
  virtual const std::vector<std::string>& nodes() const = 0;
  // Asks every node whether it can take the load (nothing is staged): one entry per node, in nodes() order.
  virtual void Check(const protocol::PrepareRequest& request, std::vector<NodeCheck>* checks) = 0;
  // Stores the batch `zip_path` on every node; `deliveries` gets one entry per node whatever happens. Returns an
  // error naming every node that failed (and those that stored the batch).
  virtual Status Deliver(const std::string& zip_path, const std::string& batch_id, bool synchronise_merge,
                         std::vector<NodeDelivery>* deliveries, const DeliveryProgress& progress) = 0;
};

}  // namespace planb
