#include "host/ingest/merge_map.h"

#include <limits>

#include "host/common/fault_point.h"
#include "host/ingest/delete_merge.h"
#include "host/ingest/tombstones.h"
#include "host/query/map_scan.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {

namespace {
// A map full (MDB_MAP_FULL) while merging: the batch does not fit in what the config allows, so it counts.
Status MapFull(const Status& s, const MapConfig& config) {
  return Status(Code::kFull, s.message() + " (max_store_size is " + std::to_string(config.max_store_size) +
                                 " bytes; raise max_store_size in [map." + config.name + "])");
}
// The earliest row time (RowTimeMs) of the batch; *any is false for a batch without rows.
Status EarliestRowTime(const MapEnv& batch, MDB_txn* batch_txn, int64_t* earliest, bool* any) {
  *any = false;
  *earliest = std::numeric_limits<int64_t>::max();
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(batch_txn, batch.data()));
  const PluginDescriptor& type = batch.plugins().type_descriptor();
  ScanStats stats;
  return ScanMapInTxn(
      batch, batch_txn, cursor.get(), ScanRequest(),
      [&](const Row& row, Bytes, Bytes) {
        *any = true;
        *earliest = std::min(*earliest, RowTimeMs(type, row));
        return true;
      },
      &stats);
}

// After the store merged a batch, in the same transaction: every tombstone later than the batch's earliest row
// takes again the rows it matches from that time on, so rows the batch brought that a deletion merged before it
// shadows go as if the batch had come first (loads and deletions commute). Most batches are newer than every
// deletion and cost one read of the "tombstones" table; a shard without deletions, not even that scan.
Status ApplyTombstones(const MapPlugins& plugins, const MapEnv& batch, MDB_txn* batch_txn, const MapEnv& shard,
                       MDB_txn* shard_txn, uint64_t* shadowed) {
  *shadowed = 0;
  MDB_dbi dbi = 0;
  bool found = false;
  PLANB_RETURN_IF_ERROR(OpenTombstones(shard_txn, /*create=*/false, &dbi, &found));
  if (!found) return Status::Ok();
  std::vector<Tombstone> tombstones;
  PLANB_RETURN_IF_ERROR(ReadTombstones(shard_txn, dbi, &tombstones));
  if (tombstones.empty()) return Status::Ok();
  int64_t earliest = 0;
  bool any = false;
  PLANB_RETURN_IF_ERROR(EarliestRowTime(batch, batch_txn, &earliest, &any).WithContext("reading the batch's times"));
  if (!any) return Status::Ok();
  for (const Tombstone& tombstone : tombstones) {
    if (tombstone.entry.time_ms <= earliest) continue;  // the batch's rows are all as new as the deletion
    DeleteMergeResult deleted;
    PLANB_RETURN_IF_ERROR(DeleteRowsBefore(plugins, shard, shard_txn, tombstone.entry, earliest, &deleted)
                              .WithContext("applying the tombstone of deletion " + tombstone.batch_id));
    *shadowed += deleted.rows_deleted;
  }
  return Status::Ok();
}

}  // namespace

Status MergeIntoShard(const MapPlugins& plugins, const MapEnv& batch, MDB_txn* batch_txn, const MapEnv& shard,
                      const std::string& batch_id, int64_t now_ms, MapMergeResult* result) {
  result->batch_at_fault = false;
  result->already_merged = false;
  Txn shard_txn;
  PLANB_RETURN_IF_ERROR(shard_txn.Begin(shard.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(shard_txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(shard_txn.get(), batches, batch_id, &result->already_merged));
  if (result->already_merged) return Status::Ok();  // the transaction aborts: nothing changes
  Cursor batch_cursor;
  PLANB_RETURN_IF_ERROR(batch_cursor.Open(batch_txn, batch.data()));
  Cursor shard_cursor;
  PLANB_RETURN_IF_ERROR(shard_cursor.Open(shard_txn.get(), shard.data()));
  MergeStats stats;
  ErrorBuffer error;
  Code code = plugins.store()->Merge(batch.MakeTable(batch_txn, batch_cursor.get()),
                                     shard.MakeTable(shard_txn.get(), shard_cursor.get()), &stats, &error);
  shard_cursor.Close();
  if (code != Code::kOk) {
    // What the store refuses is the batch's rows (an I/O error aside, counted as the disk's by the caller).
    result->batch_at_fault = true;
    Status failed = Status::FromPlugin(code, error);
    if (code == Code::kFull) failed = MapFull(failed, plugins.config());
    return failed;  // the write transaction aborts: the shard is as it was
  }
  // In the same transaction as the rows: the version can never disagree with them. MDB_MAP_FULL here or at the
  // commit (where LMDB writes the free list) is still the batch's rows not fitting.
  uint64_t shadowed = 0;
  Status recorded = ApplyTombstones(plugins, batch, batch_txn, shard, shard_txn.get(), &shadowed);
  bool counted = false;
  if (recorded.ok()) recorded = RecordMergedBatch(shard_txn.get(), shard.meta(), batches, batch_id, now_ms, &counted);
  if (recorded.ok()) {
    FaultPoint("merge.before_commit");
    recorded = shard_txn.Commit();
  }
  if (recorded.code() == Code::kFull) {
    result->batch_at_fault = true;
    recorded = MapFull(recorded, plugins.config());
  }
  PLANB_RETURN_IF_ERROR(recorded);
  result->rows_read = stats.rows_read;
  result->rows_shadowed = shadowed;
  return Status::Ok();
}

}  // namespace planb
