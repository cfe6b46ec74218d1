// One maintenance pass over a node's shards (the design's "Plan B Maintenance Processor"), run by
// `planb maintain` and on a schedule by `planb serve`: for each configured map with a shard, its rows'
// condensation and retention (shard_rows_maintenance.h). It holds the merge lock (merging/.lock) throughout, so
// maintenance and merges never write a shard at once, whichever process runs them; lookups, queries and
// snapshot copies read on under their own read transactions.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "host/maintain/shard_rows_maintenance.h"
#include "host/runtime.h"
#include "planb/status.h"

namespace planb {

struct MapMaintenanceReport {
  std::string map;
  bool has_shard = false;  // false: nothing merged into the map on this node yet
  RowsMaintenance rows;
  Status status;           // this map's failure, if any (other maps are still maintained)
};

struct MaintenanceReport {
  std::vector<MapMaintenanceReport> maps;
};

struct MaintenanceOptions {
  bool dry_run = false;            // report what would change; change nothing
  std::optional<std::string> map;  // only this map (as the user wrote it); absent = every configured map
  int64_t now_ms = 0;              // the instant cut-offs are measured from
  std::function<void(const MapMaintenanceReport&)> on_map;  // called as each map is done (progress)
  const std::atomic<bool>* stop = nullptr;                  // when set and true: stop before the next map
};

// Runs one pass. kInvalidArgument (before anything is done) when options.map is not a configured map; otherwise
// the first map's failure, naming it, after every map was tried (each map's outcome is in the report).
Status RunMaintenance(Runtime& runtime, const MaintenanceOptions& options, MaintenanceReport* report);

// "city_to_country: 1200 rows examined, 30 deleted (retention), 12 condensed, 3 keys swept" (or "would ..." for
// a dry run): the line `planb maintain` prints per map.
std::string DescribeMapMaintenance(const MapMaintenanceReport& map, bool dry_run);

}  // namespace planb
