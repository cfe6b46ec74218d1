#include "support/temporal_data.h"

#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>

#include "support/bench_data.h"
#include "support/shard_setup.h"

namespace planb::bench {

std::vector<TemporalRow> SyntheticTemporalRows(size_t count) {
  constexpr int64_t kMinute = 60 * 1000;
  constexpr int64_t kMonth = int64_t{30} * 24 * 60 * kMinute;
  std::mt19937_64 rng(42);
  std::vector<TemporalRow> out;
  out.reserve(count);
  for (size_t i = 0; out.size() < count; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "zone-%06zu-%08llx", i, static_cast<unsigned long long>(rng() & 0xffffffff));
    const size_t versions = 1 + rng() % 19;
    int64_t time = int64_t{1500000000000} + static_cast<int64_t>(rng() % 100000000000);
    for (size_t v = 0; v < versions && out.size() < count; ++v) {
      out.push_back({key, time, std::string(8 + rng() % 33, static_cast<char>('a' + (i + v) % 26))});
      time += kMinute + static_cast<int64_t>(rng() % kMonth);
    }
  }
  return out;
}

// Columns: zone,effective_from_utc,effective_from_unix,utc_offset_seconds,is_dst,abbreviation (header first).
std::vector<TemporalRow> TzdataTransitions(std::string* why_missing) {
  const std::string path = SharedDataPath("tzdata-transitions.csv.gz");
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
  std::vector<TemporalRow> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (row.size() != 6 || row[0].empty()) continue;
    const int64_t time = row[2].empty() ? std::numeric_limits<int64_t>::min() : std::stoll(row[2]) * 1000;
    out.push_back({row[0], time, row[3] + " " + row[4] + " " + row[5]});
  }
  if (out.empty()) *why_missing = path + " holds no transitions";
  return out;
}

}  // namespace planb::bench
