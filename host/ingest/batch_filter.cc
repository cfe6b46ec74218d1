#include "host/ingest/batch_filter.h"

#include <algorithm>
#include <limits>

#include "host/common/file_util.h"
#include "host/ingest/delete_merge.h"
#include "host/ingest/deletion_fields.h"
#include "host/query/map_scan.h"
#include "host/storage/dense_copy.h"
#include "host/storage/map_full.h"
#include "planb/lmdb.h"

namespace planb {

Status BatchTimeSpan(const MapEnv& batch, MDB_txn* txn, int64_t* earliest, int64_t* latest, bool* any) {
  *any = false;
  *earliest = std::numeric_limits<int64_t>::max();
  *latest = std::numeric_limits<int64_t>::min();
  Cursor cursor;
  PLANB_RETURN_IF_ERROR(cursor.Open(txn, batch.data()));
  const PluginDescriptor& type = batch.plugins().type_descriptor();
  ScanStats stats;
  return ScanMapInTxn(
      batch, txn, cursor.get(), ScanRequest(),
      [&](const Row& row, Bytes, Bytes) {
        const int64_t t = RowTimeMs(type, row);
        *any = true;
        *earliest = std::min(*earliest, t);
        *latest = std::max(*latest, t);
        return true;
      },
      &stats);
}

namespace {

Status FilterCopy(const std::shared_ptr<const MapPlugins>& plugins, const MapEnv& batch, int64_t earliest,
                  const std::vector<Tombstone>& tombstones, const std::function<bool(const Row&)>& shadowed_by_identity,
                  const std::string& scratch_dir, std::shared_ptr<MapEnv>* filtered, uint64_t* rows_shadowed,
                  std::vector<ShadowedRow>* value_shadowed) {
  filtered->reset();
  *rows_shadowed = 0;
  bool shadows = std::any_of(tombstones.begin(), tombstones.end(),
                             [earliest](const Tombstone& t) { return t.entry.time_ms > earliest; });
  if (!shadows && shadowed_by_identity) {
    // Any row of the batch whose identity a deletion by value left shadowed?
    Txn read;
    PLANB_RETURN_IF_ERROR(read.Begin(batch.env(), MDB_RDONLY));
    Cursor cursor;
    PLANB_RETURN_IF_ERROR(cursor.Open(read.get(), batch.data()));
    ScanStats stats;
    PLANB_RETURN_IF_ERROR(ScanMapInTxn(
        batch, read.get(), cursor.get(), ScanRequest(),
        [&](const Row& row, Bytes, Bytes) {
          shadows = shadowed_by_identity(row);
          return !shadows;
        },
        &stats));
  }
  if (!shadows) return Status::Ok();
  PLANB_RETURN_IF_ERROR(RemoveTree(scratch_dir));
  PLANB_RETURN_IF_ERROR(MakeDirectories(scratch_dir));
  DenseCopyStats stats;
  PLANB_RETURN_IF_ERROR(DenseCopy(batch.env(), scratch_dir, &stats).WithContext("copying the batch to " + scratch_dir));
  std::shared_ptr<MapEnv> copy;
  PLANB_RETURN_IF_ERROR(MapEnv::Open(scratch_dir, plugins, MapEnv::Mode::kOpenExisting,
                                     MapEnv::kBatchFlags, &copy));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(copy->env(), 0).WithContext(scratch_dir));
  // Replacements and deletions by identity first: a row they shadow was never a key's value when a deletion by
  // value came, so that deletion must not take it (and leave an identity tombstone over a replacement's rows).
  std::vector<const Tombstone*> ordered;
  for (const Tombstone& t : tombstones) ordered.push_back(&t);
  const PluginDescriptor& type = plugins->type_descriptor();
  std::stable_partition(ordered.begin(), ordered.end(), [&](const Tombstone* t) {
    return t->replacement || NamesIdentityOnly(t->entry, type, plugins->config());
  });
  for (const Tombstone* shadowing : ordered) {
    const Tombstone& tombstone = *shadowing;
    if (tombstone.entry.time_ms <= earliest) continue;  // the batch's rows are all as new as it
    DeleteMergeResult deleted;
    PLANB_RETURN_IF_ERROR(DeleteRowsBefore(*plugins, *copy, txn.get(), tombstone.entry, earliest, &deleted,
                                           value_shadowed)
                              .WithContext("applying the tombstone of batch " + tombstone.batch_id + " to " +
                                           scratch_dir));
    *rows_shadowed += deleted.rows_deleted;
  }
  if (shadowed_by_identity) {
    DeleteMergeResult deleted;
    PLANB_RETURN_IF_ERROR(DeleteRowsWhere(*plugins, *copy, txn.get(), shadowed_by_identity, &deleted)
                              .WithContext("applying identity tombstones to " + scratch_dir));
    *rows_shadowed += deleted.rows_deleted;
  }
  PLANB_RETURN_IF_ERROR(txn.Commit().WithContext(scratch_dir));
  *filtered = std::move(copy);
  return Status::Ok();
}

}  // namespace

Status FilterBatchByTombstones(const std::shared_ptr<const MapPlugins>& plugins, const MapEnv& batch, int64_t earliest,
                               const std::vector<Tombstone>& tombstones,
                               const std::function<bool(const Row&)>& shadowed_by_identity,
                               const std::string& scratch_dir, std::shared_ptr<MapEnv>* filtered,
                               uint64_t* rows_shadowed, std::vector<ShadowedRow>* value_shadowed) {
  // The copy has the map's max_store_size as its map size, as the batch had; deleting from it writes new pages.
  return DescribeMapFull(FilterCopy(plugins, batch, earliest, tombstones, shadowed_by_identity, scratch_dir, filtered,
                                    rows_shadowed, value_shadowed),
                         plugins->config(), "the copy of the batch filtered by the shard's tombstones,",
                         scratch_dir + "/data.mdb");
}

}  // namespace planb
