#include "host/ingest/delete_merge.h"

#include <memory>

#include "host/common/fault_point.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"
#include "host/storage/content_version.h"
#include "planb/lmdb.h"

namespace planb {


Status DeleteFromShard(const MapPlugins& plugins, const MapEnv& shard, const DeleteEntry& entry,
                       const std::string& batch_id, int64_t now_ms, DeleteMergeResult* result) {
  *result = DeleteMergeResult();
  const PluginDescriptor& type = plugins.type_descriptor();
  std::unique_ptr<Expression> where;
  ScanRequest request;
  if (!entry.all) {
    const std::vector<FieldSpec> fields = MapFields(type, plugins.config());
    Status parsed = Expression::Parse(entry.where, fields.data(), static_cast<uint32_t>(fields.size()), &where);
    if (!parsed.ok()) {
      result->batch_at_fault = true;
      return parsed.WithContext("delete entry of map " + plugins.config().name);
    }
    request.bounds = where->Bounds();
    request.key_prefix = where->KeyPrefix();
    request.filter = [&where](const Row& row) { return where->Matches(row); };
  }

  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(txn.get(), batches, batch_id, &result->already_merged));
  if (result->already_merged) return Status::Ok();  // the transaction aborts: nothing changes

  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), shard.data()));
  const Table table = shard.MakeTable(txn.get(), cursor.get());
  const GuardedStore& store = *plugins.store();
  ErrorBuffer error;
  Status failed;
  ScanStats stats;
  PLANB_RETURN_IF_ERROR(ScanMapInTxn(
      shard, txn.get(), cursor.get(), request,
      [&](const Row&, Bytes lmdb_key, Bytes value) {
        const Code code = store.DeleteRow(table, lmdb_key, value, &error);
        if (code != Code::kOk) {
          failed = Status::FromPlugin(code, error);
          return false;
        }
        ++result->rows_deleted;
        return true;
      },
      &stats));
  result->rows_examined = stats.rows_examined;
  PLANB_RETURN_IF_ERROR(failed.WithContext("deleting a row of map " + plugins.config().name));
  if (result->rows_deleted > 0) {
    Code code = store.FinishDeletes(table, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext("finishing the deletes");
    // Keys whose last row went: a lookup table's ids and the like, so the scheme's tables never leak.
    if (plugins.scheme() != nullptr) {
      code = plugins.scheme()->SweepUnusedKeys(table, type.key_suffix_size, &result->keys_swept, &error);
      if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext("sweeping unused keys");
    }
  }
  cursor.Close();
  bool counted = false;
  PLANB_RETURN_IF_ERROR(RecordMergedBatch(txn.get(), shard.meta(), batches, batch_id, now_ms, &counted));
  FaultPoint("merge.before_commit");
  return txn.Commit();
}

}  // namespace planb
