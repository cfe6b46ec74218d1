// Helpers for end-to-end tests of every store type through the planb CLI: a config holding one map per store type
// and key scheme, one-line builders of the XML elements each type takes, and readers of what `planb query` and
// `planb query --explain` print. Header-only; builds on support/test_env.h.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace planb::testing {

// One map per store type and key scheme (the ranged types take no scheme), plus a map of each family that tests
// leave empty.
inline constexpr char kTypedMapsConfig[] =
    "[map.st_hashed]\n"
    "type = state\n"
    "scheme = hashed\n"
    "[map.st_direct]\n"
    "type = state\n"
    "scheme = direct\n"
    "[map.tm_hashed]\n"
    "type = temporal\n"
    "scheme = hashed\n"
    "[map.tm_direct]\n"
    "type = temporal\n"
    "scheme = direct\n"
    "[map.rg]\n"
    "type = ranged\n"
    "[map.trg]\n"
    "type = temporal_ranged\n"
    "[map.ss_hashed]\n"
    "type = session\n"
    "scheme = hashed\n"
    "[map.ss_direct]\n"
    "type = session\n"
    "scheme = direct\n"
    "[map.tm_unused]\n"
    "type = temporal\n"
    "scheme = direct\n"
    "[map.rg_unused]\n"
    "type = ranged\n";

// The maps of kTypedMapsConfig by family.
inline const std::vector<std::string> kStateMaps{"st_hashed", "st_direct"};
inline const std::vector<std::string> kTemporalMaps{"tm_hashed", "tm_direct"};
inline const std::vector<std::string> kSessionMaps{"ss_hashed", "ss_direct"};

// <reference> with an optional <time> ("" = none) and a <key>.
inline std::string TimedRef(const std::string& map, const std::string& time, const std::string& key,
                            const std::string& value) {
  return "  <reference><map>" + map + "</map>" + (time.empty() ? "" : "<time>" + time + "</time>") + "<key>" + key +
         "</key><value>" + value + "</value></reference>";
}

// <reference> with an optional <time> and a <range><from/><to/></range>.
inline std::string RangeRef(const std::string& map, const std::string& time, const std::string& from,
                            const std::string& to, const std::string& value) {
  return "  <reference><map>" + map + "</map>" + (time.empty() ? "" : "<time>" + time + "</time>") + "<range><from>" +
         from + "</from><to>" + to + "</to></range><value>" + value + "</value></reference>";
}

// <session> with an optional <timeout> ("" = none).
inline std::string SessionEvent(const std::string& map, const std::string& key, const std::string& time,
                                const std::string& timeout = "") {
  return "  <session><map>" + map + "</map><key>" + key + "</key><time>" + time + "</time>" +
         (timeout.empty() ? "" : "<timeout>" + timeout + "</timeout>") + "</session>";
}

// Joins lines with '\n'.
inline std::string Lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += (text.empty() ? "" : "\n") + line;
  return text;
}

// Parses RFC 4180 CSV (fields quoted with '"', a quote doubled inside, CRLF or LF line ends) into records.
// Returns false on malformed input (a quote inside an unquoted field, an unterminated quoted field).
inline bool ParseCsv(const std::string& text, std::vector<std::vector<std::string>>* records) {
  records->clear();
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += c;
      }
      ++i;
      continue;
    }
    if (c == '"') {
      if (field_started) return false;
      quoted = field_started = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      record.push_back(field);
      records->push_back(record);
      record.clear();
      field.clear();
      field_started = false;
      if (c == '\r') ++i;
    } else {
      if (field_started && i > 0 && text[i - 1] == '"') return false;  // text after a closing quote
      field += c;
      field_started = true;
    }
    ++i;
  }
  if (quoted) return false;
  if (field_started || !record.empty()) {
    record.push_back(field);
    records->push_back(record);
  }
  return true;
}

// The number after "rows examined: " in `planb query --explain`'s stderr; -1 when absent.
inline int64_t RowsExamined(const std::string& err) {
  const std::string label = "rows examined: ";
  const size_t at = err.find(label);
  if (at == std::string::npos) return -1;
  return std::stoll(err.substr(at + label.size()));
}

// The values of column `field` of `planb query --format csv` output, in output order; throws when the output is
// not CSV or has no such column.
inline std::vector<std::string> CsvColumn(const std::string& csv, const std::string& field) {
  std::vector<std::vector<std::string>> records;
  if (!ParseCsv(csv, &records) || records.empty()) throw std::runtime_error("not CSV: " + csv);
  const auto at = std::find(records[0].begin(), records[0].end(), field);
  if (at == records[0].end()) throw std::runtime_error("no column " + field + " in: " + csv);
  const size_t column = static_cast<size_t>(at - records[0].begin());
  std::vector<std::string> values;
  for (size_t i = 1; i < records.size(); ++i) values.push_back(records[i].at(column));
  return values;
}

// CsvColumn, sorted.
inline std::vector<std::string> SortedCsvColumn(const std::string& csv, const std::string& field) {
  std::vector<std::string> values = CsvColumn(csv, field);
  std::sort(values.begin(), values.end());
  return values;
}

// Sets the modification (and access) time of `path` to `ms` milliseconds since the epoch, exactly.
inline void SetModificationTime(const std::string& path, int64_t ms) {
  int64_t seconds = ms / 1000, millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const struct timespec times[2] = {{seconds, millis * 1000000}, {seconds, millis * 1000000}};
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) throw std::runtime_error("utimensat failed: " + path);
}

}  // namespace planb::testing
