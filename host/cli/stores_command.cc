// `planb stores [--format table|json]`: each configured map's shard (type, scheme, rows, content version, bytes, free
// share, maintenance marks), the merge queue's trouble (quarantined and held batches) and, on a reader, its
// snapshots. `--cluster` asks every storage node instead (cluster_versions.h).
#include <filesystem>
#include <iomanip>
#include <optional>

#include <nlohmann/json.hpp>

#include "host/cli/cluster_versions.h"
#include "host/cli/commands.h"
#include "host/common/hex.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/quarantine.h"
#include "host/maintain/maintenance_marks.h"
#include "host/snapshot/snapshot_manager.h"
#include "host/storage/content_version.h"
#include "host/storage/shard_space.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

using Json = nlohmann::ordered_json;

// One map as this node holds it; absent fields: nothing merged yet (or never maintained).
struct StoreInfo {
  std::string map, type, scheme;
  bool failed = false;  // the shard could not be measured (its error went to stderr)
  std::optional<uint64_t> rows, bytes;
  std::optional<double> free_share;
  std::optional<ContentVersion> version;
  std::optional<int64_t> condensed_ms, reclaimed_ms;
};

struct StoresReport {
  std::vector<StoreInfo> maps;
  std::vector<QuarantinedBatch> quarantined;
  std::vector<HeldBatch> held;
  std::optional<std::vector<SnapshotInfo>> snapshots;  // a reader's; absent on a storage node
};

Status Measure(Runtime& runtime, StoreInfo* info) {
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenShard(info->map, &shard);
  if (s.code() == Code::kNotFound) return Status::Ok();
  PLANB_RETURN_IF_ERROR(s);
  ShardSpace space;
  PLANB_RETURN_IF_ERROR(MeasureShard(*shard, &space).WithContext(shard->path()));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(shard->env(), MDB_RDONLY).WithContext(shard->path()));
  MaintenanceMarks marks;
  PLANB_RETURN_IF_ERROR(ReadMaintenanceMarks(txn.get(), shard->meta(), &marks).WithContext(shard->path()));
  ContentVersion version;
  PLANB_RETURN_IF_ERROR(ReadContentVersion(txn.get(), shard->meta(), &version).WithContext(shard->path()));
  info->rows = space.rows;
  info->bytes = space.file_bytes;
  info->free_share = space.free_share;
  info->version = version;
  info->condensed_ms = marks.last_condensed_ms;
  info->reclaimed_ms = marks.last_reclaimed_ms;
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

std::string Cell(const StoreInfo& info, const std::optional<std::string>& value) {
  if (info.failed) return "?";
  return value.value_or("-");
}

