// Merges staged batches into shards, oldest first, one at a time (the design's "Plan B Merge Processor").
// For each batch: staging/<seq> is renamed to merging/<seq>; each map in it becomes the map's shard when there
// is none yet (moved into place), or is merged into the shard in one LMDB write transaction with the store
// type's semantics; merging/<seq> is deleted only after every map committed. A crash at any point is repaired
// by the next run: a batch left in merging/ is merged again, which changes nothing already applied.
// Processes sharing a home take turns through merging/.lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "host/runtime.h"

namespace planb {

struct MergeReport {
  uint64_t batches = 0;
  std::map<std::string, uint64_t> rows_merged;  // rows read from batches, per map
};

class MergeProcessor {
 public:
  explicit MergeProcessor(Runtime& runtime) : runtime_(runtime) {}

  // Merges everything in merging/ and staging/ now. Stops at the first batch that fails (it stays queued).
  Status MergePending(MergeReport* report);

 private:
  Status MergeBatch(const std::string& batch_dir, MergeReport* report);
  Status MergeMap(const std::string& map_dir, const std::string& map, MergeReport* report);

  Runtime& runtime_;
};

}  // namespace planb
