// One maintenance pass over a node's shards (the design's "Plan B Maintenance Processor"), run by
// `planb maintain` and on a schedule by `planb serve`. Per configured map with a shard: its rows' condensation and
// retention and the pruning of old merged-batch records (shard_rows_maintenance.h), then disk reclaim when free
// pages pass the map's reclaim_free_share (host/storage/shard_compaction.h); then shards of maps no longer
// configured (host/storage/orphan_shards.h). It holds the merge lock (merging/.lock) throughout, so maintenance
// and merges never write a shard at once, whichever process runs them; lookups, queries and snapshot copies read
// on under their own read transactions.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "host/maintain/shard_rows_maintenance.h"
#include "host/runtime.h"
#include "host/storage/orphan_shards.h"
#include "planb/status.h"

namespace planb {

struct MapMaintenanceReport {
  std::string map;
  bool has_shard = false;  // false: nothing merged into the map on this node yet
  RowsMaintenance rows;
  double free_share = 0;        // of the shard's file, measured after the rows' maintenance
  bool reclaimed = false;       // compacted (dry run: would be)
  uint64_t bytes_before = 0;    // data.mdb before and after reclaim (equal when not reclaimed)
  uint64_t bytes_after = 0;
  Status status;                // this map's failure, if any (other maps are still maintained)
};

struct MaintenanceReport {
  std::vector<MapMaintenanceReport> maps;
  OrphanReport orphans;                   // every map's pass only (not with options.map)
  std::vector<std::string> leftovers_removed;  // copies a dead compaction left
};

struct MaintenanceOptions {
  bool dry_run = false;            // report what would change; change nothing
  std::optional<std::string> map;  // only this map (as the user wrote it); absent = every configured map
  int64_t now_ms = 0;              // the instant cut-offs are measured from
  std::function<void(const MapMaintenanceReport&)> on_map;  // called as each map is done (progress)
  const std::atomic<bool>* stop = nullptr;                  // when set and true: stop before the next map
};

// Runs one pass. kInvalidArgument (before anything is done) when options.map is not a configured map; otherwise
// the first failure, naming its map, after every map was tried (each map's outcome is in the report).
Status RunMaintenance(Runtime& runtime, const MaintenanceOptions& options, MaintenanceReport* report);

// The line `planb maintain` prints per map, e.g. "cities: 1200 rows examined, 30 deleted (retention), 12
// condensed; reclaimed 40.0 MiB (80.0 MiB -> 40.0 MiB)" ("would ..." for a dry run).
std::string DescribeMapMaintenance(const MapMaintenanceReport& map, bool dry_run);

// One line per orphan shard: "orphan shard old_map: deleted (not configured since 2026-11-20T10:00:00.000Z)" or
// "... kept until <time> (delete_orphans_after)"; dry run: "would be deleted".
std::vector<std::string> DescribeOrphans(const OrphanReport& orphans, int64_t delete_after_ms, bool dry_run);

}  // namespace planb
