// Which scheme `planb bench` recommends for a map, by a rule stated in docs/schemes.md ("Measuring your own
// data"): the fastest hit p50 wins, unless another scheme is at least 20% smaller on disk (bytes per row) with a
// hit p50 within 1.25x of the fastest; of several such, the smallest. Schemes without figures take no part.
#pragma once

#include "host/scheme_trial/bench_result.h"

namespace planb {

// Hit p50s within this factor of the fastest count as equally fast: one clock reading per lookup, in 10 ns
// steps at ~100-200 ns, cannot tell such schemes apart.
inline constexpr double kSameSpeed = 1.10;
inline constexpr double kSmallerBy = 0.20;     // at least this much smaller on disk ...
inline constexpr double kSlowerAtMost = 1.25;  // ... with hit p50 at most this many times the fastest

// Marks the recommended scheme of `map` (SchemeResult::recommended) and sets map->recommendation, e.g.
// "direct: fastest lookups (hit p50 95 ns)" or "lookup_table: 38% smaller, lookups 1.2x hashed".
void Recommend(MapResult* map);

}  // namespace planb
