// Delivers one batch zip to every storage node of the node list, in parallel (the design's "Uploading"): remote
// nodes get it over ZeroMQ (upload_client.h); when this node is in the list its copy is hard-linked into its own
// staging/ (the design's "move"; the zip itself is still being read by the uploads). The batch counts as stored
// once write_quorum nodes (by default every node) have acknowledged it; the others get it by catch-up.
// Thread-safety: one call at a time per Runtime (it starts and joins its own threads).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "host/ingest/batch_delivery.h"
#include "host/runtime.h"
#include "host/transfer/upload_client.h"

namespace planb {

// Sends `zip_path` to every node of runtime.config().cluster.node_list. With `synchronise_merge`, each node
// reports only once it has merged the batch (this node merges its own copy in this process). Returns an error
// naming every node that failed and why (and which ones did store the batch) when fewer than write_quorum nodes
// stored it; `deliveries` always gets one entry per node, in node-list order (the failed ones too, when the
// quorum was met).
// `progress`, when set, is called (from the upload threads, one at a time) with a node's index in node_list and
// the bytes it has acknowledged so far (DeliveryProgress, batch_delivery.h).
Status DistributeBatch(Runtime& runtime, zmq::context_t& context, const std::string& zip_path,
                       const std::string& batch_id, bool synchronise_merge, std::vector<NodeDelivery>* deliveries,
                       const DeliveryProgress& progress = nullptr);

// The upload settings the config asks for.
UploadSettings UploadSettingsFor(const ClusterConfig& cluster, bool synchronise_merge);

}  // namespace planb
