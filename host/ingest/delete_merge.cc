#include "host/ingest/delete_merge.h"

#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "host/common/fault_point.h"
#include "host/ingest/deletion_fields.h"
#include "host/ingest/tombstones.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"
#include "host/storage/content_version.h"
#include "host/storage/map_full.h"
#include "planb/lmdb.h"

namespace planb {

namespace {
ShadowedRow MakeShadowedRow(const PluginDescriptor& type, const std::vector<FieldSpec>& identity, const Row& row) {
  ShadowedRow out;
  out.identity = RowIdentity(identity, row);
  out.key = std::string(row.key.view());
  out.range_from = row.range_from;
  out.has_addresses = row.has_addresses;
  std::memcpy(out.address_from, row.address_from, sizeof out.address_from);
  out.version = RowVersion{RowTimeMs(type, row), RowTieHash(row)};
  return out;
}

// Deletes the rows of `shard` that `request` visits and `filter` accepts, then FinishDeletes and SweepUnusedKeys.
Status DeleteScanned(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, ScanRequest& request,
                     const std::function<void(const Row&)>& on_deleted, DeleteMergeResult* result) {
  const PluginDescriptor& type = plugins.type_descriptor();
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
      [&](const Row& row, Bytes lmdb_key, Bytes value) {
        if (on_deleted) on_deleted(row);  // before DeleteRow: the row's views point into the page it frees
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
}  // namespace

Status DeleteRowsWhere(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn,
                       const std::function<bool(const Row&)>& filter, DeleteMergeResult* result) {
  ScanRequest request;
  request.filter = filter;
  return DeleteScanned(plugins, shard, txn, request, nullptr, result);
}

Status ShadowIdentity(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const ShadowedRow& row,
                      int64_t now_ms, DeleteMergeResult* result) {
  MDB_dbi dbi = 0;
  bool found = false;
  PLANB_RETURN_IF_ERROR(OpenShadowed(txn, /*create=*/true, &dbi, &found));
  PLANB_RETURN_IF_ERROR(RecordShadowed(txn, dbi, row.identity, row.version, now_ms));
  const PluginDescriptor& type = plugins.type_descriptor();
  // Narrowed to the row's key or range start where the type can narrow; the identity decides.
  ScanRequest request;
  bool text_key = false;
  bool ranged = false;
  for (const FieldSpec& f : MapFields(type, plugins.config())) {
    text_key = text_key || f.field == RowField::kKey;
    ranged = ranged || f.field == RowField::kKeyStart;
  }
  if (text_key) {
    request.bounds.has_key = true;
    request.bounds.key = Bytes(row.key);
  } else if (ranged && row.has_addresses) {
    request.bounds.has_address_bounds = true;
    std::memcpy(request.bounds.address_min, row.address_from, 16);
    std::memcpy(request.bounds.address_max, row.address_from, 16);
  } else if (ranged) {
    request.bounds.has_number_bounds = true;
    request.bounds.number_min = request.bounds.number_max = row.range_from;
  }
  const std::vector<FieldSpec> identity = IdentityFields(type, plugins.config());
  request.filter = [&](const Row& r) {
    return RowVersion{RowTimeMs(type, r), RowTieHash(r)} <= row.version && RowIdentity(identity, r) == row.identity;
  };
  return DeleteScanned(plugins, shard, txn, request, nullptr, result);
}

Status DeleteRowsBefore(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const DeleteEntry& entry,
                        int64_t from_ms, DeleteMergeResult* result, std::vector<ShadowedRow>* shadowed) {
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

  // A deletion by value leaves an identity tombstone for each row it takes (deletion_fields.h).
  std::function<void(const Row&)> on_deleted;
  if (shadowed != nullptr && !NamesIdentityOnly(entry, type, plugins.config())) {
    on_deleted = [&, identity = IdentityFields(type, plugins.config())](const Row& row) {
      shadowed->push_back(MakeShadowedRow(type, identity, row));
    };
  }
  return DeleteScanned(plugins, shard, txn, request, on_deleted, result);
}

namespace {

Status DeleteInOneTxn(const MapPlugins& plugins, const MapEnv& shard, const DeleteEntry& entry,
                      const std::string& batch_id, int64_t now_ms, DeleteMergeResult* result) {
  *result = DeleteMergeResult();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), 0));
  MDB_dbi batches = 0;
  PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(txn.get(), &batches));
  PLANB_RETURN_IF_ERROR(IsBatchRecorded(txn.get(), batches, batch_id, &result->already_merged));
  if (result->already_merged) return Status::Ok();  // the transaction aborts: nothing changes

  std::vector<ShadowedRow> shadowed;
  PLANB_RETURN_IF_ERROR(
      DeleteRowsBefore(plugins, shard, txn.get(), entry, std::numeric_limits<int64_t>::min(), result, &shadowed));
  if (!shadowed.empty()) {
    MDB_dbi dbi = 0;
    bool opened = false;
    PLANB_RETURN_IF_ERROR(OpenShadowed(txn.get(), /*create=*/true, &dbi, &opened));
    for (const ShadowedRow& row : shadowed) {
      PLANB_RETURN_IF_ERROR(RecordShadowed(txn.get(), dbi, row.identity, row.version, now_ms));
    }
  }
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

}  // namespace

Status DeleteFromShard(const MapPlugins& plugins, const MapEnv& shard, const DeleteEntry& entry,
                       const std::string& batch_id, int64_t now_ms, DeleteMergeResult* result) {
  // Deleting rows writes pages too (copy-on-write), and the tombstones and the batch's record are new rows.
  return DescribeMapFull(DeleteInOneTxn(plugins, shard, entry, batch_id, now_ms, result), plugins.config(),
                         "the shard", shard.path() + "/data.mdb");
}

}  // namespace planb
