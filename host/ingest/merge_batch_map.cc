#include "host/ingest/merge_batch_map.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/batch_filter.h"
#include "host/ingest/deletion_fields.h"
#include "host/ingest/merge_map.h"
#include "host/ingest/tombstones.h"
#include "planb/lmdb.h"

namespace planb {

Status MergeBatchMap(const std::shared_ptr<const MapPlugins>& plugins, const MapEnv& batch, MDB_txn* batch_txn,
                     const MapEnv& shard, const std::string& shard_name, bool fresh_shard,
                     const std::string& batch_id, bool replace, int64_t now_ms, BatchMapMerge* out) {
  *out = BatchMapMerge();
  // The batch's times, read where they matter: against the shard's tombstones (a batch older than a deletion
  // merged before it loses what the deletion shadows, batch_filter.h) and for a replacement (its newest row).
  std::vector<Tombstone> tombstones;
  if (!fresh_shard) PLANB_RETURN_IF_ERROR(ReadShardTombstones(shard.env(), &tombstones).WithContext(shard_name));
  int64_t earliest = 0;
  int64_t latest = 0;
  bool any = false;
  if (replace || !tombstones.empty()) {
    out->batch_at_fault = true;
    PLANB_RETURN_IF_ERROR(BatchTimeSpan(batch, batch_txn, &earliest, &latest, &any)
                              .WithContext("reading the rows' times of " + batch.path()));
    out->batch_at_fault = false;
  }
  if (replace && any) {
    // A replacement's rows are not shadowed by the replacements it outranks (its own tombstone supersedes
    // theirs): otherwise its rows older than an earlier replacement would survive in one order and not the other.
    const int64_t mine = ReplacementTombstoneTime(latest);
    tombstones.erase(std::remove_if(tombstones.begin(), tombstones.end(),
                                    [&](const Tombstone& t) {
                                      return t.replacement && !OutranksReplacement(t, mine, batch_id);
                                    }),
                     tombstones.end());
  }
  // Identity tombstones (rows a deletion by value took, deletion_fields.h), read in a transaction of the shard
  // held while the batch is filtered (merges take turns: nothing else writes the shard meanwhile).
  Txn shard_read;
  MDB_dbi shadowed_dbi = 0;
  bool has_shadowed = false;
  if (!fresh_shard && !tombstones.empty()) {
    PLANB_RETURN_IF_ERROR(shard_read.Begin(shard.env(), MDB_RDONLY).WithContext(shard_name));
    PLANB_RETURN_IF_ERROR(OpenShadowed(shard_read.get(), /*create=*/false, &shadowed_dbi, &has_shadowed)
                              .WithContext(shard_name));
  }
  const PluginDescriptor& type = plugins->type_descriptor();
  const std::vector<FieldSpec> identity_fields = IdentityFields(type, plugins->config());
  // A replacement's rows are exempt from identity tombstones of rows it shadows itself (at or before its newest):
  // those rows were gone under the replacement whatever the deletion did.
  const int64_t exempt_below = replace && any ? ReplacementTombstoneTime(latest) : std::numeric_limits<int64_t>::min();
  Status identity_failure;
  std::function<bool(const Row&)> by_identity;
  if (has_shadowed) {
    by_identity = [&](const Row& row) {
      RowVersion taken;
      bool found = false;
      Status s = ShadowedVersion(shard_read.get(), shadowed_dbi, RowIdentity(identity_fields, row), &taken, &found);
      if (!s.ok()) identity_failure = s;
      return s.ok() && found && taken.time_ms >= exempt_below &&
             RowVersion{RowTimeMs(type, row), RowTieHash(row)} <= taken;
    };
  }
  std::shared_ptr<MapEnv> filtered;
  uint64_t shadowed = 0;
  std::vector<ShadowedRow> value_shadowed;
  Txn filtered_txn;
  if (any && !tombstones.empty()) {
    // What the store type's DeleteRow refuses on the copy is the batch's rows (an I/O error stays the disk's).
    out->batch_at_fault = true;
    PLANB_RETURN_IF_ERROR(FilterBatchByTombstones(plugins, batch, earliest, tombstones, by_identity,
                                                  batch.path() + ".filtered", &filtered, &shadowed, &value_shadowed));
    out->batch_at_fault = false;
    PLANB_RETURN_IF_ERROR(identity_failure.WithContext(shard_name));
    if (filtered) PLANB_RETURN_IF_ERROR(filtered_txn.Begin(filtered->env(), MDB_RDONLY));
  }
  shard_read.Abort();
  const MapEnv& rows = filtered ? *filtered : batch;
  MDB_txn* rows_txn = filtered ? filtered_txn.get() : batch_txn;

  MapMergeResult merged;
  // A replacement: the shard's rows up to its newest go in the same transaction as its rows come (merge_map.h). A
  // replacement without rows has no time to order it by: it replaces nothing (load refuses to make one).
  ReplacementMerge replacement;
  replacement.latest_ms = latest;
  Status s = MergeIntoShard(*plugins, rows, rows_txn, shard, batch_id, now_ms, &merged,
                            replace && any ? &replacement : nullptr, &value_shadowed);
  filtered_txn.Abort();
  filtered.reset();
  (void)RemoveTree(batch.path() + ".filtered");
  if (merged.batch_at_fault) out->batch_at_fault = true;
  PLANB_RETURN_IF_ERROR(s.WithContext(shard_name));
  out->rows_read = merged.rows_read;
  if (!merged.already_merged) out->rows_shadowed = shadowed;
  return Status::Ok();
}

}  // namespace planb
