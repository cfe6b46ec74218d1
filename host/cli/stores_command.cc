// `planb stores [--format table|json|csv]`: each configured map's shard (type, scheme, rows, content version,
// bytes, free share, room left in max_store_size, the read index a Reader keeps of it, batches staged and
// quarantined, maintenance marks), the merge queue's trouble (quarantined and held batches) and, on a reader, its snapshots (printed by stores_output.h).
// `--cluster` asks every storage node instead (cluster_versions.h).
#include <algorithm>
#include <filesystem>
#include <optional>

#include "host/cli/cluster_versions.h"
#include "host/cli/commands.h"
#include "host/cli/stores_output.h"
#include "host/common/disk_room.h"
#include "host/common/log_text.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/maintain/shard_figures.h"
#include "host/reader/answer_index.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_space.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

// The read index a Reader would build of the shard now, built here to be measured (a read of every row, and for
// a ranged map one lookup per range boundary: about half a second for 400,000 ranges).
Status MeasureReadIndex(Runtime& runtime, StoreInfo* info) {
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(runtime.catalog().Get(info->map, &plugins));
  if (ReadIndexKindOf(*plugins) == ReadIndexKind::kNone) return Status::Ok();
  const uint64_t limit = plugins->config().read_index_max_size;
  info->read_index_max_size = limit;
  if (limit == 0) {
    info->read_index_note = "off";
    return Status::Ok();
  }
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(info->map, &env));
  std::shared_ptr<const AnswerIndex> index;
  Status built = BuildAnswerIndex(env, limit, /*stop=*/nullptr, &index);
  if (built.code() == Code::kFull) {
    info->read_index_note = "over";
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(built);
  info->read_index_bytes = index->bytes();
  return Status::Ok();
}

Status Measure(Runtime& runtime, StoreInfo* info) {
  ShardFigures figures;
  Status s = MeasureShardFigures(runtime, info->map, &figures);
  if (s.code() == Code::kNotFound) return Status::Ok();  // nothing merged yet: no figures
  PLANB_RETURN_IF_ERROR(s);
  const ShardSpace& space = figures.space;
  info->rows = space.rows;
  info->bytes = space.file_bytes;
  info->free_share = space.free_share;
  // As the load's room check counts the shard's use (load_check.cc): up to its last page, free pages included.
  const double used = static_cast<double>(space.last_page + 1) * static_cast<double>(space.page_size);
  const double limit = static_cast<double>(info->max_store_size);
  info->room_share = limit <= 0 ? 0.0 : std::max(0.0, 1.0 - used / limit);
  info->version = figures.version;
  info->condensed_ms = figures.marks.last_condensed_ms;
  info->reclaimed_ms = figures.marks.last_reclaimed_ms;
  return MeasureReadIndex(runtime, info);
}

bool Touches(const std::vector<std::string>& maps, bool maps_known, const std::string& map) {
  return !maps_known || std::find(maps.begin(), maps.end(), map) != maps.end();
}

// Per map: the batches staged for it (held ones too), quarantined with it, and held back behind a quarantined one.
// A batch whose maps cannot be read may touch any map, as the merge processor holds it (quarantine.h). Reads
// only: a home without staging/ (a reader's) has none staged.
Status CountBatches(const Home& home, StoresReport* report) {
  std::vector<StagedBatch> staged;
  std::error_code ec;
  if (fs::exists(home.staging(), ec)) PLANB_RETURN_IF_ERROR(StagingStore(home).List(&staged));
  for (const StagedBatch& batch : staged) {
    std::vector<std::string> maps;
    const bool known = ListBatchMaps(batch.path, &maps).ok();
    if (!known && !fs::exists(batch.path, ec)) continue;  // merged meanwhile
    for (StoreInfo& info : report->maps) info.staged += Touches(maps, known, info.map) ? 1 : 0;
  }
  for (const QuarantinedBatch& batch : report->quarantined) {
    for (StoreInfo& info : report->maps) info.quarantined += Touches(batch.maps, batch.maps_known, info.map) ? 1 : 0;
  }
  for (const HeldBatch& batch : report->held) {
    std::vector<std::string> maps;
    const bool known = ListBatchMaps(home.staging() + "/" + batch.name, &maps).ok();
    for (StoreInfo& info : report->maps) info.held += known && Touches(maps, true, info.map) ? 1 : 0;
  }
  return Status::Ok();
}

}  // namespace

int RunStoresCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  StoresFormat format = StoresFormat::kTable;
  if (!ParseStoresFormat(cli.format.value_or("table"), &format)) {
    err << "planb: stores: --format: '" << LogValue(*cli.format) << "' is not one of table, json, csv\n";
    return kExitError;
  }
  // Without a config there are no maps: an empty list would read as "nothing loaded" (issue 40). --config names
  // a file that must exist (the runtime refuses it otherwise); the default is ./planb.ini when present.
  if (runtime.config().path.empty()) {
    std::error_code ec;
    err << "planb: stores: no config: " << fs::absolute("planb.ini", ec).string()
        << " (the default) was not found; give --config FILE\n";
    return kExitError;
  }
  if (cli.cluster) return PrintClusterVersions(runtime, format, out, err);
  StoresReport report;
  int exit_code = kExitOk;
  for (const auto& [name, plugins] : runtime.catalog().maps()) {
    StoreInfo info;
    info.map = name;
    info.type = plugins->type_descriptor().name;
    info.scheme = plugins->scheme_descriptor() ? plugins->scheme_descriptor()->name : "-";
    info.max_store_size = plugins->config().max_store_size;
    Status s = Measure(runtime, &info);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      StoreInfo failed;
      failed.map = info.map;
      failed.type = info.type;
      failed.scheme = info.scheme;
      failed.failed = true;
      failed.max_store_size = info.max_store_size;
      info = std::move(failed);
      exit_code = kExitError;
    }
    report.maps.push_back(std::move(info));
  }
  // A configured map set aside because a plugin it needs did not load is listed too, with why: leaving it out
  // would read as "not configured", and the command fails so that a script notices.
  for (const auto& [name, why] : runtime.catalog().unavailable()) {
    StoreInfo info;
    info.map = name;
    const auto configured = runtime.config().maps.find(name);
    if (configured != runtime.config().maps.end()) {
      info.type = configured->second.type;
      info.scheme = configured->second.scheme.empty() ? "-" : configured->second.scheme;
      info.max_store_size = configured->second.max_store_size;
    }
    info.failed = true;
    info.unavailable = why.message();
    err << "planb: stores: map '" << LogValue(name) << "' is not available: " << LogValue(why.message(), 4096) << "\n";
    exit_code = kExitError;
    report.maps.push_back(std::move(info));
  }
  std::sort(report.maps.begin(), report.maps.end(),
            [](const StoreInfo& a, const StoreInfo& b) { return a.map < b.map; });
  report.home = runtime.home().root();
  report.disk = MeasureDiskRoom(report.home);
  // A storage node's merge queue: batches in quarantine/ and the staged batches held back behind them.
  report.quarantine_dir = QuarantineDir(runtime.home());
  Status inspected = InspectQuarantine(runtime.home(), &report.quarantined, &report.held);
  if (inspected.ok()) inspected = CountBatches(runtime.home(), &report);
  if (!inspected.ok()) {
    err << "planb: " << inspected.message() << "\n";
    exit_code = kExitError;
  }
  for (const QuarantinedBatch& batch : report.quarantined) {
    report.release_hints.push_back(QuarantineReleaseHint(runtime.home(), batch.name));
  }
  if (!runtime.config().cluster.IsStorageNode()) {
    std::vector<SnapshotInfo> infos;
    Status s = runtime.snapshots()->Describe(&infos);
    if (s.ok()) {
      report.snapshots = std::move(infos);
    } else {
      err << "planb: " << s.message() << "\n";
      exit_code = kExitError;
    }
  }
  switch (format) {
    case StoresFormat::kTable: PrintStoresTable(report, out); break;
    case StoresFormat::kJson: PrintStoresJson(report, out); break;
    case StoresFormat::kCsv: PrintStoresCsv(report, out); break;
  }
  return exit_code;
}

}  // namespace planb
