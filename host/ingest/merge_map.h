// The write transaction of a merge (the design's "Plan B Merge Processor", one map of one batch): every row of an
// open batch merged into its shard with the store type's semantics, the batch's id recorded in the shard's content
// version (content_version.h) in the same transaction, and the commit. Split out of MergeProcessor (which
// extracts, opens, unstages and moves first shards into place around it) so that bench/merge_bench can time the
// transaction alone beside raw LMDB inserting the same rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/ingest/delete_merge.h"
#include "host/storage/map_env.h"
#include "planb/status.h"

namespace planb {

struct MapMergeResult {
  uint64_t rows_read = 0;  // rows read from the batch
  // The shard had recorded the batch already (merged before a crash, or delivered twice): nothing was merged.
  bool already_merged = false;
  // On failure: the batch's rows are at fault (the store refused them, or they do not fit max_store_size), not
  // this node's shard or disk. MergeProcessor counts such failures towards quarantine.
  bool batch_at_fault = false;
};

// Merges the rows of `batch` (read in `batch_txn`, a read transaction of its env) into `shard` with the store type
// of `plugins` (the map's, as the config has it now) in one write transaction, records `batch_id` in it and
// commits. On failure the transaction aborts and the shard is as it was; messages name no file (the caller says
// which shard).
// Exactly once: a batch the shard has recorded (in the same transaction as its rows, so a record means its rows
// are there) is not merged again, so additive merges never count a batch twice, and a batch delivered again
// after newer ones does not bring back older values. Records are kept for kMergedBatchesKeepMs at least
// (pruned by maintenance; batches still staged or quarantined are always kept).
// REQUIRES: no other write transaction of `shard` runs in this process (merges of a shard take turns).
// A replacement (`load --replace`, `replacement` given): in the same transaction and before the batch's rows, every
// row of the shard at or before the batch's newest row time goes and a tombstone of them is kept (tombstones.h),
// unless a replacement merged before outranks this one; lookups see the old content or the new, never a mix.
// `shadowed`: rows a deletion by value took out of the batch first (batch_filter.h): their identity tombstones
// are recorded and the shard's older rows of those identities go, in the same transaction.
struct ReplacementMerge {
  int64_t latest_ms = 0;  // the newest row time of the replacement's batch as it was made (BatchTimeSpan)
};
Status MergeIntoShard(const MapPlugins& plugins, const MapEnv& batch, MDB_txn* batch_txn, const MapEnv& shard,
                      const std::string& batch_id, int64_t now_ms, MapMergeResult* result,
                      const ReplacementMerge* replacement = nullptr,
                      const std::vector<ShadowedRow>* shadowed = nullptr);

}  // namespace planb
