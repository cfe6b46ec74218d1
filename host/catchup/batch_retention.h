// retained/: the zips of the batches a storage node merged, kept for batch_retention (and within
// batch_retention_bytes) so that a peer that missed a batch can fetch it from here (catch-up, docs/storage-nodes.md).
// A zip is moved here by the merge that unstaged it, in place of its deletion, so keeping it costs no copy.
// Files are named by the XXH3-128 of the batch id ("<32 hex digits>.zip"): ids are the senders', names ours.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "host/config/config.h"
#include "host/storage/home.h"
#include "planb/status.h"

namespace planb {

// Whether this process keeps merged batches: a storage node of a node_list (a single node has no peer to serve)
// with a batch_retention and a batch_retention_bytes above 0.
bool RetainsMergedBatches(const ClusterConfig& cluster);

// retained/<hash>.zip for `batch_id`.
std::string RetainedBatchPath(const Home& home, std::string_view batch_id);

// Moves the merged batch's zip `zip_path` (in staging/, same filesystem) to RetainedBatchPath, durably (both
// directories synced), replacing a zip of the same id retained before, and stamps it with the current time (its
// retention starts at the merge, not at the upload).
Status RetainMergedBatch(const Home& home, const std::string& zip_path, std::string_view batch_id);

struct RetentionPruned {
  uint64_t files = 0;
  uint64_t bytes = 0;
};
// Deletes the retained zips older than `keep_ms` at `now_ms`, then the oldest until the rest hold at most
// `keep_bytes`. Anything in retained/ not named like a retained zip is left alone.
Status PruneRetainedBatches(const Home& home, int64_t keep_ms, uint64_t keep_bytes, int64_t now_ms,
                            RetentionPruned* pruned);

}  // namespace planb
