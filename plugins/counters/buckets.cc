#include "buckets.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "planb/duration.h"

namespace planb::counters {

bool BucketStart(int64_t time_ms, int64_t width, int64_t* start) {
  // In 128 bits, so that the floor below INT64_MIN is seen rather than wrapped.
  const __int128 t = time_ms;
  __int128 q = t / width;
  if (t % width < 0) --q;  // C++ divides towards zero; buckets floor
  const __int128 s = q * width;
  if (s < INT64_MIN) return false;
  *start = static_cast<int64_t>(s);
  return true;
}

bool BucketHolds(int64_t start, int64_t width, int64_t time_ms) {
  return time_ms >= start && static_cast<__int128>(time_ms) - start < width;
}

Code ParseBucketOption(const PluginArgs& args, int64_t* width, ErrorBuffer* error) {
  const char* value = FindOption(args, kBucketOption);
  if (value == nullptr) value = kDefaultBucket;
  int64_t ms = 0;
  if (!ParseDuration(value, &ms) || ms <= 0) {
    Escaped shown;
    return Fail(error, Code::kInvalidArgument,
                "option %s = '%s' is not a positive duration (e.g. 500ms, 10s, 1m, 1h, 1d or PT1H30M)", kBucketOption,
                Escape(Bytes(std::string_view(value)), &shown));
  }
  *width = ms;
  return Code::kOk;
}

Bytes TrimValue(Bytes text) {
  auto space = [](uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t begin = 0;
  size_t end = text.size;
  while (begin < end && space(text.data[begin])) ++begin;
  while (end > begin && space(text.data[end - 1])) --end;
  return Bytes(text.data + begin, end - begin);
}

bool ParseWholeNumber(Bytes text, int64_t* out, bool* out_of_range) {
  *out_of_range = false;
  const char* begin = reinterpret_cast<const char*>(text.data);
  const char* end = begin + text.size;
  if (begin == end) return false;
  const std::from_chars_result r = std::from_chars(begin, end, *out);
  if (r.ec == std::errc::result_out_of_range && r.ptr == end) {
    *out_of_range = true;
    return false;
  }
  return r.ec == std::errc() && r.ptr == end;
}

bool ParseDecimal(Bytes text, double* out) {
  const char* begin = reinterpret_cast<const char*>(text.data);
  const char* end = begin + text.size;
  if (begin == end) return false;
  const std::from_chars_result r = std::from_chars(begin, end, *out, std::chars_format::general);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(*out);
}

const char* Escape(Bytes text, Escaped* out) {
  constexpr size_t kShown = 48;
  size_t n = 0;
  for (size_t i = 0; i < text.size && i < kShown; ++i) {
    const uint8_t c = text.data[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out->text[n++] = static_cast<char>(c);
    } else {
      n += std::snprintf(out->text + n, sizeof(out->text) - n, "\\x%02x", c);
    }
  }
  if (text.size > kShown) n += std::snprintf(out->text + n, sizeof(out->text) - n, "...");
  out->text[n] = '\0';
  return out->text;
}

const char* FormatTime(int64_t ms, IsoTime* out) {
  // Days from the civil calendar (Howard Hinnant's algorithm), in 128 bits for the far ends of int64.
  constexpr int64_t kMsPerDay = 86400000;
  __int128 days = ms / kMsPerDay;
  int64_t rem = ms % kMsPerDay;
  if (rem < 0) rem += kMsPerDay, --days;
  const __int128 z = days + 719468;
  const __int128 era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = static_cast<int64_t>(z - era * 146097);
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe + era * 400) + (m <= 2);
  std::snprintf(out->text, sizeof(out->text),
                "%04" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%03" PRId64 "Z", y,
                m, d, rem / 3600000, rem / 60000 % 60, rem / 1000 % 60, rem % 1000);
  return out->text;
}

}  // namespace planb::counters
