// Merges staged batches into shards, oldest first, one at a time (the design's "Plan B Merge Processor").
// For each staged zip N: merging/ is scratch, so it is emptied first; the zip is extracted into merging/N/; each
// map in it becomes the map's shard when there is none yet (moved into place), or is merged into the shard in
// one LMDB write transaction with the store type's semantics; staging/N.zip is deleted (durably) only after
// every map committed, and merging/N/ after that. A crash at any point is repaired by the next run: the zip is
// still staged, so the batch is extracted and merged again, which changes nothing already applied (merges are
// idempotent). Processes sharing a home take turns through merging/.lock.
// Each merge records the batch's id (from its manifest) in the shard's content version (content_version.h) in the
// same write transaction as the rows; a batch that becomes the shard has it recorded before the rename. A batch
// merged again after a crash is recognised by its id, so the version does not move either.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "host/runtime.h"
#include "host/transfer/batch_zip.h"

namespace planb {

struct MergeReport {
  uint64_t batches = 0;
  uint64_t last_sequence = 0;                   // the last batch merged (0: none)
  std::map<std::string, uint64_t> rows_merged;  // rows read from batches, per map
};

class MergeProcessor {
 public:
  explicit MergeProcessor(Runtime& runtime, UnzipLimits limits = {}) : runtime_(runtime), limits_(limits) {}

  // Merges everything staged now, oldest first. Stops at the first batch that fails (it stays staged; the
  // error names the batch) and, when `stop` is given and becomes true, before the next map or batch (the batch
  // in hand stays staged and is merged again next time).
  Status MergePending(MergeReport* report, const std::atomic<bool>* stop = nullptr);

 private:
  Status MergeBatch(uint64_t sequence, const std::string& zip_path, MergeReport* report,
                    const std::atomic<bool>* stop, bool* stopped);
  Status MergeMap(const std::string& map_dir, const std::string& map, const std::string& batch_id, MergeReport* report);

  Runtime& runtime_;
  UnzipLimits limits_;
};

}  // namespace planb
