#include "host/ingest/delete_merge.h"

#include <limits>
#include <memory>

#include "host/common/fault_point.h"
#include "host/ingest/tombstones.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {

Status DeleteRowsBefore(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const DeleteEntry& entry,
                        int64_t from_ms, DeleteMergeResult* result) {
  if (from_ms >= entry.time_ms) return Status::Ok();  // no row time lies in [from_ms, time_ms)
  const PluginDescriptor& type = plugins.type_descriptor();
  std::unique_ptr<Expression> where;
  ScanRequest request;
  const int64_t before_ms = entry.time_ms;
  auto in_time = [&type, from_ms, before_ms](const Row& row) {
    const int64_t t = RowTimeMs(type, row);
    return t >= from_ms && t < before_ms;
  };
  if (entry.all) {
    request.filter = in_time;
  } else {
    const std::vector<FieldSpec> fields = MapFields(type, plugins.config());
    Status parsed = Expression::Parse(entry.where, fields.data(), static_cast<uint32_t>(fields.size()), &where);
    if (!parsed.ok()) {
      result->batch_at_fault = true;
      return parsed.WithContext("delete entry of map " + plugins.config().name);
    }
    request.bounds = where->Bounds();
    request.key_prefix = where->KeyPrefix();
    request.filter = [&where, &in_time](const Row& row) { return in_time(row) && where->Matches(row); };
  }

  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, shard.data()));
  const Table table = shard.MakeTable(txn, cursor.get());
  const GuardedStore& store = *plugins.store();
  ErrorBuffer error;
  Status failed;
  ScanStats stats;
  uint64_t deleted = 0;
  PLANB_RETURN_IF_ERROR(ScanMapInTxn(
      shard, txn, cursor.get(), request,
      [&](const Row&, Bytes lmdb_key, Bytes value) {
        const Code code = store.DeleteRow(table, lmdb_key, value, &error);
        if (code != Code::kOk) {
          failed = Status::FromPlugin(code, error);
          return false;
        }
        ++deleted;
        return true;
      },
      &stats));
  result->rows_examined += stats.rows_examined;
  result->rows_deleted += deleted;
  PLANB_RETURN_IF_ERROR(failed.WithContext("deleting a row of map " + plugins.config().name));
  if (deleted > 0) {
    Code code = store.FinishDeletes(table, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext("finishing the deletes");
    // Keys whose last row went: a lookup table's ids and the like, so the scheme's tables never leak.
    if (plugins.scheme() != nullptr) {
      uint64_t swept = 0;
      code = plugins.scheme()->SweepUnusedKeys(table, type.key_suffix_size, &swept, &error);
      if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext("sweeping unused keys");
      result->keys_swept += swept;
    }
  }
  return Status::Ok();
}

Status DeleteFromShard(const MapPlugins& plugins, const MapEnv& shard, const DeleteEntry& entry,
                       const std::string& batch_id, int64_t now_ms, DeleteMergeResult* result) {
  *result = DeleteMergeResult();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(txn.get(), batches, batch_id, &result->already_merged));
  if (result->already_merged) return Status::Ok();  // the transaction aborts: nothing changes

  PLANB_RETURN_IF_ERROR(
      DeleteRowsBefore(plugins, shard, txn.get(), entry, std::numeric_limits<int64_t>::min(), result));
  // The tombstone shadows matching older rows of batches merged after this one, whatever order they come in.
  MDB_dbi tombstones = 0;
  bool found = false;
  PLANB_RETURN_IF_ERROR(OpenTombstones(txn.get(), /*create=*/true, &tombstones, &found));
  Tombstone tombstone;
  tombstone.batch_id = batch_id;
  tombstone.merged_ms = now_ms;
  tombstone.entry = entry;
  PLANB_RETURN_IF_ERROR(RecordTombstone(txn.get(), tombstones, tombstone));
  bool counted = false;
  PLANB_RETURN_IF_ERROR(RecordMergedBatch(txn.get(), shard.meta(), batches, batch_id, now_ms, &counted));
  FaultPoint("merge.before_commit");
  return txn.Commit();
}

}  // namespace planb
