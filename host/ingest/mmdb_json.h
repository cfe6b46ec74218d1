// One MaxMind DB record (libmaxminddb's MMDB_entry_data_list_s, as MMDB_get_entry_data_list returns it) as compact
// JSON text that keeps the record's types readable, for `planb load --format mmdb` (mmdb_networks.h):
// - map: an object, members in the file's order (keys must be utf8_string); array: an array;
// - utf8_string: a JSON string (escaped; text that is not valid UTF-8 is an error);
// - double and float: a number that always has a '.' or an exponent (`1.0`, `2.5e-07`), in the shortest form
//   that reads back as the same double (a float: the same float);
// - uint16, uint32, uint64, uint128, int32: integer text (uint128 in full, up to 39 digits);
// - boolean: true / false;
// - bytes: a JSON string of their standard base64 (RFC 4648, with '=' padding).
// Thread-safe (no state). The list is only read.
#pragma once

#include <maxminddb.h>

#include <cstddef>
#include <string>

#include "planb/status.h"

namespace planb {

struct MmdbJsonLimits {
  size_t max_depth = 32;        // maps and arrays inside each other; the record itself is depth 1
  size_t max_bytes = 1u << 20;  // bytes of JSON text for one record
};

// Appends the value that starts at *list (a map, an array or a scalar, with everything inside it) to *out and moves
// *list past it. Errors (kInvalidArgument for a limit, kCorruption for data) say what is wrong, not which file:
// the caller adds that. On error *out holds a partial text.
Status AppendMmdbJson(const MMDB_entry_data_list_s** list, const MmdbJsonLimits& limits, std::string* out);

}  // namespace planb
