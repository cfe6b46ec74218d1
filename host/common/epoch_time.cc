#include "host/common/epoch_time.h"

#include <limits>

#include "host/common/iso_time.h"

namespace planb {
namespace {

using Int128 = __int128;

// Nanoseconds per unit.
int64_t NanosPer(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSeconds: return 1000000000;
    case TimeUnit::kMilliseconds: return 1000000;
    case TimeUnit::kMicroseconds: return 1000;
    case TimeUnit::kNanoseconds: return 1;
  }
  return 1000000;
}

// Rounds towards negative infinity.
Int128 FloorDiv(Int128 a, Int128 b) {
  const Int128 q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

bool ParseTimeUnit(std::string_view text, TimeUnit* out) {
  if (text == "s") {
    *out = TimeUnit::kSeconds;
  } else if (text == "ms") {
    *out = TimeUnit::kMilliseconds;
  } else if (text == "us") {
    *out = TimeUnit::kMicroseconds;
  } else if (text == "ns") {
    *out = TimeUnit::kNanoseconds;
  } else {
    return false;
  }
  return true;
}

const char* TimeUnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSeconds: return "s";
    case TimeUnit::kMilliseconds: return "ms";
    case TimeUnit::kMicroseconds: return "us";
    case TimeUnit::kNanoseconds: return "ns";
  }
  return "ms";
}

const char* EpochUnitWords(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSeconds: return "epoch seconds";
    case TimeUnit::kMilliseconds: return "epoch milliseconds";
    case TimeUnit::kMicroseconds: return "epoch microseconds";
    case TimeUnit::kNanoseconds: return "epoch nanoseconds";
  }
  return "epoch milliseconds";
}

bool ParseTimeOrEpoch(std::string_view text, TimeUnit unit, int64_t* ms) {
  if (ParseIsoTime(text, ms)) return true;
  size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  const Int128 per = NanosPer(unit);
  // int64 milliseconds reach 9.2e24 nanoseconds: 26 digits of any unit are past that, and x 1e9 still fit 128 bits.
  constexpr size_t kMaxDigits = 26;
  Int128 whole = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (++digits > kMaxDigits) return false;
    whole = whole * 10 + (text[i] - '0');
  }
  if (digits == 0) return false;
  // The fraction, in nanoseconds of the unit: digits past nanosecond precision count only as "some more".
  Int128 fraction_ns = 0;
  bool beyond = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    Int128 scale = per;
    size_t fraction_digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++fraction_digits) {
      scale /= 10;
      if (scale > 0) {
        fraction_ns += scale * (text[i] - '0');
      } else if (text[i] != '0') {
        beyond = true;
      }
    }
    if (fraction_digits == 0) return false;  // "12." is no number
  }
  if (i != text.size()) return false;
  Int128 ns = whole * per + fraction_ns;
  if (negative) {
    ns = -ns;
    if (beyond) ns -= 1;  // a little further into the past than the nanoseconds kept: still floors alike
  }
  const Int128 result = FloorDiv(ns, 1000000);
  if (result < std::numeric_limits<int64_t>::min() || result > std::numeric_limits<int64_t>::max()) return false;
  *ms = static_cast<int64_t>(result);
  return true;
}

}  // namespace planb
