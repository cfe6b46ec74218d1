#include "host/common/iso_time.h"

#include <charconv>

#include <chrono>
#include <cstdio>
#include <limits>

#include "planb/duration.h"

namespace planb {
namespace {

constexpr int64_t kMsPerSecond = 1000;
constexpr int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr int64_t kMsPerDay = 24 * kMsPerHour;

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, day 0 = 1970-01-01). Eras of 400
// years make the leap rules a table-free computation and keep it exact for negative days; int64 holds every
// day an int64 of milliseconds can name.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

bool IsLeap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at `*pos`.
bool FixedDigits(std::string_view s, size_t* pos, int n, int64_t* out) {
  if (s.size() - *pos < static_cast<size_t>(n)) return false;
  int64_t v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Consume(std::string_view s, size_t* pos, char c) {
  if (*pos < s.size() && s[*pos] == c) {
    ++*pos;
    return true;
  }
  return false;
}

// ".ddd..." (or ",ddd...", which ISO-8601 allows too) as milliseconds, truncating past the third digit: the
// fraction durations read too (planb/duration.h), one reading for both.
using duration_internal::Fraction;

// "Z", "+HH:MM", "+HHMM" or "+HH" (and '-'). A time without a zone is refused: the stored instant is UTC and a
// local time would silently shift by the writer's offset.
bool Zone(std::string_view s, size_t* pos, int64_t* offset_ms) {
  *offset_ms = 0;
  if (Consume(s, pos, 'Z')) return true;
  int sign;
  if (Consume(s, pos, '+')) {
    sign = 1;
  } else if (Consume(s, pos, '-')) {
    sign = -1;
  } else {
    return false;
  }
  int64_t hh = 0, mm = 0;
  if (!FixedDigits(s, pos, 2, &hh)) return false;
  if (Consume(s, pos, ':')) {
    if (!FixedDigits(s, pos, 2, &mm)) return false;
  } else if (*pos < s.size()) {
    if (!FixedDigits(s, pos, 2, &mm)) return false;
  }
  if (hh > 23 || mm > 59) return false;
  *offset_ms = sign * (hh * kMsPerHour + mm * kMsPerMinute);
  return true;
}

}  // namespace

// A year: four digits, or ISO 8601's expanded form (a sign and 4 to 9 digits), which FormatIsoTime writes for
// years outside 0000-9999 so that every printed time reads back.
bool Year(std::string_view s, size_t* pos, int64_t* year) {
  if (*pos < s.size() && (s[*pos] == '+' || s[*pos] == '-')) {
    const bool negative = s[*pos] == '-';
    size_t end = ++*pos;
    while (end < s.size() && IsDigit(s[end]) && end - *pos < 9) ++end;
    if (end - *pos < 4 || !FixedDigits(s, pos, static_cast<int>(end - *pos), year)) return false;
    if (negative) *year = -*year;
    return negative || *year > 9999;  // years 0000-9999 are written plainly
  }
  return FixedDigits(s, pos, 4, year);
}

bool ParseIsoTime(std::string_view s, int64_t* ms) {
  size_t pos = 0;
  int64_t year, month, day;
  if (!Year(s, &pos, &year) || !Consume(s, &pos, '-') || !FixedDigits(s, &pos, 2, &month) ||
      !Consume(s, &pos, '-') || !FixedDigits(s, &pos, 2, &day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) return false;
  // 128-bit, so that instants at the very ends of int64 (expanded years) are computed exactly, then checked.
  __int128 result = static_cast<__int128>(DaysFromCivil(year, month, day)) * kMsPerDay;
  auto fits = [](__int128 v) {
    return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
  };
  if (pos == s.size()) {
    if (!fits(result)) return false;
    *ms = static_cast<int64_t>(result);
    return true;
  }
  int64_t hour, minute, second = 0, frac_ms = 0, offset_ms;
  if (!Consume(s, &pos, 'T') || !FixedDigits(s, &pos, 2, &hour) || !Consume(s, &pos, ':') ||
      !FixedDigits(s, &pos, 2, &minute)) {
    return false;
  }
  if (Consume(s, &pos, ':')) {
    if (!FixedDigits(s, &pos, 2, &second) || !Fraction(s, &pos, &frac_ms)) return false;
  }
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (!Zone(s, &pos, &offset_ms) || pos != s.size()) return false;
  result += hour * kMsPerHour + minute * kMsPerMinute + second * kMsPerSecond + frac_ms - offset_ms;
  if (!fits(result)) return false;
  *ms = static_cast<int64_t>(result);
  return true;
}

int64_t CurrentTimeMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
// `width` decimal digits of 0 <= value < 10^width.
char* Digits(char* p, int64_t value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) p[i] = static_cast<char>('0' + value % 10);
  return p + width;
}
}  // namespace

size_t FormatIsoTime(int64_t ms, char* buf) {
  // Floor division, so instants before 1970 fall on the earlier day with a positive time of day.
  int64_t days = ms / kMsPerDay;
  int64_t rem = ms % kMsPerDay;
  if (rem < 0) {
    rem += kMsPerDay;
    --days;
  }
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  char* p = buf;
  // Years outside 0000-9999 (reachable only through offsets or extreme values) use ISO's expanded form.
  if (y < 0 || y > 9999) {
    const int n = std::snprintf(buf, kIsoTimeBufferSize, y < 0 ? "-%04lld" : "+%lld",
                                static_cast<long long>(y < 0 ? -y : y));
    p += n;
  } else {
    p = Digits(p, y, 4);
  }
  // By hand, not snprintf: planb enrich formats two of these per session answer.
  *p++ = '-';
  p = Digits(p, m, 2);
  *p++ = '-';
  p = Digits(p, d, 2);
  *p++ = 'T';
  p = Digits(p, rem / kMsPerHour, 2);
  *p++ = ':';
  p = Digits(p, rem / kMsPerMinute % 60, 2);
  *p++ = ':';
  p = Digits(p, rem / kMsPerSecond % 60, 2);
  *p++ = '.';
  p = Digits(p, rem % kMsPerSecond, 3);
  *p++ = 'Z';
  return static_cast<size_t>(p - buf);
}

std::string FormatIsoTime(int64_t ms) {
  char buf[kIsoTimeBufferSize];
  return std::string(buf, FormatIsoTime(ms, buf));
}

}  // namespace planb
