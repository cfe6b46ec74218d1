// One map of one extracted batch merged into an open shard, with everything a merge applies beside the store
// type's rows: the shard's tombstones (a batch older than a deletion merged before it loses what the deletion
// shadows, batch_filter.h), a replacement's rule (merge_map.h, ReplacementMerge) and the identity tombstones of
// deletions by value. Split out of MergeProcessor so that a reader applying a snapshot diff (the batches merged
// since its snapshot, host/snapshot/snapshot_diff_apply.h) merges them exactly as the storage node did: the same
// batches on the same rows give the same rows, whoever merges them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "host/storage/map_env.h"
#include "planb/status.h"

namespace planb {

struct BatchMapMerge {
  uint64_t rows_read = 0;      // rows read from the batch
  uint64_t rows_shadowed = 0;  // rows a deletion merged before took out of the batch (0 when already merged)
  // On failure: the batch's rows are at fault (the store refused them, they do not fit), not the shard or disk.
  bool batch_at_fault = false;
};

// Merges `batch` (an extracted batch's `<map>/`, opened read-only by the caller with `plugins`, which checks its
// meta; read in `batch_txn`) into `shard` in one write transaction recording `batch_id` (merge_map.h,
// MergeIntoShard), at `now_ms`. `fresh_shard`: the shard was created for this batch (it has no tombstones to
// read). `replace`: the batch is a replacement. Scratch `batch.path() + ".filtered"` is used and removed. Errors
// about the shard name it `shard_name` (its path once in place: a fresh shard is built elsewhere).
// REQUIRES: no other write transaction of `shard` runs in this process.
Status MergeBatchMap(const std::shared_ptr<const MapPlugins>& plugins, const MapEnv& batch, MDB_txn* batch_txn,
                     const MapEnv& shard, const std::string& shard_name, bool fresh_shard,
                     const std::string& batch_id, bool replace, int64_t now_ms, BatchMapMerge* out);

}  // namespace planb
