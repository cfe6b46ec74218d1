// Records from CSV (RFC 4180, host/common/csv.h) and JSON lines, for `planb load --format csv|jsonl`: each row
// becomes the record a reference-data <reference> (or <session>) element would, for one map, handed to the same
// RecordHandler as the XML reader's (host/xml/reference_reader.h), so a load treats both alike.
//
// Columns: CSV's header line names them (or TabularSpec::columns, for files without one); a JSON line's columns
// are the fields of its object, a dotted name `a.b` reaching into nested objects. Columns not named are ignored.
// Texts: a CSV field as it is (unquoted); from JSON, a string's unescaped text, a number's text as written
// (`1.50` stays `1.50`), true/false/null their word (refused as a key, from, to, time or timeout), an object or
// array its JSON as written (refused likewise, accepted as a --value).
// --value-json a,b stores {"a":...,"b":...}: from CSV each value as a JSON string; from JSON lines each field's
// JSON as written.
// Errors are "name:LINE: what", LINE 1-based; the first one stops the read.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/common/epoch_time.h"
#include "host/xml/reference_reader.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

enum class TabularFormat { kCsv, kJsonLines };

struct TabularSpec {
  TabularFormat format = TabularFormat::kCsv;
  std::string map;  // the map every row goes to (lower-cased when read)
  // <session> records for a session map (the load sets it from the map's type), else <reference>.
  RecordKind kind = RecordKind::kReference;
  // Column names; absent: not given.
  std::optional<std::string> key;
  std::optional<std::string> from;
  std::optional<std::string> to;
  std::optional<std::string> time;     // ISO-8601, or a number of `time_unit`s since the epoch
  std::optional<TimeUnit> time_unit;   // --time-unit (only with --time); absent: milliseconds
  std::optional<std::string> timeout;  // sessions: a duration (15m, PT15M) or milliseconds
  std::optional<std::string> value;
  std::vector<std::string> value_json;  // empty: not given
  std::vector<std::string> columns;     // CSV: the columns of files without a header line (line 1 is data)
  bool comments = false;                // CSV: lines starting with '#' are skipped
  size_t max_record_bytes = 16 << 20;   // a longer CSV record or JSON line is an error
};

// Whether the columns given make records of `spec.kind`: a map; --key, or --from with --to (references);
// --key and --time (sessions, which take no value); --value or --value-json, not both; --timeout only for
// sessions; --columns and --comments only for CSV; no empty column names, no column named twice in --columns.
// Errors name the flags as the command line spells them.
Status CheckTabularSpec(const TabularSpec& spec);

// Reads `path` ("-": standard input, named "stdin" in errors), gzip-compressed or not (gz_input.h). `effective_time_ms` fills Record::time_ms of rows
// without a --time column. REQUIRES: CheckTabularSpec(spec) is OK.
Status ReadTabularFile(const std::string& path, const TabularSpec& spec, int64_t effective_time_ms,
                       const RecordHandler& handler);
Status ReadTabular(std::istream& in, const std::string& name, const TabularSpec& spec, int64_t effective_time_ms,
                   const RecordHandler& handler);


}  // namespace planb
