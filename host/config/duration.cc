// ParseDuration, declared in config.h.
#include <cstdint>
#include <limits>
#include <string_view>

#include "host/config/config.h"

namespace planb {
namespace {

struct DurationUnit {
  std::string_view name;
  int64_t ms;
};

// Longest suffix first, so "ms" is not read as "m" followed by junk.
constexpr DurationUnit kDurationUnits[] = {
    {"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 60 * 60 * 1000}, {"d", 24 * 60 * 60 * 1000},
};

}  // namespace

bool ParseDuration(std::string_view text, int64_t* ms) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18) return false;
  const std::string_view unit = text.substr(digits);
  for (const DurationUnit& u : kDurationUnits) {
    if (unit != u.name) continue;
    int64_t value = 0;
    for (size_t i = 0; i < digits; ++i) value = value * 10 + (text[i] - '0');
    if (value > std::numeric_limits<int64_t>::max() / u.ms) return false;
    *ms = value * u.ms;
    return true;
  }
  return false;
}

}  // namespace planb
