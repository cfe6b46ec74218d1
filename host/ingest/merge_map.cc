#include "host/ingest/merge_map.h"

#include "host/common/fault_point.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {

namespace {
// A map full (MDB_MAP_FULL) while merging: the batch does not fit in what the config allows, so it counts.
Status MapFull(const Status& s, const MapConfig& config) {
  return Status(Code::kFull, s.message() + " (max_store_size is " + std::to_string(config.max_store_size) +
                                 " bytes; raise max_store_size in [map." + config.name + "])");
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
  bool counted = false;
  Status recorded = RecordMergedBatch(shard_txn.get(), shard.meta(), batches, batch_id, now_ms, &counted);
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
  return Status::Ok();
}

}  // namespace planb
