// Durations as Plan B's config writes them, for the host and for plugins' options alike (the histogram's
// `bucket`): the short form "500ms", "10s", "1m", "1h", "1d" (digits, then exactly one lower-case unit; "M" is
// refused, as ISO-8601 could mean months) or ISO-8601 "PnWnDTnHnMn.nS" (case-insensitive, like
// java.time.Duration; only seconds take a fraction, to the millisecond), e.g. "PT1H30M". Years and months are
// refused (their length varies); so is any sign: a duration is never negative. Header-only: no ABI.
// Since SDK 7.1 (all of this header unless noted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace planb {
namespace duration_internal {

inline constexpr int64_t kSecond = 1000;
inline constexpr int64_t kMinute = 60 * kSecond;
inline constexpr int64_t kHour = 60 * kMinute;
inline constexpr int64_t kDay = 24 * kHour;
inline constexpr int64_t kWeek = 7 * kDay;

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

inline bool MulAdd(int64_t acc, int64_t mul, int64_t add, int64_t* out) {
  int64_t product;
  return !__builtin_mul_overflow(acc, mul, &product) && !__builtin_add_overflow(product, add, out);
}

// One or more digits as an int64, refusing overflow.
inline bool Number(std::string_view s, size_t* pos, int64_t* out) {
  const size_t start = *pos;
  int64_t v = 0;
  while (*pos < s.size() && IsDigit(s[*pos])) {
    if (!MulAdd(v, 10, s[*pos] - '0', &v)) return false;
    ++*pos;
  }
  *out = v;
  return *pos > start;
}

// ".nnn" or ",nnn" as milliseconds (digits past the third are ignored, as the host does); none is 0.
inline bool Fraction(std::string_view s, size_t* pos, int64_t* ms) {
  *ms = 0;
  if (*pos >= s.size() || (s[*pos] != '.' && s[*pos] != ',')) return true;
  ++*pos;
  int digits = 0;
  while (*pos < s.size() && IsDigit(s[*pos])) {
    if (digits < 3) *ms = *ms * 10 + (s[*pos] - '0');
    ++digits;
    ++*pos;
  }
  if (digits == 0) return false;
  for (int i = digits; i < 3; ++i) *ms *= 10;
  return true;
}

inline bool ParseIsoDuration(std::string_view s, int64_t* ms) {
  size_t pos = 1;  // past 'P'
  int64_t total = 0;
  bool any = false;
  bool in_time = false;
  int last_rank = -1;  // each designator after the previous one: "P1D1W" is refused
  while (pos < s.size()) {
    if (Upper(s[pos]) == 'T') {
      if (in_time) return false;
      in_time = true;
      if (++pos == s.size()) return false;  // "P1DT" names no time part
      continue;
    }
    int64_t n = 0;
    if (!Number(s, &pos, &n)) return false;
    const bool has_fraction = pos < s.size() && (s[pos] == '.' || s[pos] == ',');
    int64_t frac_ms = 0;
    if (!Fraction(s, &pos, &frac_ms) || pos == s.size()) return false;
    const char unit = Upper(s[pos++]);
    int64_t unit_ms;
    int rank;
    if (!in_time && unit == 'W') {
      unit_ms = kWeek, rank = 0;
    } else if (!in_time && unit == 'D') {
      unit_ms = kDay, rank = 1;
    } else if (in_time && unit == 'H') {
      unit_ms = kHour, rank = 2;
    } else if (in_time && unit == 'M') {
      unit_ms = kMinute, rank = 3;
    } else if (in_time && unit == 'S') {
      unit_ms = kSecond, rank = 4;
    } else {
      return false;  // years and months (variable length), or a misplaced designator
    }
    if (rank <= last_rank || (has_fraction && unit != 'S')) return false;
    last_rank = rank;
    int64_t part;
    if (!MulAdd(n, unit_ms, frac_ms, &part) || __builtin_add_overflow(total, part, &total)) return false;
    any = true;
  }
  if (!any) return false;
  *ms = total;
  return true;
}

}  // namespace duration_internal

// False when `text` is not a duration or it overflows a signed 64-bit count of milliseconds.
inline bool ParseDuration(std::string_view s, int64_t* ms) {
  using namespace duration_internal;
  if (s.empty()) return false;
  if (s[0] == 'P' || s[0] == 'p') return ParseIsoDuration(s, ms);
  size_t pos = 0;
  int64_t n;
  if (!Number(s, &pos, &n)) return false;
  const std::string_view unit = s.substr(pos);
  int64_t unit_ms;
  if (unit == "ms") {
    unit_ms = 1;
  } else if (unit == "s") {
    unit_ms = kSecond;
  } else if (unit == "m") {
    unit_ms = kMinute;
  } else if (unit == "h") {
    unit_ms = kHour;
  } else if (unit == "d") {
    unit_ms = kDay;
  } else {
    return false;
  }
  int64_t total;
  if (__builtin_mul_overflow(n, unit_ms, &total)) return false;
  *ms = total;
  return true;
}

}  // namespace planb
