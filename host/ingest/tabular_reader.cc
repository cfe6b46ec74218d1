#include "host/ingest/tabular_reader.h"

#include <charconv>
#include <set>

#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/gz_input.h"
#include "host/ingest/tabular_rows.h"
#include "planb/duration.h"

namespace planb {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

Status CheckName(const std::optional<std::string>& column, const char* flag) {
  if (column && column->empty()) return Status::Invalid(std::string(flag) + ": an empty column name");
  return Status::Ok();
}

Status CheckList(const std::vector<std::string>& names, const char* flag) {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty()) return Status::Invalid(std::string(flag) + ": an empty column name (A,B,C)");
    if (!seen.insert(name).second) return Status::Invalid(std::string(flag) + ": column '" + name + "' named twice");
  }
  return Status::Ok();
}

// Whether `text` is a duration (ParseDuration) or a whole number of milliseconds.
bool ParseTimeout(std::string_view text, int64_t* ms) {
  if (ParseDuration(text, ms)) return true;
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *ms);
  return error == std::errc() && end == text.data() + text.size() && *ms >= 0;
}

}  // namespace

Status CheckTabularSpec(const TabularSpec& spec) {
  if (spec.map.empty()) return Status::Invalid("--map: the map the rows go to is required with --format csv|jsonl");
  for (const auto& [column, flag] : {std::pair{&spec.key, "--key"},
                                     {&spec.from, "--from"},
                                     {&spec.to, "--to"},
                                     {&spec.time, "--time"},
                                     {&spec.timeout, "--timeout-column"},
                                     {&spec.value, "--value"}}) {
    PLANB_RETURN_IF_ERROR(CheckName(*column, flag));
  }
  PLANB_RETURN_IF_ERROR(CheckList(spec.value_json, "--value-json"));
  PLANB_RETURN_IF_ERROR(CheckList(spec.columns, "--columns"));
  if (spec.format != TabularFormat::kCsv && (!spec.columns.empty() || spec.comments)) {
    return Status::Invalid("--columns and --comments apply only to --format csv");
  }
  if (spec.value && !spec.value_json.empty()) return Status::Invalid("give --value or --value-json, not both");
  if (spec.time_unit && !spec.time) return Status::Invalid("--time-unit applies only with --time COLUMN");
  const bool range = spec.from || spec.to;
  if (spec.kind == RecordKind::kSession) {
    if (range) return Status::Invalid("map " + spec.map + " is a session map: it takes --key, not --from/--to");
    if (!spec.key || !spec.time) return Status::Invalid("map " + spec.map + " is a session map: give --key and --time");
    if (spec.value || !spec.value_json.empty()) {
      return Status::Invalid("map " + spec.map + " is a session map: it takes no --value or --value-json");
    }
    return Status::Ok();
  }
  if (spec.timeout) return Status::Invalid("--timeout-column applies only to session maps");
  if (spec.key && range) return Status::Invalid("give --key or --from with --to, not both");
  if (!spec.key && !range) return Status::Invalid("give --key COLUMN, or --from COLUMN --to COLUMN for a range");
  if (range && (!spec.from || !spec.to)) return Status::Invalid("--from and --to go together");
  return Status::Ok();
}

TabularRows::TabularRows(const std::string& name, const TabularSpec& spec, int64_t effective_time_ms,
                         const RecordHandler& handler)
    : name_(name), spec_(spec), effective_time_ms_(effective_time_ms), handler_(handler), map_(spec.map) {
  for (char& c : map_) c = Lower(c);
}

Status TabularRows::Fail(uint64_t line, const std::string& what) const {
  return Status::Invalid(name_ + ":" + std::to_string(line) + ": " + what);
}

Status TabularRows::Hand(uint64_t line, const RowTexts& texts) {
  ParsedRecord out;
  out.map = map_;
  out.line = line;
  out.column = 1;
  Record& r = out.record;
  r.kind = spec_.kind;
  if (spec_.key) {
    if (texts.key.empty()) return Fail(line, "empty key (column '" + *spec_.key + "')");
    r.has_key = true;
    r.key = Bytes(texts.key);
  }
  if (spec_.from) {
    r.has_range = true;
    r.range_from = Bytes(texts.from);
    r.range_to = Bytes(texts.to);
  }
  r.time_ms = effective_time_ms_;
  if (spec_.time) {
    const TimeUnit unit = spec_.time_unit.value_or(TimeUnit::kMilliseconds);
    if (!ParseTimeOrEpoch(texts.time, unit, &r.time_ms)) {
      return Fail(line, "unreadable time " + QuoteText(texts.time) + " (column '" + *spec_.time +
                            "'): expected ISO-8601 such as 2024-01-01T08:10:22.023Z or " + EpochUnitWords(unit) +
                            " (--time-unit " + TimeUnitName(unit) + ")");
    }
    r.time_given = true;
  }
  if (spec_.timeout) {
    if (!ParseTimeout(texts.timeout, &r.timeout_ms)) {
      return Fail(line, "unreadable timeout " + QuoteText(texts.timeout) + " (column '" + *spec_.timeout +
                            "'): expected a duration such as 15m, 30s, 500ms or PT15M, or milliseconds");
    }
    r.has_timeout = true;
  }
  if (spec_.value || !spec_.value_json.empty()) {
    r.has_value = true;
    r.value_type = texts.value_is_json ? ValueType::kJson : ValueType::kString;
    r.value = Bytes(texts.value);
  }
  Status s = handler_(out);
  if (!s.ok()) return Status(s.code(), name_ + ":" + std::to_string(line) + ": " + s.message());
  return Status::Ok();
}

std::string QuoteText(std::string_view text) { return "'" + LogValue(text, 64) + "'"; }

Status ReadTabular(std::istream& in, const std::string& name, const TabularSpec& spec, int64_t effective_time_ms,
                   const RecordHandler& handler) {
  PLANB_RETURN_IF_ERROR(CheckTabularSpec(spec));
  TabularRows rows(name, spec, effective_time_ms, handler);
  // Compressed input would otherwise fail as "invalid UTF-8" or "not a JSON object".
  const int first = in.peek();
  if (first == 0x1F) {
    in.get();
    const bool gzip = in.peek() == 0x8B;
    in.unget();
    if (gzip) {
      return Status::Invalid(name + ": gzip-compressed; decompress it first, e.g. zcat " + name +
                             " | planb load ... -");
    }
  }
  in.clear();
  return spec.format == TabularFormat::kCsv ? ReadCsvRows(in, &rows) : ReadJsonLines(in, &rows);
}

Status ReadTabularFile(const std::string& path, const TabularSpec& spec, int64_t effective_time_ms,
                       const RecordHandler& handler) {
  GzInput in;
  PLANB_RETURN_IF_ERROR(in.Open(path));
  const Status s = ReadTabular(in, path == "-" ? "stdin" : path, spec, effective_time_ms, handler);
  // A corrupt or truncated gzip stream ends the input early: that, not what the cut left, is the error.
  if (!in.status().ok()) return in.status();
  return s;
}

}  // namespace planb
