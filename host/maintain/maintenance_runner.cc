#include "host/maintain/maintenance_runner.h"

#include "host/common/file_util.h"

namespace planb {

namespace {

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

MapMaintenanceReport MaintainMap(Runtime& runtime, const std::string& map, const MaintenanceOptions& options) {
  MapMaintenanceReport out;
  out.map = map;
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenShard(map, &shard);
  if (s.code() == Code::kNotFound) return out;  // nothing merged here yet: nothing to maintain
  if (!s.ok()) {
    out.status = s;
    return out;
  }
  out.has_shard = true;
  out.status = MaintainShardRows(*shard, options.now_ms, options.dry_run, &out.rows);
  return out;
}

}  // namespace

Status RunMaintenance(Runtime& runtime, const MaintenanceOptions& options, MaintenanceReport* report) {
  std::vector<std::string> maps;
  if (options.map) {
    const MapConfig* config = runtime.config().FindMap(*options.map);
    if (config == nullptr) return Status::Invalid("unknown map '" + *options.map + "' (not in the config)");
    maps.push_back(config->name);
  } else {
    for (const auto& [name, config] : runtime.config().maps) maps.push_back(name);
  }
  FileLock lock;  // the merge processor's: maintenance and merges take turns
  PLANB_RETURN_IF_ERROR(lock.Acquire(runtime.home().merging() + "/.lock"));
  Status first;
  for (const std::string& map : maps) {
    if (Stopped(options.stop)) break;
    MapMaintenanceReport done = MaintainMap(runtime, map, options);
    if (!done.status.ok() && first.ok()) first = done.status.WithContext("map " + map);
    if (options.on_map) options.on_map(done);
    report->maps.push_back(std::move(done));
  }
  return first;
}

std::string DescribeMapMaintenance(const MapMaintenanceReport& map, bool dry_run) {
  std::string line = map.map + ": ";
  if (!map.status.ok()) return line + "failed: " + map.status.message();
  if (!map.has_shard) return line + "no shard yet (nothing merged here)";
  if (!map.rows.asked) return line + "no condense or retain_for configured";
  const MaintainStats& s = map.rows.stats;
  line += std::to_string(s.rows_examined) + " rows examined, " + std::to_string(s.rows_deleted) +
          (dry_run ? " would be deleted" : " deleted") + " (retention), " + std::to_string(s.rows_condensed) +
          (dry_run ? " would be condensed" : " condensed");
  if (map.rows.keys_swept != 0) line += ", " + std::to_string(map.rows.keys_swept) + " keys swept";
  return line;
}

}  // namespace planb
