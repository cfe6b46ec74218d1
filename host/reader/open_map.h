// How the Reader gets a map's environment, and the snapshot upkeep it runs in the background: the only place the
// Reader touches the snapshot machinery (Runtime::OpenForReading, Runtime::snapshots()).
// Thread-safety: as the Runtime's (any thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "host/runtime.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/storage/map_env.h"

namespace planb {

// The environment lookups of `map` should use now: the shard on a storage node, else the current local snapshot
// (fetched first when there is none), with the time that snapshot was installed here in `snapshot_created_ms`
// (none for a shard). kNoData when nothing has been merged into the map yet.
Status OpenMapForReading(Runtime& runtime, std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out,
                         std::optional<int64_t>* snapshot_created_ms);

// Non-storage nodes: fetches a newer snapshot of `map` when the current one is due (SnapshotManager::RefreshIfDue).
// Nothing on storage nodes.
Status RefreshSnapshotIfDue(Runtime& runtime, std::string_view map);

// Non-storage nodes: lets go of idle snapshot environments and deletes superseded snapshots no process holds
// (SnapshotManager::Cleanup). Nothing on storage nodes.
Status CleanupSnapshots(Runtime& runtime);

}  // namespace planb
