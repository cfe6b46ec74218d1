// Snapshots a diff wrote without syncing them (docs/snapshots.md, "Diffs").
//
// Merging a diff into a copy of the snapshot held rewrites a third of its pages and leaves the copy's bytes in
// the page cache; syncing them would cost as much as the rest of the refresh (writing back the whole copy). The
// copy is installed unsynced instead, with a file `unsynced-boot` beside its data.mdb naming the boot it was
// written in (boot_id.h). A process crash loses nothing (the kernel holds the pages); a reboot before the kernel
// wrote them back can, so a snapshot marked with another boot is not trusted: it is discarded and fetched again.
// Once the kernel has had time to write it back (the maintenance pass, SyncUnsyncedSnapshot), the snapshot is
// synced and the mark removed.
#pragma once

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

inline constexpr char kUnsyncedBootFile[] = "unsynced-boot";

// Marks snapshot directory `dir` as written in this boot, unsynced (the mark itself is synced). `*marked` is false
// when the boot is unknown (no /proc): the caller must sync the snapshot instead.
Status MarkUnsyncedSnapshot(const std::string& dir, bool* marked);

// Ok for a snapshot directory without the mark, or marked in this boot. kCorruption, naming both boots, for one
// marked in another boot (or with a mark that cannot be read as one): its data may not all be on the disk.
Status CheckUnsyncedSnapshot(const std::string& dir);

// Syncs the data of snapshot directory `dir` and removes its mark, when it has one at least `min_age_ms` old (by
// the mark's mtime, against the real-time clock). `*synced` says whether it did. A directory without the mark: Ok.
Status SyncUnsyncedSnapshot(const std::string& dir, int64_t min_age_ms, bool* synced);

}  // namespace planb
