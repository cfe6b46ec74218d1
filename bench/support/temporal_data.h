// Temporal State rows for benchmarks: synthetic ones, and real ones read from ../shared/data when present.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace planb::bench {

struct TemporalRow {
  std::string key;
  int64_t time_ms;  // effective time; INT64_MIN = since the beginning of time
  std::string value;
};

// About `count` rows: keys like "zone-000123-<random>" (all 20 bytes) with 1 to 19 versions each, a minute to a
// month apart, from 2017 on; values of 8 to 40 bytes. Sorted by key, then time; deterministic.
std::vector<TemporalRow> SyntheticTemporalRows(size_t count);

// tzdata-transitions.csv.gz: zone -> "offset_seconds is_dst abbreviation" from each transition; a zone's first
// row (no time: "from the beginning of time") is at INT64_MIN. Empty, with the reason, when absent.
std::vector<TemporalRow> TzdataTransitions(std::string* why_missing);

}  // namespace planb::bench