template <typename T>
std::optional<std::string> Text(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

std::optional<std::string> TimeText(const std::optional<int64_t>& ms) {
  if (!ms) return std::nullopt;
  return FormatIsoTime(*ms);
}

void PrintReportTable(const StoresReport& report, const Runtime& runtime, std::ostream& out) {
  std::vector<std::vector<std::string>> table{
      {"MAP", "TYPE", "SCHEME", "ROWS", "VERSION", "BYTES", "FREE", "LAST_CONDENSED", "LAST_RECLAIMED"}};
  for (const StoreInfo& info : report.maps) {
    std::optional<std::string> free;
    if (info.free_share) free = std::to_string(static_cast<int>(*info.free_share * 100 + 0.5)) + "%";
    std::optional<std::string> version;
    if (info.version) version = std::to_string(info.version->batches);
    table.push_back({info.map, info.type, info.scheme, Cell(info, Text(info.rows)), Cell(info, version),
                     Cell(info, Text(info.bytes)), Cell(info, free), Cell(info, TimeText(info.condensed_ms)),
                     Cell(info, TimeText(info.reclaimed_ms))});
  }
  PrintTable(table, 3, out);
  if (!report.quarantined.empty()) {
    out << "quarantined: " << report.quarantined.size() << " batch(es) in " << QuarantineDir(runtime.home()) << "\n";
  }
  for (const QuarantinedBatch& batch : report.quarantined) {
    std::string maps;
    for (const std::string& map : batch.maps) maps += (maps.empty() ? "" : ",") + map;
    out << "  " << batch.name << " (maps " << (batch.maps_known ? maps : "unknown") << "): " << batch.reason << "\n";
  }
  for (const HeldBatch& batch : report.held) {
    out << "blocked: map " << batch.map << ": staged batch " << batch.name << " held back behind " << batch.by << "\n";
  }
  if (!report.snapshots) return;
  out << "\nsnapshots (this node reads copies fetched from the storage nodes):\n";
  std::vector<std::vector<std::string>> lines{{"MAP", "VERSION", "AGE", "SOURCE", "FETCHED"}};
  const int64_t now = CurrentTimeMs();
  for (const SnapshotInfo& info : *report.snapshots) {
    const int64_t age_s = std::max<int64_t>(0, now - info.create_time_ms) / 1000;
    lines.push_back({info.map, std::to_string(info.version.batches), std::to_string(age_s) + "s",
                     info.source_node.empty() ? "-" : info.source_node, FormatIsoTime(info.create_time_ms)});
  }
  PrintTable(lines, 1, out);
  // Said after the table, whole: a snapshot whose version no storage node has (see refresh --accept-older).
  for (const SnapshotInfo& info : *report.snapshots) {
    if (!info.ahead_of_nodes.empty()) out << "WARNING: " << info.map << ": " << info.ahead_of_nodes << "\n";
  }
}

Json VersionJson(const ContentVersion& v) { return Json{{"batches", v.batches}, {"digest", Hex16(v.digest)}}; }

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

Json TimeJson(const std::optional<int64_t>& ms) { return ms ? Json(FormatIsoTime(*ms)) : Json(); }

// The same facts as the table, typed: numbers as numbers, times as ISO-8601, null for "-" (nothing yet).
void PrintReportJson(const StoresReport& report, std::ostream& out) {
  Json maps = Json::array();
  for (const StoreInfo& info : report.maps) {
    maps.push_back({{"map", info.map},
                    {"type", info.type},
                    {"scheme", info.scheme == "-" ? Json() : Json(info.scheme)},
                    {"measured", !info.failed},
                    {"rows", OrNull(info.rows)},
                    {"content_version", info.version ? VersionJson(*info.version) : Json()},
                    {"bytes", OrNull(info.bytes)},
                    {"free_share", OrNull(info.free_share)},
                    {"last_condensed", TimeJson(info.condensed_ms)},
                    {"last_reclaimed", TimeJson(info.reclaimed_ms)}});
  }
  Json quarantined = Json::array();
  for (const QuarantinedBatch& batch : report.quarantined) {
    quarantined.push_back({{"batch", batch.name},
                           {"maps", batch.maps_known ? Json(batch.maps) : Json()},
                           {"reason", batch.reason}});
  }
  Json held = Json::array();
  for (const HeldBatch& batch : report.held) {
    held.push_back({{"batch", batch.name}, {"map", batch.map}, {"behind", batch.by}});
  }
  Json doc = {{"maps", maps}, {"quarantined", quarantined}, {"held", held}};
  if (report.snapshots) {
    Json snapshots = Json::array();
    for (const SnapshotInfo& info : *report.snapshots) {
      snapshots.push_back({{"map", info.map},
                           {"content_version", VersionJson(info.version)},
                           {"fetched", FormatIsoTime(info.create_time_ms)},
                           {"source", info.source_node.empty() ? Json() : Json(info.source_node)},
                           {"ahead_of_nodes", info.ahead_of_nodes.empty() ? Json() : Json(info.ahead_of_nodes)}});
    }
    doc["snapshots"] = snapshots;
  }
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

int RunStoresCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string format = cli.format.value_or("table");
  if (format != "table" && format != "json") {
    err << "planb: stores: --format: '" << LogValue(format) << "' is not one of table, json\n";
    return kExitError;
  }
  if (cli.cluster) return PrintClusterVersions(runtime, format == "json", out, err);
  StoresReport report;
  int exit_code = kExitOk;
  for (const auto& [name, plugins] : runtime.catalog().maps()) {
    StoreInfo info;
    info.map = name;
    info.type = plugins->type_descriptor().name;
    info.scheme = plugins->scheme_descriptor() ? plugins->scheme_descriptor()->name : "-";
    Status s = Measure(runtime, &info);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      info = StoreInfo{info.map, info.type, info.scheme, true};
      exit_code = kExitError;
    }
    report.maps.push_back(std::move(info));
  }
  // A storage node's merge queue: batches in quarantine/ and the staged batches held back behind them.
  Status inspected = InspectQuarantine(runtime.home(), &report.quarantined, &report.held);
  if (!inspected.ok()) {
    err << "planb: " << inspected.message() << "\n";
    exit_code = kExitError;
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
  if (format == "json") {
    PrintReportJson(report, out);
  } else {
    PrintReportTable(report, runtime, out);
  }
  return exit_code;
}

}  // namespace planb
