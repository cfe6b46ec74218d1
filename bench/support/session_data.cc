#include "support/session_data.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "support/bench_data.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "17/May/2015:10:05:03 +0000" -> ms since the epoch; false when it is not that shape.
}  // namespace

bool ParseApacheTime(const char* text, int64_t* out) {
  static const char kMonths[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  int day = 0, year = 0, hour = 0, minute = 0, second = 0, zone = 0;
  char month[4] = {0};
  char sign = 0;
  if (std::sscanf(text, "%2d/%3c/%4d:%2d:%2d:%2d %c%4d", &day, month, &year, &hour, &minute, &second, &sign, &zone) !=
          8 ||
      (sign != '+' && sign != '-')) {
    return false;
  }
  const char* found = std::strstr(kMonths, month);
  if (found == nullptr || (found - kMonths) % 3 != 0) return false;
  const int64_t offset = (zone / 100 * 60 + zone % 100) * kMinute * (sign == '-' ? -1 : 1);
  *out = DaysFromCivil(year, (found - kMonths) / 3 + 1, day) * kDay + hour * kHour + minute * kMinute +
         second * kSecond - offset;
  return true;
}

std::vector<SessionEvent> SyntheticSessionEvents(size_t count) {
  std::mt19937_64 rng(42);
  std::vector<SessionEvent> out;
  out.reserve(count);
  for (size_t i = 0; out.size() < count; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "user-%06zu-%08llx", i, static_cast<unsigned long long>(rng() & 0xffffffff));
    const size_t events = 1 + rng() % 39;
    int64_t time = int64_t{1500000000000} + static_cast<int64_t>(rng() % 100000000000);
    for (size_t e = 0; e < events && out.size() < count; ++e) {
      const uint64_t pick = rng() % 8;
      const int64_t timeout = pick == 0 ? 30 * kSecond : pick == 7 ? 2 * kHour : 30 * kMinute;
      out.push_back({key, time, timeout});
      time += rng() % 4 == 0 ? kHour + static_cast<int64_t>(rng() % (3 * kDay))
                             : 5 * kSecond + static_cast<int64_t>(rng() % (20 * kMinute));
    }
  }
  return out;
}

// Columns: commit,is_merge,author_id,author_time_unix,author_tz,committer_id,committer_time_unix,committer_tz.
std::vector<SessionEvent> GitCommitEvents(std::string* why_missing) {
  const std::string path = SharedDataPath("git-commit-events.csv.gz");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *why_missing = path + " not found";
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  if (!ReadGzipCsv(path, &rows) || rows.size() < 2) {
    *why_missing = path + " could not be read";
    return {};
  }
  std::vector<SessionEvent> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (row.size() != 8 || row[2].empty() || row[3].empty()) continue;
    out.push_back({row[2], std::stoll(row[3]) * kSecond, 30 * kMinute});
  }
  if (out.empty()) *why_missing = path + " holds no events";
  return out;
}

// Combined log format: `ip - - [dd/Mon/yyyy:HH:MM:SS +0000] "request" ...`.
std::vector<SessionEvent> ApacheLogEvents(std::string* why_missing) {
  const std::string path = SharedDataPath("apache_logs.gz");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *why_missing = path + " not found";
    return {};
  }
  std::vector<std::string> lines;
  if (!ReadGzipLines(path, &lines)) {
    *why_missing = path + " could not be read";
    return {};
  }
  std::vector<SessionEvent> out;
  for (const std::string& line : lines) {
    const size_t space = line.find(' ');
    const size_t bracket = line.find('[');
    int64_t time = 0;
    if (space == 0 || space == std::string::npos || bracket == std::string::npos ||
        !ParseApacheTime(line.c_str() + bracket + 1, &time)) {
      continue;
    }
    out.push_back({line.substr(0, space), time, 30 * kMinute});
  }
  if (out.empty()) *why_missing = path + " holds no parseable lines";
  return out;
}

}  // namespace planb::bench
