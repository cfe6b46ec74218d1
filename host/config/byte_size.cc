// ParseByteSize, declared in config.h.
#include <cstdint>
#include <limits>
#include <string_view>

#include "host/config/config.h"

namespace planb {
namespace {

struct Unit {
  std::string_view name;  // lower case; matched case-insensitively
  uint64_t bytes;
};

constexpr Unit kUnits[] = {
    {"kib", uint64_t{1} << 10}, {"mib", uint64_t{1} << 20}, {"gib", uint64_t{1} << 30},
    {"tib", uint64_t{1} << 40}, {"kb", 1000},               {"mb", 1000 * 1000},
    {"gb", 1000 * 1000 * 1000}, {"tb", uint64_t{1000} * 1000 * 1000 * 1000},
};

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoringCase(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (LowerAscii(text[i]) != lower[i]) return false;
  }
  return true;
}

}  // namespace

bool ParseByteSize(std::string_view text, uint64_t* bytes) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t count = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (count > (kMax - digit) / 10) return false;
    count = count * 10 + digit;
  }
  if (i == 0) return false;  // no digits: empty, a sign, or junk

  std::string_view unit = text.substr(i);
  if (!unit.empty() && unit.front() == ' ') {
    unit.remove_prefix(1);
    if (unit.empty()) return false;  // "10 " names no unit
  }
  uint64_t multiplier = 1;
  if (!unit.empty()) {
    multiplier = 0;
    for (const Unit& u : kUnits) {
      if (EqualsIgnoringCase(unit, u.name)) multiplier = u.bytes;
    }
    if (multiplier == 0) return false;  // also catches "1.5GiB", "1e9", "10 GiB" with two spaces
  }
  if (count > kMax / multiplier) return false;
  *bytes = count * multiplier;
  return true;
}

}  // namespace planb
