// Merges staged batches into shards, oldest first (the design's "Plan B Merge Processor"). Up to merge_threads
// batches merge at once on threads of their own, one writer per shard and each map's batches in staging order
// (merge_schedule.h); with merge_threads = 1, one at a time.
// For each staged zip N: merging/ is scratch, so it is emptied first; the zip is extracted into merging/N/; each
// map in it is merged into the map's shard in one LMDB write transaction with the store type's semantics (the
// batch's file, which may have come over the network, is only ever read, never written or kept: a map's first
// batch is copied row by row into a fresh shard built in merging/N/, which is then moved into shards/); staging/N.zip
// is deleted (durably) only after every map committed, and merging/N/ after that. A crash at any point is repaired
// by the next run: the zip is still staged, so the batch is extracted and merged again, which changes nothing
// already applied (merges are idempotent). Processes sharing a home take turns through merging/.lock.
// Each merge records the batch's id (from its manifest) in the shard's content version (content_version.h) in the
// same write transaction as the rows (for a first batch too). A batch merged again after a crash is recognised by
// its id, so the version does not move either.
// A deletion batch's map (`<map>/delete`) is merged by DeleteFromShard (delete_merge.h) in the same turn and order
// as any batch; a map without a shard yet has no rows to delete, and nothing is recorded for it (no shard is made).
// A batch whose merge fails because of its contents (not this node's config, shards or disk: see Blame), or kills
// the process, kMaxMergeAttempts times is moved to quarantine/ (quarantine.h); later batches touching its maps
// are held back, batches of other maps go on.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "host/ingest/merge_attempts.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/runtime.h"
#include "host/transfer/batch_zip.h"

namespace planb {

struct MergeReport {
  uint64_t batches = 0;
  uint64_t last_sequence = 0;                   // the highest batch merged (0: none); see `merged`
  std::set<uint64_t> merged;                    // every batch merged by this run (not a range: a failing batch
                                                // holds back only its maps, later batches of others merge)
  std::map<std::string, uint64_t> rows_merged;  // rows read from batches, per map
  std::map<std::string, uint64_t> rows_deleted;  // rows deleted by deletion batches, per map
  // Rows of loads older than a deletion merged before them, deleted again by its tombstone, per map (only maps
  // where any were: a user who loads rows again after deleting them must give them a later time).
  std::map<std::string, uint64_t> rows_shadowed;
  std::vector<QuarantinedBatch> quarantined;    // moved to quarantine/ by this run
  std::vector<HeldBatch> held;                  // left staged behind a quarantined or failing batch
  std::map<uint64_t, std::string> failed;       // batches whose merge failed in this run (they stay staged)
};

class MergeProcessor {
 public:
  // `threads`: batches merged at once (merge_schedule.h says which may go side by side); 0 takes the config's
  // merge_threads. At most kMaxMergeSlots.
  explicit MergeProcessor(Runtime& runtime, UnzipLimits limits = {}, int threads = 0);

  // Merges everything staged now, oldest first, except where order forbids it: a batch that fails stays staged
  // (or goes to quarantine/ at its kMaxMergeAttempts-th attempt) and holds back the later batches that touch its
  // maps, transitively; batches of other maps go on. Returns the first failure (naming the batch) or OK; the
  // report says what was quarantined, held and failed. When `stop` is given and becomes true, stops before the
  // next map or batch (the batch in hand stays staged and is merged again next time).
  Status MergePending(MergeReport* report, const std::atomic<bool>* stop = nullptr);

 private:
  // Where a failed merge's cause lies: the batch's contents (counted towards quarantine: unreadable zip, a layout
  // or rows the store refuses, rows that do not fit the map's max_store_size) or this node's own state (its
  // config, a shard that does not open, its disk: not counted; the batch waits until that is repaired).
  enum class Blame { kBatch, kNode };

  // One staged batch's turn in a run: what the run knew before, and how the attempt (on a worker thread) ended.
  struct Attempt {
    StagedBatch batch;
    std::vector<std::string> maps;
    bool maps_known = false;
    MergeAttempts before;  // its attempts when the run began
    int slot = -1;         // its in-flight record (merge_attempts.h)
    Status status;
    bool stopped = false;
    Blame blame = Blame::kBatch;
    std::vector<std::string> failed_maps;  // maps whose part failed because of the batch (the others merged)
    MergeReport part;  // what the attempt merged, folded into the run's report
  };
  // After a worker ended `turn`: folds its report in, and records its outcome (attempts, quarantine, blocks).
  Status RecordAttempt(Attempt& turn, MergeReport* report, MergeBlocks* blocks, Status* first_failure);
  // `slot` and `count`: the attempt's in-flight record, rewritten to name each map as its merge begins. A map whose
  // part fails because of the batch goes into `failed_maps` and the other maps still merge.
  Status MergeBatch(uint64_t sequence, const std::string& zip_path, int slot, int count, MergeReport* report,
                    const std::atomic<bool>* stop, bool* stopped, Blame* blame, std::vector<std::string>* failed_maps);
  Status Quarantine(const std::string& zip_path, const std::vector<std::string>& maps, bool maps_known,
                    const MergeAttempts& attempts, MergeReport* report);
  // `replace`: the batch's rows become the map's whole content (merge_map.h, ReplacementMerge).
  Status MergeMap(const std::string& map_dir, const std::string& map, const std::string& batch_id, bool replace,
                  MergeReport* report, Blame* blame);
  Status MergeDeletion(const std::string& map_dir, const std::shared_ptr<const MapPlugins>& plugins,
                       const std::string& batch_id, MergeReport* report, Blame* blame);

  Runtime& runtime_;
  UnzipLimits limits_;
  int threads_;
};

}  // namespace planb
