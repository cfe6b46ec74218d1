#include "host/maintain/shard_rows_maintenance.h"

#include <limits>

#include "host/common/fault_point.h"
#include "host/maintain/maintenance_marks.h"
#include "host/storage/content_version.h"
#include "host/ingest/tombstones.h"
#include "planb/lmdb.h"

namespace planb {

namespace {
int64_t SaturatingMinus(int64_t now_ms, int64_t duration_ms) {
  int64_t out = 0;
  if (__builtin_sub_overflow(now_ms, duration_ms, &out)) return std::numeric_limits<int64_t>::min();
  return out;
}
}  // namespace

MaintainRequest RowsRequest(const MapConfig& config, int64_t now_ms, bool* asked) {
  MaintainRequest request;
  request.condense = config.condense;
  request.condense_before_ms = SaturatingMinus(now_ms, config.condense_after_ms);
  request.retain = config.retain;
  request.retain_from_ms = SaturatingMinus(now_ms, config.retain_for_ms);
  *asked = request.condense || request.retain;
  return request;
}

Status MaintainShardRows(const MapEnv& shard, int64_t now_ms, bool dry_run,
                         const std::set<std::string, std::less<>>* keep_batch_ids, int64_t batches_keep_ms,
                         RowsMaintenance* out) {
  const MapPlugins& plugins = shard.plugins();
  const MaintainRequest request = RowsRequest(plugins.config(), now_ms, &out->asked);
  if (!out->asked && keep_batch_ids == nullptr) return Status::Ok();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard.env(), 0).WithContext(shard.path()));
  if (out->asked) {
    Cursor cursor;
    PLANB_RETURN_IF_ERROR(cursor.Open(txn.get(), shard.data()).WithContext(shard.path()));
    const Table table = shard.MakeTable(txn.get(), cursor.get());
    ErrorBuffer error;
    Code code = plugins.store()->Maintain(table, request, &out->stats, &error);
    if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(shard.path());
    const bool removed = out->stats.rows_deleted + out->stats.rows_condensed > 0;
    if (removed && plugins.scheme() != nullptr) {
      code = plugins.scheme()->SweepUnusedKeys(table, plugins.type_descriptor().key_suffix_size, &out->keys_swept,
                                               &error);
      if (code != Code::kOk) return Status::FromPlugin(code, error).WithContext(shard.path());
    }
  }
  if (keep_batch_ids != nullptr) {
    MDB_dbi batches = 0;
    PLANB_RETURN_IF_ERROR(shard.OpenBatchesTable(txn.get(), &batches).WithContext(shard.path()));
    int64_t before = 0;
    if (__builtin_sub_overflow(now_ms, batches_keep_ms, &before)) before = std::numeric_limits<int64_t>::min();
    PLANB_RETURN_IF_ERROR(PruneMergedBatches(txn.get(), shard.meta(), batches, *keep_batch_ids, before,
                                             &out->batches_pruned)
                              .WithContext(shard.path()));
    // A deletion's tombstone shadows batches that may still come; after the records' window none is recognised
    // as merged either, so both go together, but only while no batch waits here (staged or quarantined: it may
    // be older than the deletion and merge later).
    MDB_dbi tombstones = 0;
    bool found = false;
    PLANB_RETURN_IF_ERROR(OpenTombstones(txn.get(), /*create=*/false, &tombstones, &found).WithContext(shard.path()));
    if (!keep_batch_ids->empty()) found = false;
    if (found) {
      PLANB_RETURN_IF_ERROR(
          PruneTombstones(txn.get(), tombstones, before, &out->tombstones_pruned).WithContext(shard.path()));
    }
    MDB_dbi shadowed = 0;
    PLANB_RETURN_IF_ERROR(OpenShadowed(txn.get(), /*create=*/false, &shadowed, &found).WithContext(shard.path()));
    if (found && keep_batch_ids->empty()) {
      uint64_t pruned = 0;
      PLANB_RETURN_IF_ERROR(PruneShadowed(txn.get(), shadowed, before, &pruned).WithContext(shard.path()));
      out->tombstones_pruned += pruned;
    }
  }
  if (dry_run || (!out->asked && out->batches_pruned + out->tombstones_pruned == 0)) {
    return Status::Ok();  // aborts: nothing changes
  }
  if (out->asked) {
    PLANB_RETURN_IF_ERROR(WriteMaintenanceMark(txn.get(), shard.meta(), kLastCondensedKey, now_ms)
                              .WithContext(shard.path()));
  }
  FaultPoint("maintain.before_commit");
  return txn.Commit().WithContext(shard.path());
}

}  // namespace planb
