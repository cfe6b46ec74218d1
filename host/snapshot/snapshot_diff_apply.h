// A reader's side of snapshot diffs (SNAPSHOT_SINCE, docs/snapshots.md): the batches a storage node merged since
// the snapshot held, merged by this process into a copy of that snapshot, which then becomes the new snapshot.
//
// The diff is checked as any snapshot is before anything of it is used: its head must name this map, the version
// held as its start and the version offered as its end, and its parts must be exactly the batches between them
// (snapshot_diff_file.h); each part is verified as an upload is (batch_verifier.h: its zip rules, then its LMDB
// file in a child process, every page and row; or its delete entry against the map's fields) and must hold only
// this map. Each is then merged as the storage node merged it (merge_batch_map.h, delete_merge.h), in the node's
// order, into a copy of the snapshot held, and the copy's content version must come out as the one offered.
// Merges are order-free and exactly-once, so the rows are those of the node's shard at that version.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "host/plugin_host/map_catalog.h"
#include "host/storage/content_version.h"
#include "planb/status.h"

namespace planb {

struct AppliedDiff {
  size_t batches = 0;     // parts merged
  uint64_t rows_read = 0;  // rows read from their data files
};

// Applies the diff file `diff_path` for `plugins`' map to the snapshot directory `held_dir` (its data.mdb, at
// `held`), giving `scratch_dir/<map>/data.mdb` at `offered` (scratch_dir must exist; `<map>/` and `parts/` under
// it must not). `held_dir` is only read. Errors: kInvalidArgument or kCorruption for a diff that does not check
// out (naming the diff and what is wrong: the node's fault, so the caller asks for the whole snapshot), kIOError
// or kFull for the local disk. On error, what was made under scratch_dir is for the caller to remove.
Status ApplySnapshotDiff(const MapCatalog& catalog, const std::shared_ptr<const MapPlugins>& plugins,
                         const std::string& diff_path, const std::string& held_dir, const ContentVersion& held,
                         const ContentVersion& offered, const std::string& scratch_dir, AppliedDiff* out);

}  // namespace planb
