// A batch's rows as the shard's tombstones leave them: before a batch merges, the rows that a deletion or
// replacement merged earlier shadows (rows it matches that are older than it, tombstones.h) are taken out of a
// copy of the batch, so that the store type never sees them and the result is what merging the batch before the
// deletion would have given. Most batches are newer than every tombstone: they are merged as they are, and a
// shard without tombstones costs nothing more than one table lookup.
//
// The copy is written by this process (DenseCopy reads the received file, which stays read-only; a forged free
// list cannot reach a write transaction), then the shadowed rows go with the store type's DeleteRow, so its own
// tables (indexes) and the scheme's stay consistent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/delete_merge.h"
#include "host/ingest/tombstones.h"
#include "host/storage/map_env.h"
#include "planb/status.h"

namespace planb {

// The earliest and latest row time (RowTimeMs) of the batch read in `txn`; *any is false for one without rows.
Status BatchTimeSpan(const MapEnv& batch, MDB_txn* txn, int64_t* earliest, int64_t* latest, bool* any);

// When a tombstone of `tombstones` is later than the batch's earliest row (`earliest`): copies `batch` (a batch
// of the map of `plugins`, read in a transaction of its own) into
// `scratch_dir` (which must not exist), deletes from the copy the rows those tombstones shadow and sets
// *filtered to the copy (open, ready to merge) and *rows_shadowed to the rows taken. Otherwise leaves *filtered
// empty: merge `batch` itself. Errors name the copy.
// `shadowed_by_identity` (may be empty) says whether a row is shadowed by the shard's identity tombstones
// ("shadowed", tombstones.h); such rows go from the copy too. `value_shadowed` gets the rows that a deletion by
// value took (the caller records their identity tombstones in the shard, ShadowIdentity).
Status FilterBatchByTombstones(const std::shared_ptr<const MapPlugins>& plugins, const MapEnv& batch, int64_t earliest,
                               const std::vector<Tombstone>& tombstones,
                               const std::function<bool(const Row&)>& shadowed_by_identity,
                               const std::string& scratch_dir, std::shared_ptr<MapEnv>* filtered,
                               uint64_t* rows_shadowed, std::vector<ShadowedRow>* value_shadowed);

}  // namespace planb
