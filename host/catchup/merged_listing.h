// What a storage node tells a peer that asks which batches it merged into a map (LIST_MERGED, docs/protocol.md):
// the ids recorded in the shard's "batches" table (content_version.h) in id order, a page at a time, each with its
// merge time and whether its zip is retained (batch_retention.h) so the peer can fetch it.
#pragma once

#include "host/runtime.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

// Fills `reply` for `request` from this node's shard of `request.map` at the current time. kNotFound for a map
// the config does not have; a map without a shard (or without recorded batches) answers an empty list at
// version {0, 0}.
Status ListMergedBatches(Runtime& runtime, const protocol::ListMergedRequest& request, protocol::MergedList* reply);

}  // namespace planb
