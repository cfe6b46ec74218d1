#include "host/cli/stores_output.h"

#include <algorithm>
#include <iomanip>

#include <nlohmann/json.hpp>

#include "host/commands/row_formats.h"
#include "host/common/csv.h"
#include "host/common/hex.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/storage/map_full.h"

namespace planb {
namespace {

using Json = nlohmann::ordered_json;

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

// Rounded; `floor`: rounded down, so that room left never reads 100% once anything is written.
std::optional<std::string> Percent(const std::optional<double>& share, bool floor = false) {
  if (!share) return std::nullopt;
  return std::to_string(static_cast<int>(*share * 100 + (floor ? 0.0 : 0.5))) + "%";
}

std::string Maps(const QuarantinedBatch& batch, const char* separator) {
  if (!batch.maps_known) return "unknown";
  std::string maps;
  for (const std::string& map : batch.maps) maps += (maps.empty() ? "" : separator) + map;
  return maps;
}

const SnapshotInfo* SnapshotOf(const StoresReport& report, const std::string& map) {
  if (!report.snapshots) return nullptr;
  for (const SnapshotInfo& info : *report.snapshots) {
    if (info.map == map) return &info;
  }
  return nullptr;
}

Json VersionJson(const ContentVersion& v) { return Json{{"batches", v.batches}, {"digest", Hex16(v.digest)}}; }

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

Json TimeJson(const std::optional<int64_t>& ms) { return ms ? Json(FormatIsoTime(*ms)) : Json(); }

}  // namespace

bool ParseStoresFormat(const std::string& text, StoresFormat* out) {
  if (text == "table") {
    *out = StoresFormat::kTable;
  } else if (text == "json") {
    *out = StoresFormat::kJson;
  } else if (text == "csv") {
    *out = StoresFormat::kCsv;
  } else {
    return false;
  }
  return true;
}

void PrintStoresTable(const StoresReport& report, std::ostream& out) {
  std::vector<std::vector<std::string>> table{{"MAP", "TYPE", "SCHEME", "ROWS", "VERSION", "BYTES", "FREE", "MAX_SIZE",
                                               "ROOM", "READ_INDEX", "STAGED", "QUARANTINED", "LAST_CONDENSED",
                                               "LAST_RECLAIMED"}};
  for (const StoreInfo& info : report.maps) {
    std::optional<std::string> version;
    if (info.version) version = std::to_string(info.version->batches);
    table.push_back({info.map, info.type, info.scheme, Cell(info, Text(info.rows)), Cell(info, version),
                     Cell(info, Text(info.bytes)), Cell(info, Percent(info.free_share)),
                     ByteSizeText(info.max_store_size), Cell(info, Percent(info.room_share, true)),
                     Cell(info, info.read_index_bytes ? Text(info.read_index_bytes) : info.read_index_note),
                     std::to_string(info.staged), std::to_string(info.quarantined),
                     Cell(info, TimeText(info.condensed_ms)), Cell(info, TimeText(info.reclaimed_ms))});
  }
  PrintTable(table, 3, out);
  for (const StoreInfo& info : report.maps) {
    if (!info.unavailable.empty()) {
      out << "unavailable: map " << info.map << ": " << LogValue(info.unavailable, 4096) << "\n";
    }
  }
  if (report.disk.known) {
    out << "disk: " << report.disk.free_bytes << " bytes free at " << report.home << " (loads keep "
        << report.disk.margin << " free)\n";
  }
  if (!report.quarantined.empty()) {
    out << "quarantined: " << report.quarantined.size() << " batch(es) in " << report.quarantine_dir << "\n";
  }
  for (size_t i = 0; i < report.quarantined.size(); ++i) {
    const QuarantinedBatch& batch = report.quarantined[i];
    out << "  " << batch.name << " (maps " << Maps(batch, ",") << "): " << batch.reason << "\n";
    if (i < report.release_hints.size()) out << "    " << report.release_hints[i] << "\n";
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

// The same facts as the table, typed: numbers as numbers, times as ISO-8601, null for "-" (nothing yet).
void PrintStoresJson(const StoresReport& report, std::ostream& out) {
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
                    {"max_store_size", info.max_store_size},
                    {"room_share", OrNull(info.room_share)},
                    {"read_index_bytes", OrNull(info.read_index_bytes)},
                    {"read_index_max_size", OrNull(info.read_index_max_size)},
                    {"read_index_note", info.read_index_bytes || info.read_index_note == "-" ? Json()
                                                                                            : Json(info.read_index_note)},
                    {"staged", info.staged},
                    {"quarantined", info.quarantined},
                    {"held", info.held},
                    {"last_condensed", TimeJson(info.condensed_ms)},
                    {"last_reclaimed", TimeJson(info.reclaimed_ms)},
                    {"unavailable", info.unavailable.empty() ? Json() : Json(info.unavailable)}});
  }
  Json quarantined = Json::array();
  for (size_t i = 0; i < report.quarantined.size(); ++i) {
    const QuarantinedBatch& batch = report.quarantined[i];
    quarantined.push_back({{"batch", batch.name},
                           {"maps", batch.maps_known ? Json(batch.maps) : Json()},
                           {"reason", batch.reason},
                           {"release", i < report.release_hints.size() ? Json(report.release_hints[i]) : Json()}});
  }
  Json held = Json::array();
  for (const HeldBatch& batch : report.held) {
    held.push_back({{"batch", batch.name}, {"map", batch.map}, {"behind", batch.by}});
  }
  Json disk = {{"home", report.home},
               {"free_bytes", report.disk.known ? Json(report.disk.free_bytes) : Json()},
               {"keep_free_bytes", report.disk.known ? Json(report.disk.margin) : Json()}};
  Json doc = {{"maps", maps}, {"quarantined", quarantined}, {"held", held}, {"disk", disk}};
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

// One record per map, the JSON document's "maps" flattened, and on a reader its snapshot's columns (empty on a
// storage node). Shares as decimal fractions (0.25), as JSON has them; times ISO-8601; absent: empty.
void PrintStoresCsv(const StoresReport& report, std::ostream& out) {
  static const char* const kHeader[] = {
      "map",          "type",           "scheme",      "measured",         "rows",         "content_version",
      "content_digest", "bytes",        "free_share",  "max_store_size",   "room_share",   "read_index_bytes",
      "read_index_max_size", "read_index_note", "staged",
      "quarantined",  "held",           "last_condensed", "last_reclaimed", "snapshot_version",
      "snapshot_digest", "snapshot_fetched", "snapshot_source", "unavailable"};
  std::string text;
  for (const char* name : kHeader) text += (text.empty() ? "" : ",") + std::string(name);
  text += "\n";
  const auto real = [](const std::optional<double>& v) { return v ? FormatReal(*v) : std::string(); };
  for (const StoreInfo& info : report.maps) {
    const SnapshotInfo* snapshot = SnapshotOf(report, info.map);
    const std::vector<std::string> fields = {
        info.map,
        info.type,
        info.scheme == "-" ? "" : info.scheme,
        info.failed ? "false" : "true",
        Text(info.rows).value_or(""),
        info.version ? std::to_string(info.version->batches) : "",
        info.version ? Hex16(info.version->digest) : "",
        Text(info.bytes).value_or(""),
        real(info.free_share),
        std::to_string(info.max_store_size),
        real(info.room_share),
        Text(info.read_index_bytes).value_or(""),
        Text(info.read_index_max_size).value_or(""),
        info.read_index_bytes || info.read_index_note == "-" ? "" : info.read_index_note,
        std::to_string(info.staged),
        std::to_string(info.quarantined),
        std::to_string(info.held),
        TimeText(info.condensed_ms).value_or(""),
        TimeText(info.reclaimed_ms).value_or(""),
        snapshot ? std::to_string(snapshot->version.batches) : "",
        snapshot ? Hex16(snapshot->version.digest) : "",
        snapshot ? FormatIsoTime(snapshot->create_time_ms) : "",
        snapshot ? snapshot->source_node : "",
        info.unavailable};
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) text += ",";
      AppendCsvField(fields[i], &text);
    }
    text += "\n";
  }
  out << text;
}

}  // namespace planb
