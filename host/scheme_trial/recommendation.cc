#include "host/scheme_trial/recommendation.h"

#include <cmath>
#include <cstdio>

namespace planb {
namespace {

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

bool Usable(const SchemeResult& r) { return r.figures && r.figures->hits.lookups > 0 && r.figures->sizes.rows > 0; }


// Of two schemes equally fast (hit p50s within kSameSpeed of the fastest of all): the smaller on disk, then the
// one without value_dedup (one read less per lookup), then the configured one, then the faster.
bool BetterThan(const SchemeResult& a, const SchemeResult& b, const std::string& configured) {
  if (a.bytes_per_row() != b.bytes_per_row()) return a.bytes_per_row() < b.bytes_per_row();
  if (a.value_dedup != b.value_dedup) return !a.value_dedup;
  if ((a.scheme == configured) != (b.scheme == configured)) return a.scheme == configured;
  return a.figures->hits.p50_ns < b.figures->hits.p50_ns;
}

}  // namespace

void Recommend(MapResult* map) {
  double min_p50 = -1;
  bool any_unusable = false;
  for (SchemeResult& r : map->schemes) {
    r.recommended = false;
    if (!Usable(r)) {
      any_unusable = true;
    } else if (min_p50 < 0 || r.figures->hits.p50_ns < min_p50) {
      min_p50 = r.figures->hits.p50_ns;
    }
  }
  SchemeResult* fastest = nullptr;  // the best of those equally fast
  for (SchemeResult& r : map->schemes) {
    if (!Usable(r) || r.figures->hits.p50_ns > kSameSpeed * min_p50) continue;
    if (fastest == nullptr || BetterThan(r, *fastest, map->configured_scheme)) fastest = &r;
  }
  if (fastest == nullptr) {
    map->recommendation = "none: no scheme could hold the map's keys";
    return;
  }
  const double fast_p50 = fastest->figures->hits.p50_ns;
  const double fast_bytes = fastest->bytes_per_row();
  SchemeResult* smaller = nullptr;
  for (SchemeResult& r : map->schemes) {
    if (!Usable(r) || &r == fastest) continue;
    if (r.bytes_per_row() > (1 - kSmallerBy) * fast_bytes || r.figures->hits.p50_ns > kSlowerAtMost * fast_p50) {
      continue;
    }
    if (smaller == nullptr || r.bytes_per_row() < smaller->bytes_per_row() ||
        (r.bytes_per_row() == smaller->bytes_per_row() && r.figures->hits.p50_ns < smaller->figures->hits.p50_ns)) {
      smaller = &r;
    }
  }
  if (smaller != nullptr) {
    smaller->recommended = true;
    const double saved = 100.0 * (1 - smaller->bytes_per_row() / fast_bytes);
    const double ratio = fast_p50 > 0 ? smaller->figures->hits.p50_ns / fast_p50 : 1.0;
    map->recommendation = smaller->label() + ": " + Fixed(std::floor(saved), 0) + "% smaller, lookups " +
                          Fixed(ratio, 2) + "x " + fastest->label();
    return;
  }
  fastest->recommended = true;
  map->recommendation = fastest->label() + ": fastest lookups (hit p50 " + Fixed(fast_p50, 0) + " ns)" +
                        (any_unusable ? ", of the schemes that hold every key" : ", all keys fit");
}

}  // namespace planb
