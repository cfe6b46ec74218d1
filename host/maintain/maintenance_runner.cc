#include "host/maintain/maintenance_runner.h"

#include <cstdio>
#include <set>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/maintain/maintenance_marks.h"
#include "host/storage/shard_compaction.h"
#include "host/storage/shard_space.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"

namespace planb {

namespace {

using BatchIds = std::set<std::string, std::less<>>;

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

// The ids of the batches this node may still merge (staged) or be asked to merge again (quarantined): their
// records must outlive pruning. A zip whose id cannot be read is skipped: it cannot be merged as such either.
Status BatchIdsStillHere(const Home& home, BatchIds* out) {
  std::vector<StagedBatch> staged;
  PLANB_RETURN_IF_ERROR(StagingStore(home).List(&staged));
  std::vector<std::string> zips;
  for (const StagedBatch& batch : staged) zips.push_back(batch.path);
  std::vector<QuarantinedBatch> quarantined;
  PLANB_RETURN_IF_ERROR(ListQuarantine(home, &quarantined));
  for (const QuarantinedBatch& batch : quarantined) zips.push_back(QuarantineDir(home) + "/" + batch.name);
  for (const std::string& zip : zips) {
    std::string id;
    if (ReadBatchId(zip, UnzipLimits{}, &id).ok()) out->insert(std::move(id));
  }
  return Status::Ok();
}

// Compacts the shard of `plugins`' map when its free share passes the map's reclaim_free_share, then marks when.
Status ReclaimIfDue(Runtime& runtime, const std::shared_ptr<const MapPlugins>& plugins,
                    const MaintenanceOptions& options, MapMaintenanceReport* out) {
  std::shared_ptr<MapEnv> shard;
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(plugins->config().name, &shard));
  ShardSpace space;
  PLANB_RETURN_IF_ERROR(MeasureShard(*shard, &space).WithContext(shard->path()));
  out->free_share = space.free_share;
  out->bytes_before = out->bytes_after = space.file_bytes;
  if (space.free_share <= plugins->config().reclaim_free_share) return Status::Ok();
  out->reclaimed = true;
  if (options.dry_run) {
    out->bytes_after = space.used_pages * space.page_size;  // about what the copy holds
    return Status::Ok();
  }
  shard.reset();  // CompactShard takes it from the cache itself
  CompactionResult result;
  PLANB_RETURN_IF_ERROR(CompactShard(runtime.home(), runtime.envs(), plugins, &result));
  out->bytes_after = result.bytes_after;
  // The compacted shard says when: its own meta, written after the swap (the cache reopens the new files).
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(plugins->config().name, &shard));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), 0).WithContext(shard->path()));
  PLANB_RETURN_IF_ERROR(
      WriteMaintenanceMark(txn.get(), shard->meta(), kLastReclaimedKey, options.now_ms).WithContext(shard->path()));
  return txn.Commit().WithContext(shard->path());
}

MapMaintenanceReport MaintainMap(Runtime& runtime, const std::string& map, const MaintenanceOptions& options,
                                 const BatchIds& keep_ids) {
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
  out.status = MaintainShardRows(*shard, options.now_ms, options.dry_run, &keep_ids,
                                 runtime.config().cluster.MergedBatchesKeepMs(), &out.rows);
  shard.reset();
  if (!out.status.ok()) return out;
  std::shared_ptr<const MapPlugins> plugins;
  out.status = runtime.catalog().Get(map, &plugins);
  if (out.status.ok()) out.status = ReclaimIfDue(runtime, plugins, options, &out);
  return out;
}

