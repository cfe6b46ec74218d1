// A shard's content version: which batches have been merged into it, in a form that means the same on every
// storage node (LMDB transaction ids do not). Snapshots compare it: equal versions = the same batches merged.
//
// On-disk format (part of kShardFormat's layout; bump it on change):
//   table "batches"   key: batch id (the manifest's `id`, e.g. "node1a/1700000000000-42-0"), value: i64 big-endian
//                     merge time in ms. One row per batch merged into the shard (less those pruned).
//   meta "content_version"  text "<batches> <digest as 16 hex digits>": the number of batches ever merged and the
//                     XOR of XXH3-64 of every batch id. Absent = {0, 0} (a shard written before versions existed).
// Both are written in the merge's own write transaction, so the version can never disagree with the rows.
// Maintenance prunes old rows of "batches" (PruneMergedBatches) and leaves the version alone, so "batches" may
// hold fewer rows than the version counts: the rows only serve to recognise a batch merged again.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "host/config/merged_batch_records.h"
#include "planb/status.h"

namespace planb {

inline constexpr const char* kBatchesTableName = "batches";
inline constexpr const char* kContentVersionKey = "content_version";

struct ContentVersion {
  uint64_t batches = 0;  // distinct batches merged
  uint64_t digest = 0;   // XOR of XXH3-64(batch id)

  bool empty() const { return batches == 0 && digest == 0; }
  bool operator==(const ContentVersion& o) const { return batches == o.batches && digest == o.digest; }
  bool operator!=(const ContentVersion& o) const { return !(*this == o); }
  // "12 00ab34cd56ef7890" (the meta text) and back; Parse refuses anything else.
  std::string ToString() const;
  static bool Parse(std::string_view text, ContentVersion* out);
};

// Reads the version from `meta` in `txn`; {0, 0} when the key is absent. kCorruption when it does not parse.
Status ReadContentVersion(MDB_txn* txn, MDB_dbi meta, ContentVersion* out);

// Whether `batch_id` is recorded in `batches` (read in `txn`): a batch merged into this shard before, within
// the pruning window (kMergedBatchesKeepMs).
Status IsBatchRecorded(MDB_txn* txn, MDB_dbi batches, std::string_view batch_id, bool* recorded);

// In the merge's write transaction `txn`: records `batch_id` in `batches` and updates the version in `meta`,
// unless the batch is already recorded (a merge repeated after a crash, or a batch delivered twice), in which case
// nothing changes and `*counted` is false. An empty batch_id is kInvalidArgument.
Status RecordMergedBatch(MDB_txn* txn, MDB_dbi meta, MDB_dbi batches, std::string_view batch_id, int64_t now_ms,
                         bool* counted);

// Writes `version` as the meta's content version in the write transaction `txn`.
Status WriteContentVersion(MDB_txn* txn, MDB_dbi meta, const ContentVersion& version);

// A shard that replaces another (load --replace) carries on its record: every row of `from_batches` (read in
// `from_txn`) is put into `to_batches` and `from_meta`'s content version written into `to_meta` (in the write
// transaction `to_txn`), so a batch the old shard merged is still recognised and the version keeps counting.
Status CarryMergedBatches(MDB_txn* from_txn, MDB_dbi from_meta, MDB_dbi from_batches, MDB_txn* to_txn,
                          MDB_dbi to_meta, MDB_dbi to_batches);

// Rows of "batches" merged longer ago than kMergedBatchesKeepMs (host/config/merged_batch_records.h) are pruned
// (docs/maintenance.md).

// In a write transaction `txn` of the shard: deletes the rows of `batches` merged before `before_ms` (typically
// now - kMergedBatchesKeepMs), except those whose id is in `keep_ids` (this node's staged and quarantined
// batches). The content version in `meta` is left as it is: it stays what every node that merged the same batches
// has. `*pruned` gets the number of rows deleted. kCorruption (naming the id) for a row whose value is not an
// 8-byte merge time: the caller aborts the transaction, so nothing is deleted.
Status PruneMergedBatches(MDB_txn* txn, MDB_dbi meta, MDB_dbi batches,
                          const std::set<std::string, std::less<>>& keep_ids, int64_t before_ms, uint64_t* pruned);

}  // namespace planb
