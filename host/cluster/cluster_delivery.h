// The load job's BatchDelivery over the node_list: PREPARE to every storage node (this node, when listed, checks
// itself), then each batch to every node with DistributeBatch (batch_distributor.h).
// Thread-safety: one call at a time; it starts and joins its own threads.
#pragma once

#include <string>
#include <vector>

#include <zmq.hpp>

#include "host/ingest/batch_delivery.h"
#include "host/runtime.h"

namespace planb {

class ClusterDelivery final : public BatchDelivery {
 public:
  // REQUIRES: `runtime` outlives this, and its config has a node_list.
  explicit ClusterDelivery(Runtime& runtime) : runtime_(runtime) {}

  const std::vector<std::string>& nodes() const override { return runtime_.config().cluster.node_list; }
  void Check(const protocol::PrepareRequest& request, std::vector<NodeCheck>* checks) override;
  Status Deliver(const std::string& zip_path, const std::string& batch_id, bool synchronise_merge,
                 std::vector<NodeDelivery>* deliveries, const DeliveryProgress& progress) override;

 private:
  Runtime& runtime_;
  zmq::context_t context_;
};

}  // namespace planb
