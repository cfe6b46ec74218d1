// Maintenance of one shard's rows (the design's "Condensation" and "Data Retention"): the store type's
// Store::Maintain for what the map's config asks (condense, condense_after, retain_for), then the key scheme's
// sweep of keys left without rows, and the pruning of old rows of the merged-batches table (content_version.h),
// in one write transaction of the shard, which also records when rows were maintained (maintenance_marks.h). A
// dry run does the same work and aborts the transaction, so what it reports is exactly what a real run would
// remove. Nothing to do: nothing is written.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "host/config/config.h"
#include "host/storage/map_env.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

struct RowsMaintenance {
  bool asked = false;  // the map's config asks for condensation or retention
  MaintainStats stats;
  uint64_t keys_swept = 0;  // keys the scheme forgot (lookup tables)
  uint64_t batches_pruned = 0;  // rows of the merged-batches table pruned
  uint64_t tombstones_pruned = 0;  // deletions' tombstones (and identity tombstones) pruned with them (tombstones.h)
};

// What the config asks of the rows at `now_ms`: cut-offs are now - condense_after and now - retain_for
// (saturating at the smallest time). `asked` false when it asks for nothing.
MaintainRequest RowsRequest(const MapConfig& config, int64_t now_ms, bool* asked);

// Applies the map's condensation and retention to `shard` at `now_ms`, and prunes merged-batch records older than
// `batches_keep_ms` (ClusterConfig::MergedBatchesKeepMs) except `keep_batch_ids` (this node's staged and quarantined batches; null: prune nothing,
// e.g. in a snapshot copy). REQUIRES: no other write transaction of the shard runs meanwhile (the caller holds the
// merge lock). Errors name the shard.
Status MaintainShardRows(const MapEnv& shard, int64_t now_ms, bool dry_run,
                         const std::set<std::string, std::less<>>* keep_batch_ids, int64_t batches_keep_ms,
                         RowsMaintenance* out);

}  // namespace planb
