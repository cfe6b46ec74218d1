#include "host/ingest/merge_map.h"

#include <limits>

#include "host/common/fault_point.h"
#include "host/ingest/delete_merge.h"
#include "host/ingest/tombstones.h"
#include "host/storage/content_version.h"
#include "host/storage/map_full.h"
#include "planb/lmdb.h"

namespace planb {

namespace {
// A map full (MDB_MAP_FULL) while merging: the batch does not fit in what the config allows, so it counts. Said
// naming the shard's file and the limit (map_full.h); another kFull of the store (a transaction too big) keeps
// its text with the same advice.
Status MapFull(const Status& s, const MapConfig& config, const MapEnv& shard) {
  if (IsMapFull(s)) return DescribeMapFull(s, config, "the shard", shard.path() + "/data.mdb");
  return Status(Code::kFull, s.message() + " (max_store_size is " + std::to_string(config.max_store_size) +
                                 " bytes; raise max_store_size in [map." + config.name + "])");
}
// The replacement's part of the transaction, before the batch's rows: every row at or before its newest goes, and
// its tombstone (time newest + 1, so its own rows are exempt) shadows such rows of batches that come later. A
// replacement that a later one outranks (newer, or as new with a higher batch id) changes no row: the map holds
// the later one's rows in every order. *outranked says so.
Status ApplyReplacement(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const std::string& batch_id,
                        int64_t latest_ms, int64_t now_ms, bool* outranked) {
  *outranked = false;
  MDB_dbi dbi = 0;
  bool found = false;
  PLANB_RETURN_IF_ERROR(OpenTombstones(txn, /*create=*/true, &dbi, &found));
  Tombstone mine;
  mine.batch_id = batch_id;
  mine.merged_ms = now_ms;
  mine.replacement = true;
  mine.entry.all = true;
  mine.entry.time_ms = ReplacementTombstoneTime(latest_ms);
  std::vector<Tombstone> tombstones;
  PLANB_RETURN_IF_ERROR(ReadTombstones(txn, dbi, &tombstones));
  for (const Tombstone& t : tombstones) {
    if (OutranksReplacement(t, mine.entry.time_ms, batch_id)) *outranked = true;
  }
  if (!*outranked) {
    DeleteMergeResult deleted;
    PLANB_RETURN_IF_ERROR(
        DeleteRowsBefore(plugins, shard, txn, mine.entry, std::numeric_limits<int64_t>::min(), &deleted));
    // Identity tombstones of rows at or before the replacement's newest: it shadows those rows itself, and its
    // own rows are exempt (they must not lose to a deletion of an older value).
    MDB_dbi shadowed = 0;
    bool has_shadowed = false;
    PLANB_RETURN_IF_ERROR(OpenShadowed(txn, /*create=*/false, &shadowed, &has_shadowed));
    if (has_shadowed) PLANB_RETURN_IF_ERROR(DropShadowedBefore(txn, shadowed, mine.entry.time_ms));
  }
  return RecordTombstone(txn, dbi, mine);
}

Status MergeInOneTxn(const MapPlugins& plugins, const MapEnv& batch, MDB_txn* batch_txn, const MapEnv& shard,
                     const std::string& batch_id, int64_t now_ms, MapMergeResult* result,
                     const ReplacementMerge* replacement, const std::vector<ShadowedRow>* shadowed) {
  result->already_merged = false;
  Txn shard_txn;
  PLANB_RETURN_IF_ERROR(shard_txn.Begin(shard.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(shard_txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(shard_txn.get(), batches, batch_id, &result->already_merged));
  if (result->already_merged) return Status::Ok();  // the transaction aborts: nothing changes
  bool outranked = false;
  if (replacement != nullptr) {
    PLANB_RETURN_IF_ERROR(ApplyReplacement(plugins, shard, shard_txn.get(), batch_id, replacement->latest_ms,
                                           now_ms, &outranked));
  }
  if (shadowed != nullptr) {
    for (const ShadowedRow& row : *shadowed) {
      DeleteMergeResult deleted;
      PLANB_RETURN_IF_ERROR(ShadowIdentity(plugins, shard, shard_txn.get(), row, now_ms, &deleted));
    }
  }
  Cursor batch_cursor;
  PLANB_RETURN_IF_ERROR(batch_cursor.Open(batch_txn, batch.data()));
  Cursor shard_cursor;
  PLANB_RETURN_IF_ERROR(shard_cursor.Open(shard_txn.get(), shard.data()));
  MergeStats stats;
  ErrorBuffer error;
  Code code = outranked ? Code::kOk
                        : plugins.store()->Merge(batch.MakeTable(batch_txn, batch_cursor.get()),
                                                 shard.MakeTable(shard_txn.get(), shard_cursor.get()), &stats, &error);
  shard_cursor.Close();
  if (code != Code::kOk) {
    // What the store refuses is the batch's rows (an I/O error aside, counted as the disk's by the caller).
    result->batch_at_fault = true;
    return Status::FromPlugin(code, error);  // the write transaction aborts: the shard is as it was
  }
  // In the same transaction as the rows: the version can never disagree with them. MDB_MAP_FULL here or at the
  // commit (where LMDB writes the free list) is still the batch's rows not fitting.
  bool counted = false;
  Status recorded = RecordMergedBatch(shard_txn.get(), shard.meta(), batches, batch_id, now_ms, &counted);
  if (recorded.ok()) {
    FaultPoint("merge.before_commit");
    recorded = shard_txn.Commit();
  }
  if (recorded.code() == Code::kFull) result->batch_at_fault = true;
  PLANB_RETURN_IF_ERROR(recorded);
  result->rows_read = stats.rows_read;
  return Status::Ok();
}

}  // namespace

Status MergeIntoShard(const MapPlugins& plugins, const MapEnv& batch, MDB_txn* batch_txn, const MapEnv& shard,
                      const std::string& batch_id, int64_t now_ms, MapMergeResult* result,
                      const ReplacementMerge* replacement, const std::vector<ShadowedRow>* shadowed) {
  result->batch_at_fault = false;
  Status s = MergeInOneTxn(plugins, batch, batch_txn, shard, batch_id, now_ms, result, replacement, shadowed);
  // MDB_MAP_FULL anywhere in the transaction (the replacement's deletions, identity tombstones, the rows, the
  // version, the commit's free list) is the batch not fitting; another kFull the store returned is the rows' too.
  if (IsMapFull(s) || (result->batch_at_fault && s.code() == Code::kFull)) {
    result->batch_at_fault = true;
    return MapFull(s, plugins.config(), shard);
  }
  return s;
}

}  // namespace planb
