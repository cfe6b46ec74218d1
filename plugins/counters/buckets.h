// What the histogram and metric store types share outside their rows: time buckets aligned to the Unix epoch,
// the `bucket` map option, the parsing of a record's <value> and text for error messages. Allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "planb/bytes.h"
#include "planb/plugin.h"
#include "planb/status.h"

namespace planb::counters {

inline constexpr const char* kBucketOption = "bucket";
inline constexpr const char* kDefaultBucket = "1m";

// The start of the bucket of `width` ms holding `time_ms`: floor(time / width) * width, so buckets start at
// multiples of the width counted from 1970-01-01T00:00Z (with 1h, on the hour), negative times included.
// False when that start would lie before INT64_MIN ms (only times within one width of it).
// REQUIRES: width > 0.
bool BucketStart(int64_t time_ms, int64_t width, int64_t* start);

// Whether [start, start + width) holds `time_ms` (no overflow, whatever the values). REQUIRES: width > 0.
bool BucketHolds(int64_t start, int64_t width, int64_t time_ms);

// The `bucket` option of `args` (kDefaultBucket when absent) as a positive number of ms; kInvalidArgument
// naming the option and the value otherwise (the host puts the map's name in front).
Code ParseBucketOption(const PluginArgs& args, int64_t* width, ErrorBuffer* error);

// <value> text with XML whitespace around it removed.
Bytes TrimValue(Bytes text);

// A whole number in [INT64_MIN, INT64_MAX]: an optional '-' then decimal digits, nothing else (after TrimValue).
// False for anything else, `*out_of_range` telling whether it was digits too large.
bool ParseWholeNumber(Bytes text, int64_t* out, bool* out_of_range);

// A finite decimal number as std::from_chars reads it (e.g. -12, 3.5, 1e-3; no '+', no hex, no inf/nan).
bool ParseDecimal(Bytes text, double* out);

// `text` as printable ASCII for a message: other bytes as \xNN, cut to ~48 bytes with "..." (into `out`).
struct Escaped {
  char text[256];
};
const char* Escape(Bytes text, Escaped* out);

// `ms` as ISO-8601 UTC text ("2026-11-24T21:00:00.000Z") for messages.
struct IsoTime {
  char text[96];
};
const char* FormatTime(int64_t ms, IsoTime* out);

}  // namespace planb::counters
