// What a ranged map answers, address by address (key_format ipv4 or ip) or number by number (number), as
// disjoint ranges: the input of `planb export --format mmdb` and of the Reader's read index. However the map's ranges nest or overlap, its answer can change only where some
// range starts or just after one ends; between two such boundaries every address has the same set of containing
// ranges and so the same answer. One lookup at each boundary, through the map's own store type, therefore gives
// exactly what `planb lookup` answers for every address, whatever rule the type picks a winner by. Runs of equal
// answers are merged. Everything is read in one read transaction: one consistent version of the map.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "host/storage/map_reader.h"
#include "planb/status.h"
#include "planb/value_type.h"

namespace planb {

// A place on the map's line: an address in IPv6 order (IPv4 as ::ffff:a.b.c.d), or for a number map the number's
// ordered 64-bit form, n ^ 2^63 (so places compare as the numbers do; the greatest is 2^64 - 1).
using Address128 = unsigned __int128;
inline constexpr Address128 kIpv4MappedStart = Address128{0xFFFF} << 32;  // ::ffff:0:0/96
inline constexpr Address128 kIpv4MappedEnd = kIpv4MappedStart + 0xFFFFFFFFu;
inline constexpr Address128 kIpv4CompatibleEnd = 0xFFFFFFFFu;  // ::/96

struct AnsweredRange {
  Address128 first = 0;
  Address128 last = 0;  // inclusive
  uint32_t value = 0;   // into RangeMapAnswers::values
};

struct AnswerValue {
  ValueType type = ValueType::kString;
  std::string bytes;
};

struct RangeMapAnswers {
  std::vector<AnsweredRange> ranges;  // ascending, disjoint; addresses without an answer are in none
  std::vector<AnswerValue> values;    // distinct (type, bytes)
  uint64_t rows = 0;                  // rows of the map read
  uint64_t lookups = 0;               // boundaries looked up
  // Rows lying wholly inside ::/96 (IPv4-compatible addresses), which a MaxMind DB with IPv4 data cannot hold.
  std::vector<std::pair<Address128, Address128>> ipv4_compatible_rows;
};

// `reader`: opened on a ranged map (number keys, TakesNumberKeys, or IP address keys, HasAddressKeys). `time_ms`: the instant asked about.
// `progress` (may be empty) gets (boundaries done, total) now and then. `max_boundaries` (0: no limit): kFull,
// before any lookup, when the map has more distinct boundaries. Errors name the map.
Status ReadRangeMapAnswers(const MapReader& reader, int64_t time_ms,
                        const std::function<void(uint64_t, uint64_t)>& progress, RangeMapAnswers* out,
                        uint64_t max_boundaries = 0);

// `a` as address text: dotted IPv4 inside ::ffff:0:0/96, else IPv6 (inet_ntop).
std::string Address128Text(Address128 a);

}  // namespace planb
