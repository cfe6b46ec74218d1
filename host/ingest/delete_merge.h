// The write transaction of a deletion batch (one map's `<map>/delete` entry, host/transfer/delete_entry.h): the
// rows it names whose time is earlier than the deletion's go from the shard, narrowed like a query
// (host/query/map_scan.h), the store type's DeleteRow on each match, then FinishDeletes and the scheme's
// SweepUnusedKeys; the deletion's tombstone (tombstones.h) and its batch id recorded in the content version
// (content_version.h), and the commit: all in ONE transaction, so a crash leaves the old shard or the new.
// A batch whose id the shard already records changes nothing: deleting again after later batches merged (a batch
// delivered twice) would take their rows too, and nodes would part ways.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "host/ingest/tombstones.h"
#include "host/storage/map_env.h"
#include "host/transfer/delete_entry.h"
#include "planb/status.h"

namespace planb {

struct DeleteMergeResult {
  uint64_t rows_examined = 0;  // rows the scan read
  uint64_t rows_deleted = 0;
  uint64_t keys_swept = 0;      // keys the scheme forgot (SweepUnusedKeys)
  bool already_merged = false;  // the shard records the batch: nothing was done
  // On failure: the entry itself is at fault (its expression does not parse against the map's fields), not this
  // node's shard, plugins (a type without DeleteRow yet: kNotSupported) or disk.
  bool batch_at_fault = false;
};

// A row a deletion by value took (deletion_fields.h): its identity, where a scan finds it, and its version: rows
// of that identity at or below it are shadowed from now on.
struct ShadowedRow {
  std::string identity;  // RowIdentity
  std::string key;       // Row::key (text-key types)
  int64_t range_from = 0;
  bool has_addresses = false;
  uint8_t address_from[16] = {};
  RowVersion version;
};

// Deletes what `entry` names from `shard` (the map of `plugins`), records its tombstone and `batch_id`, in one
// write transaction. On failure the transaction aborts and the shard is as it was; messages name no file (the
// caller says which).
// REQUIRES: no other write transaction of `shard` runs in this process (merges of a shard take turns).
Status DeleteFromShard(const MapPlugins& plugins, const MapEnv& shard, const DeleteEntry& entry,
                       const std::string& batch_id, int64_t now_ms, DeleteMergeResult* result);

// In the write transaction `txn` of `shard`: deletes the rows `entry` matches whose time (RowTimeMs) is at least
// `from_ms` and earlier than entry.time_ms, then FinishDeletes and SweepUnusedKeys when any went. Adds to
// result's counts; sets batch_at_fault when the expression does not parse against the map's fields. A deletion's
// merge takes every older row (from_ms: the lowest time); a replacement's every row up to its newest; a batch
// older than a tombstone loses the rows it shadows this way before it merges (batch_filter.h).
// `shadowed` (may be null) gets the rows taken when the expression names a value (NamesIdentityOnly is false).
Status DeleteRowsBefore(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const DeleteEntry& entry,
                        int64_t from_ms, DeleteMergeResult* result, std::vector<ShadowedRow>* shadowed = nullptr);

// In the write transaction `txn` of `shard`: deletes every row `filter` accepts (a full scan), as above.
Status DeleteRowsWhere(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn,
                       const std::function<bool(const Row&)>& filter, DeleteMergeResult* result);

// In the write transaction `txn` of `shard`: records `row`'s identity tombstone and deletes the rows of that
// identity older than its bound (a row a value-deletion took from a batch before it merged: the older value
// this shard holds must not stay in its place).
Status ShadowIdentity(const MapPlugins& plugins, const MapEnv& shard, MDB_txn* txn, const ShadowedRow& row,
                      int64_t now_ms, DeleteMergeResult* result);

}  // namespace planb
