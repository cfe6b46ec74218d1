// A storage node's side of snapshot diffs (SNAPSHOT_SINCE, docs/snapshots.md): instead of a whole copy of a shard,
// the batches merged into it since the requester's snapshot, when this node can name them and still holds them.
//
// Which batches: the shard records each batch it merged with its merge time (content_version.h). Walking back
// from the shard's version along those records, newest first, and taking each batch's id out of the version,
// reaches the requester's version after exactly (shard's batches - requester's batches) steps when the requester's
// snapshot is a point of this shard's history; the batches walked over are the diff. When it is not (the snapshot
// came from a node that merged in another order, records were pruned, clocks went back between merges) the walk
// ends elsewhere and the whole snapshot is sent instead. Nothing new is stored: the change log is the shard's own
// records and the zips kept for catch-up in retained/ (batch_retention bounds how far back a diff reaches).
//
// A diff is made only when it is exactly what merging it gives: the map has no retention or condensation (those
// trim each snapshot copy by the time it is made), the shard's maintenance mark "last_condensed" is the
// requester's (maintenance changes rows, not the version), and every batch is retained. It is sent only when
// smaller than the shard. The diff file of a map is reused while its versions and mark are the same, so readers
// refreshing at once cost one; a newer one replaces it (unlinked at the next replacement, as SnapshotSource does).
// Thread-safety: Prepare calls are serialised (the node runs them on the receiver's snapshot worker).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "host/receiver/snapshot_offer.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

// The batches merged into the shard of `shard` after it was at `have`, oldest first, read in `txn`: `*found`
// false when `have` is not a point of the shard's recorded history within kMaxDiffBatches (then `why` says so).
Status BatchesMergedSince(MDB_txn* txn, const MapEnv& shard, const ContentVersion& have, std::vector<std::string>* ids,
                          bool* found, std::string* why);

class SnapshotDiffSource {
 public:
  // REQUIRES: `runtime` outlives the source.
  explicit SnapshotDiffSource(Runtime& runtime) : runtime_(runtime) {}
  SnapshotDiffSource(const SnapshotDiffSource&) = delete;
  SnapshotDiffSource& operator=(const SnapshotDiffSource&) = delete;

  // A diff of `map` (canonical or not) from `since` to the shard's version now, in outgoing/: `out->diff` true.
  // When no diff can be made, OK with `out->diff` false and `*why_whole` saying why (the caller sends the whole
  // snapshot, or not_modified, as for SNAPSHOT). Errors: the local disk (kIOError, kFull), a shard that does not
  // read (naming it).
  Status Prepare(const std::string& map, const SnapshotSince& since, PreparedSnapshot* out, std::string* why_whole);

 private:
  struct MadeDiff {
    SnapshotSince since;
    PreparedSnapshot prepared;
  };
  // Builds the diff file of `map` (canonical) for `ids` into outgoing/; `scratch` is removed after.
  Status MakeDiff(const std::string& map, const SnapshotSince& since, const ContentVersion& to,
                  const std::vector<std::string>& ids, PreparedSnapshot* out, std::string* why_whole);

  Runtime& runtime_;
  std::mutex mutex_;
  std::map<std::string, MadeDiff> latest_;      // per map: the diff made last
  std::map<std::string, std::string> retired_;  // per map: the diff it replaced, unlinked at the next one
  uint64_t made_ = 0;                           // diffs made: names unique within a millisecond
};

}  // namespace planb
