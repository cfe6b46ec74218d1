#include <filesystem>
#include <iomanip>
#include <optional>

#include "host/cli/cluster_versions.h"
#include "host/cli/commands.h"
#include "host/common/iso_time.h"
#include "host/ingest/quarantine.h"
#include "host/maintain/maintenance_marks.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_space.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

struct StoreLine {
  std::string map, type, scheme, rows, version, bytes, free, condensed, reclaimed;
};

std::string MarkText(const std::optional<int64_t>& ms) { return ms ? FormatIsoTime(*ms) : "-"; }

// Rows in the data table, bytes of data.mdb, the share of it free (docs/maintenance.md) and when maintenance
// last condensed and reclaimed; "-" when nothing has been merged yet (or never maintained).
Status Measure(Runtime& runtime, const std::string& map, StoreLine* line) {
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenShard(map, &shard);
  if (s.code() == Code::kNotFound) {
    line->rows = line->version = line->bytes = line->free = line->condensed = line->reclaimed = "-";
    return Status::Ok();
  }
  PLANB_RETURN_IF_ERROR(s);
  ShardSpace space;
  PLANB_RETURN_IF_ERROR(MeasureShard(*shard, &space).WithContext(shard->path()));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  MaintenanceMarks marks;
  PLANB_RETURN_IF_ERROR(ReadMaintenanceMarks(txn.get(), shard->meta(), &marks).WithContext(shard->path()));
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard->meta(), &version).WithContext(shard->path()));
  line->rows = std::to_string(space.rows);
  line->version = std::to_string(version.batches);
  line->bytes = std::to_string(space.file_bytes);
  line->free = std::to_string(static_cast<int>(space.free_share * 100 + 0.5)) + "%";
  line->condensed = MarkText(marks.last_condensed_ms);
  line->reclaimed = MarkText(marks.last_reclaimed_ms);
  return Status::Ok();
}

// Prints `lines` as a table: columns left-aligned from `right_from` on right-aligned, two spaces apart.
void PrintTable(const std::vector<std::vector<std::string>>& lines, size_t right_from, std::ostream& out) {
  std::vector<size_t> widths(lines.front().size(), 0);
  for (const auto& l : lines) {
    for (size_t i = 0; i < l.size(); ++i) widths[i] = std::max(widths[i], l[i].size());
  }
  for (const auto& l : lines) {
    for (size_t i = 0; i < l.size(); ++i) {
      out << (i == 0 ? "" : "  ") << (i < right_from ? std::left : std::right)
          << std::setw(static_cast<int>(widths[i])) << l[i];
    }
    out << "\n";
  }
}

// A reader's snapshots: what its lookups and queries see, how old, and from which node.
int PrintSnapshots(Runtime& runtime, std::ostream& out, std::ostream& err) {
  std::vector<SnapshotInfo> infos;
  Status s = runtime.snapshots()->Describe(&infos);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  out << "\nsnapshots (this node reads copies fetched from the storage nodes):\n";
  std::vector<std::vector<std::string>> lines{{"MAP", "VERSION", "AGE", "SOURCE", "FETCHED"}};
  const int64_t now = CurrentTimeMs();
  for (const SnapshotInfo& info : infos) {
    const int64_t age_s = std::max<int64_t>(0, now - info.create_time_ms) / 1000;
    lines.push_back({info.map, std::to_string(info.version.batches), std::to_string(age_s) + "s",
                     info.source_node.empty() ? "-" : info.source_node, FormatIsoTime(info.create_time_ms)});
  }
  PrintTable(lines, 1, out);
  // Said after the table, whole: a snapshot whose version no storage node has (see refresh --accept-older).
  for (const SnapshotInfo& info : infos) {
    if (!info.ahead_of_nodes.empty()) out << "WARNING: " << info.map << ": " << info.ahead_of_nodes << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunStoresCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (cli.cluster) return PrintClusterVersions(runtime, out, err);
  std::vector<std::vector<std::string>> table{
      {"MAP", "TYPE", "SCHEME", "ROWS", "VERSION", "BYTES", "FREE", "LAST_CONDENSED", "LAST_RECLAIMED"}};
  int exit_code = kExitOk;
  for (const auto& [name, plugins] : runtime.catalog().maps()) {
    StoreLine line;
    line.map = name;
    line.type = plugins->type_descriptor().name;
    line.scheme = plugins->scheme_descriptor() ? plugins->scheme_descriptor()->name : "-";
    Status s = Measure(runtime, name, &line);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      line.rows = line.version = line.bytes = line.free = line.condensed = line.reclaimed = "?";
      exit_code = kExitError;
    }
    table.push_back({line.map, line.type, line.scheme, line.rows, line.version, line.bytes, line.free,
                     line.condensed, line.reclaimed});
  }
  PrintTable(table, 3, out);
  // A storage node's merge queue: batches in quarantine/ and the staged batches held back behind them.
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  Status inspected = InspectQuarantine(runtime.home(), &quarantined, &held);
  if (!inspected.ok()) {
    err << "planb: " << inspected.message() << "\n";
    exit_code = kExitError;
  }
  if (!quarantined.empty()) {
    out << "quarantined: " << quarantined.size() << " batch(es) in " << QuarantineDir(runtime.home()) << "\n";
  }
  for (const QuarantinedBatch& batch : quarantined) {
    std::string maps;
    for (const std::string& map : batch.maps) maps += (maps.empty() ? "" : ",") + map;
    out << "  " << batch.name << " (maps " << (batch.maps_known ? maps : "unknown") << "): "
        << batch.reason << "\n";
  }
  for (const HeldBatch& batch : held) {
    out << "blocked: map " << batch.map << ": staged batch " << batch.name << " held back behind " << batch.by << "\n";
  }
  if (!runtime.config().cluster.IsStorageNode() && PrintSnapshots(runtime, out, err) != kExitOk) {
    exit_code = kExitError;
  }
  return exit_code;
}

}  // namespace planb
