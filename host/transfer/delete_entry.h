// A deletion batch's entry for one map (`<map>/delete` in a batch zip, batch_zip.h): which rows of the map go.
//
// On-disk format (part of kBatchFormatVersion; bump it on change): UTF-8 text of at most kMaxDeleteEntryBytes,
//   "time <MS>\n"      the deletion's time, signed decimal milliseconds since the epoch (batch format 5): it
//                      takes the matching rows older than this and shadows such rows merged after it
//                      (host/ingest/tombstones.h), so deletions and loads commute
// then one of
//   "all\n"            every row of the map
//   "where <EXPR>\n"   the rows `planb query MAP --where EXPR` prints (host/query/expression.h); EXPR may span
//                      lines, the last newline ends it
// Nothing else: a missing or malformed time, an unknown verb, an empty expression or a missing final newline is
// refused.
// Thread-safety: plain functions without shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "planb/status.h"

namespace planb {

inline constexpr const char* kDeleteEntryName = "delete";
inline constexpr uint64_t kMaxDeleteEntryBytes = uint64_t{64} << 10;

struct DeleteEntry {
  int64_t time_ms = 0;  // the deletion's time: rows whose time (RowTimeMs, tombstones.h) is earlier go
  bool all = false;   // every row; else `where`
  std::string where;  // the expression's text (not yet checked against a map's fields)
};

// The entry's text. REQUIRES: `entry.all` or a non-empty `entry.where`.
std::string DeleteEntryText(const DeleteEntry& entry);

// Parses an entry's text (its syntax only: the expression is parsed against the map's fields by whoever knows
// the map). kInvalidArgument "delete entry: ..." naming what is wrong (too long, unknown verb, empty expression).
Status ParseDeleteEntry(std::string_view text, DeleteEntry* out);

// `<map_dir>/delete` of an extracted batch: whether it is there, and read + parsed (errors name the file).
bool HasDeleteEntry(const std::string& map_dir);
Status ReadDeleteEntry(const std::string& map_dir, DeleteEntry* out);

}  // namespace planb
