#include "host/reader/open_map.h"

namespace planb {

Status OpenMapForReading(Runtime& runtime, std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out,
                         std::optional<int64_t>* snapshot_created_ms) {
  return runtime.OpenForReading(map, stale, out, snapshot_created_ms);
}

Status RefreshSnapshotIfDue(Runtime& runtime, std::string_view map) {
  if (runtime.config().cluster.IsStorageNode()) return Status::Ok();
  bool changed = false;
  return runtime.snapshots()->RefreshIfDue(map, &changed);
}

Status CleanupSnapshots(Runtime& runtime) {
  if (runtime.config().cluster.IsStorageNode()) return Status::Ok();
  CleanupReport report;
  return runtime.snapshots()->Cleanup(&report);
}

}  // namespace planb
