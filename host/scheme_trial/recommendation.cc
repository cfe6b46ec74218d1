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

}  // namespace

void Recommend(MapResult* map) {
  SchemeResult* fastest = nullptr;
  bool any_unusable = false;
  for (SchemeResult& r : map->schemes) {
    r.recommended = false;
    if (!Usable(r)) {
      any_unusable = true;
      continue;
    }
    const double p50 = r.figures->hits.p50_ns;
    if (fastest == nullptr || p50 < fastest->figures->hits.p50_ns ||
        (p50 == fastest->figures->hits.p50_ns && r.bytes_per_row() < fastest->bytes_per_row())) {
      fastest = &r;
    }
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