// 512 B, 48.0 KiB, 1.5 MiB, 2.0 GiB: binary units with one decimal, as `ls -lh` and `du -h` print them.
std::string HumanBytes(uint64_t bytes) {
  const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  }
  return text;
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
  bool locked = false;
  PLANB_RETURN_IF_ERROR(lock.AcquireUnless(runtime.home().merging() + "/.lock", options.stop, &locked));
  if (!locked) return Status::Ok();  // stopped while another process held it
  if (!options.dry_run) {
    PLANB_RETURN_IF_ERROR(RemoveCompactionLeftovers(runtime.home(), &report->leftovers_removed));
  }
  BatchIds keep_ids;
  PLANB_RETURN_IF_ERROR(BatchIdsStillHere(runtime.home(), &keep_ids));
  Status first;
  for (const std::string& map : maps) {
    if (Stopped(options.stop)) break;
    MapMaintenanceReport done = MaintainMap(runtime, map, options, keep_ids);
    if (!done.status.ok() && first.ok()) first = done.status.WithContext("map " + map);
    if (options.on_map) options.on_map(done);
    report->maps.push_back(std::move(done));
  }
  if (!options.map && !Stopped(options.stop)) {
    const Status orphans = SweepOrphanShards(runtime.home(), runtime.config(), &runtime.envs(), options.now_ms,
                                             options.dry_run, &report->orphans);
    if (!orphans.ok() && first.ok()) first = orphans;
  }
  return first;
}

std::string DescribeMapMaintenance(const MapMaintenanceReport& map, bool dry_run) {
  std::string line = map.map + ": ";
  if (!map.status.ok()) return line + "failed: " + map.status.message();
  if (!map.has_shard) return line + "no shard yet (nothing merged here)";
  if (map.rows.asked) {
    const MaintainStats& s = map.rows.stats;
    line += std::to_string(s.rows_examined) + " rows examined, " + std::to_string(s.rows_deleted) +
            (dry_run ? " would be deleted" : " deleted") + " (retention), " + std::to_string(s.rows_condensed) +
            (dry_run ? " would be condensed" : " condensed");
    if (map.rows.keys_swept != 0) line += ", " + std::to_string(map.rows.keys_swept) + " keys swept";
  } else {
    line += "no condense or retain_for configured";
  }
  if (map.rows.batches_pruned != 0) {
    line += "; " + std::to_string(map.rows.batches_pruned) + " merged-batch records " +
            (dry_run ? "would be pruned" : "pruned");
  }
  if (map.rows.tombstones_pruned != 0) {
    line += "; " + std::to_string(map.rows.tombstones_pruned) + " tombstones " +
            (dry_run ? "would be pruned" : "pruned");
  }
  const int percent = static_cast<int>(map.free_share * 100 + 0.5);
  if (map.reclaimed) {
    line += std::string("; ") + (dry_run ? "would reclaim" : "reclaimed") + " " +
            HumanBytes(map.bytes_before - std::min(map.bytes_before, map.bytes_after)) + " (" + HumanBytes(map.bytes_before) +
            " -> " + HumanBytes(map.bytes_after) + ", " + std::to_string(percent) + "% was free)";
  } else {
    line += "; " + std::to_string(percent) + "% of " + HumanBytes(map.bytes_before) + " free";
  }
  return line;
}

std::vector<std::string> DescribeOrphans(const OrphanReport& orphans, int64_t delete_after_ms, bool dry_run) {
  std::vector<std::string> lines;
  for (const OrphanShard& shard : orphans.deleted) {
    lines.push_back("orphan shard " + shard.map + ": " + (dry_run ? "would be deleted" : "deleted") +
                    " (not configured since " + FormatIsoTime(shard.first_seen_ms) + ")");
  }
  for (const OrphanShard& shard : orphans.waiting) {
    int64_t until = 0;
    if (__builtin_add_overflow(shard.first_seen_ms, delete_after_ms, &until)) until = INT64_MAX;
    lines.push_back("orphan shard " + shard.map + ": not configured since " + FormatIsoTime(shard.first_seen_ms) +
                    ", kept until " + FormatIsoTime(until) + " (delete_orphans_after)");
  }
  return lines;
}

}  // namespace planb
