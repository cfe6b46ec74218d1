#include "host/cli/bench_output.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace planb {
namespace {

// A cell: text, a number (printed with `decimals`), or absent (table "-", CSV empty, JSON null).
struct Cell {
  enum class Kind { kText, kNumber, kBool, kAbsent } kind = Kind::kAbsent;
  std::string text;
  double number = 0;
  int decimals = 0;
  bool flag = false;
};

Cell TextCell(std::string text) { return Cell{Cell::Kind::kText, std::move(text)}; }
Cell NumberCell(double n, int decimals = 0) { return Cell{Cell::Kind::kNumber, "", n, decimals}; }
Cell BoolCell(bool b) { return Cell{Cell::Kind::kBool, "", 0, 0, b}; }
Cell MaybeNumber(const std::optional<uint64_t>& n) { return n ? NumberCell(static_cast<double>(*n)) : Cell{}; }

struct Field {
  const char* name;
  bool in_table;  // the table leaves the long texts to the lines under it
  bool numeric;   // right-aligned in the table
};

constexpr Field kFields[] = {
    {"map", true, false},
    {"type", false, false},
    {"scheme", true, false},
    {"value_dedup", true, false},
    {"configured", true, false},
    {"records", true, true},
    {"rows", true, true},
    {"load_rows_per_s", true, true},
    {"merge_rows_per_s", true, true},
    {"hit_p50_ns", true, true},
    {"hit_p99_ns", true, true},
    {"miss_p50_ns", true, true},
    {"miss_p99_ns", true, true},
    {"hit_lookups", true, true},
    {"miss_lookups", true, true},
    {"bytes_per_row", true, true},
    {"data_bytes", false, true},
    {"key_table_bytes", true, true},
    {"value_table_bytes", true, true},
    {"recommended", true, false},
    {"recommendation", false, false},
    {"unusable", false, false},
};
constexpr size_t kBaseFieldCount = sizeof(kFields) / sizeof(kFields[0]);
// With the raw LMDB baseline (bench --type): each figure's time relative to raw LMDB's (1.00 = as fast).
constexpr Field kRatioFields[] = {
    {"load_x_raw", true, true},
    {"merge_x_raw", true, true},
    {"hit_p50_x_raw", true, true},
    {"miss_p50_x_raw", true, true},
};
constexpr char kRawScheme[] = "raw-lmdb";

std::vector<Field> FieldsOf(const BenchResult& result) {
  std::vector<Field> fields(std::begin(kFields), std::end(kFields));
  if (result.raw_baseline) fields.insert(fields.end(), std::begin(kRatioFields), std::end(kRatioFields));
  return fields;
}

// a / b to two decimals, absent when either is not a positive figure.
Cell Ratio(double a, double b) {
  if (!(a > 0) || !(b > 0)) return Cell{};
  return NumberCell(std::round(a / b * 100) / 100, 2);
}

void AddRatios(const MapResult& map, const SchemeResult& r, std::vector<Cell>* cells) {
  if (!map.raw || !r.figures) {
    cells->insert(cells->end(), 4, Cell{});
    return;
  }
  const TrialFigures& f = *r.figures;
  const TrialFigures& raw = *map.raw;
  cells->push_back(Ratio(raw.load_rows_per_s, f.load_rows_per_s));
  cells->push_back(Ratio(raw.merge_rows_per_s, f.merge_rows_per_s));
  cells->push_back(f.hits.lookups > 0 && raw.hits.lookups > 0 ? Ratio(f.hits.p50_ns, raw.hits.p50_ns) : Cell{});
  cells->push_back(f.misses.lookups > 0 && raw.misses.lookups > 0 ? Ratio(f.misses.p50_ns, raw.misses.p50_ns) : Cell{});
}

std::vector<Cell> Cells(const MapResult& map, const SchemeResult& r) {
  std::vector<Cell> cells{TextCell(map.map), TextCell(map.type), TextCell(r.scheme), BoolCell(r.value_dedup),
                          BoolCell(r.scheme == map.configured_scheme && r.value_dedup == map.configured_value_dedup)};
  if (r.figures) {
    const TrialFigures& f = *r.figures;
    const bool rows = f.sizes.rows > 0;
    auto latency = [](const LatencyFigures& l, double v) { return l.lookups > 0 ? NumberCell(std::round(v)) : Cell{}; };
    cells.insert(cells.end(),
                 {NumberCell(static_cast<double>(f.records)), NumberCell(static_cast<double>(f.sizes.rows)),
                  NumberCell(std::round(f.load_rows_per_s)), NumberCell(std::round(f.merge_rows_per_s)),
                  latency(f.hits, f.hits.p50_ns), latency(f.hits, f.hits.p99_ns), latency(f.misses, f.misses.p50_ns),
                  latency(f.misses, f.misses.p99_ns), NumberCell(static_cast<double>(f.hits.lookups)),
                  NumberCell(static_cast<double>(f.misses.lookups)),
                  rows ? NumberCell(std::round(r.bytes_per_row() * 10) / 10, 1) : Cell{},
                  NumberCell(static_cast<double>(f.sizes.file_bytes)), MaybeNumber(f.sizes.key_table_bytes),
                  MaybeNumber(f.sizes.value_table_bytes)});
  } else {
    cells.insert(cells.end(), 14, Cell{});
  }
  cells.push_back(BoolCell(r.recommended));
  cells.push_back(TextCell(map.recommendation));
  cells.push_back(r.unusable.empty() ? Cell{} : TextCell(r.unusable));
  return cells;
}

// The rows of `map`: one per scheme, then (with the baseline) raw LMDB's.
std::vector<std::vector<Cell>> MapRows(const BenchResult& result, const MapResult& map) {
  std::vector<std::vector<Cell>> rows;
  std::vector<SchemeResult> schemes = map.schemes;
  if (result.raw_baseline && map.raw) {
    SchemeResult raw;
    raw.scheme = kRawScheme;
    raw.figures = map.raw;
    schemes.push_back(std::move(raw));
  }
  for (const SchemeResult& r : schemes) {
    std::vector<Cell> cells = Cells(map, r);
    if (result.raw_baseline) {
      AddRatios(map, r, &cells);
      if (r.scheme == kRawScheme) cells[4] = BoolCell(false);  // "configured": raw LMDB never is
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::string Plain(const Cell& c, const char* absent) {
  switch (c.kind) {
    case Cell::Kind::kText:
      return c.text;
    case Cell::Kind::kBool:
      return c.flag ? "true" : "false";
    case Cell::Kind::kAbsent:
      return absent;
    case Cell::Kind::kNumber:
      break;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", c.decimals, c.number);
  return text;
}

void PrintCsv(const BenchResult& result, std::ostream& out) {
  const std::vector<Field> fields = FieldsOf(result);
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i].name;
  out << "\n";
  for (const MapResult& map : result.maps) {
    for (const std::vector<Cell>& cells : MapRows(result, map)) {
      for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << CsvField(Plain(cells[i], ""));
      out << "\n";
    }
  }
}

void PrintJson(const BenchResult& result, std::ostream& out) {
  const std::vector<Field> fields = FieldsOf(result);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MapResult& map : result.maps) {
    for (const std::vector<Cell>& cells : MapRows(result, map)) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (size_t i = 0; i < cells.size(); ++i) {
        const Cell& c = cells[i];
        nlohmann::ordered_json& v = row[fields[i].name];
        if (c.kind == Cell::Kind::kText)
          v = c.text;
        else if (c.kind == Cell::Kind::kBool)
          v = c.flag;
        else if (c.kind == Cell::Kind::kAbsent)
          v = nullptr;
        else if (c.decimals == 0)
          v = static_cast<uint64_t>(c.number);
        else
          v = c.number;
      }
      rows.push_back(std::move(row));
    }
  }
  out << rows.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// Display width in characters (UTF-8 continuation bytes do not count).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void PrintTable(const BenchResult& result, std::ostream& out) {
  const std::vector<Field> fields = FieldsOf(result);
  std::vector<size_t> columns;  // indices into fields
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].in_table) columns.push_back(i);
  }
  std::vector<std::vector<std::string>> lines(1);
  for (size_t i : columns) lines[0].push_back(fields[i].name);
  for (const MapResult& map : result.maps) {
    for (const std::vector<Cell>& cells : MapRows(result, map)) {
      std::vector<std::string> line;
      for (size_t i : columns) {
        const bool ratio = i >= kBaseFieldCount && cells[i].kind == Cell::Kind::kNumber;
        line.push_back(Plain(cells[i], "-") + (ratio ? "x" : ""));
      }
      lines.push_back(std::move(line));
    }
  }
  std::vector<size_t> widths(columns.size(), 0);
  for (const auto& l : lines) {
    for (size_t c = 0; c < l.size(); ++c) widths[c] = std::max(widths[c], Width(l[c]));
  }
  for (const auto& l : lines) {
    for (size_t c = 0; c < l.size(); ++c) {
      const std::string pad(widths[c] - Width(l[c]), ' ');
      const bool last = c + 1 == l.size();
      out << (c == 0 ? "" : "  ") << (fields[columns[c]].numeric ? pad + l[c] : last ? l[c] : l[c] + pad);
    }
    out << "\n";
  }
  for (const MapResult& map : result.maps) {
    out << "\n"
        << map.map << " (" << map.type << ", configured " << map.configured_scheme << "): recommended "
        << map.recommendation << "\n";
    for (const SchemeResult& r : map.schemes) {
      if (!r.unusable.empty()) out << "  " << r.label() << ": cannot hold the map's data: " << r.unusable << "\n";
    }
  }
  out << "\nLookups measured per scheme and run: hit_lookups and miss_lookups (up to " << result.lookups_asked
      << " each); each figure is the median of " << result.runs << " run(s).\n";
  if (result.raw_baseline) {
    out << "raw-lmdb: the same keys and values put into plain LMDB files (one mdb_put per row, one transaction per "
           "file, then per batch into the shard) and read with mdb_get; the x_raw columns give each figure's time "
           "relative to it (1.00x = as fast as raw LMDB).\n";
  }
}

}  // namespace

void PrintBenchResult(const BenchResult& result, OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kCsv:
      return PrintCsv(result, out);
    case OutputFormat::kJson:
      return PrintJson(result, out);
    case OutputFormat::kTable:
      return PrintTable(result, out);
  }
}

}  // namespace planb
