// What `planb bench` measured: per map, one result per key scheme (and value_dedup setting), with figures or the
// reason the scheme could not hold the map's data, and the recommendation (recommendation.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/scheme_trial/scheme_trial.h"

namespace planb {

struct SchemeResult {
  std::string scheme;
  bool value_dedup = false;
  std::optional<TrialFigures> figures;  // each figure the median over the runs; absent when `unusable` says why
  std::string unusable;                 // escaped, one line
  bool recommended = false;

  // "hashed" or "hashed+value_dedup": how rows, the chart and recommendations name it.
  std::string label() const { return value_dedup ? scheme + "+value_dedup" : scheme; }
  // data.mdb bytes / data table rows; REQUIRES: figures with rows.
  double bytes_per_row() const {
    return static_cast<double>(figures->sizes.file_bytes) / static_cast<double>(figures->sizes.rows);
  }
};

struct MapResult {
  std::string map;
  std::string type;
  std::string configured_scheme;  // what the config says ("hashed" when it says nothing)
  bool configured_value_dedup = false;
  std::vector<SchemeResult> schemes;
  std::string recommendation;  // "direct: fastest lookups (hit p50 95 ns)"; says so when none could be made
  // The raw LMDB baseline's figures (raw_baseline.h), medians over the runs; absent unless asked for.
  std::optional<TrialFigures> raw;
};

struct BenchResult {
  std::vector<MapResult> maps;
  uint32_t runs = 0;
  uint64_t lookups_asked = 0;  // --lookups: hits sampled per map (fewer when the map has fewer distinct keys)
  bool raw_baseline = false;   // each map has `raw`: the output adds its row and the ratios to it
};

}  // namespace planb
