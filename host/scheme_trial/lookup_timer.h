// Times lookups one by one through MapReader (the path planb::Reader takes: one read transaction kept open, one
// cursor, no allocation per lookup). Each lookup is bracketed by steady_clock reads, so every figure includes the
// clock's own cost (about 20 ns on x86-64 Linux). Not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "host/scheme_trial/data_sample.h"
#include "host/storage/map_reader.h"

namespace planb {

struct LatencyFigures {
  uint64_t lookups = 0;  // lookups timed
  double p50_ns = 0;
  double p99_ns = 0;
};

// Looks up every probe once untimed (warming the page cache as a running reader's would be), then once timed.
// Probes whose outcome is not `expect_found` are left out of the figures (a "miss" that exists in the data).
// `scratch` holds the timings (reserved up front, so the timed loop allocates nothing).
// kInternal "interrupted" once `stop` is true; LMDB or decoding errors otherwise.
Status TimeLookups(const MapReader& reader, const std::vector<LookupProbe>& probes, bool expect_found,
                   const std::atomic<bool>* stop, std::vector<int64_t>* scratch, LatencyFigures* out);

// The nearest-rank percentile `p` (0 < p <= 100) of `values`, which it reorders. REQUIRES: values not empty.
double Percentile(std::vector<int64_t>* values, double p);

}  // namespace planb
