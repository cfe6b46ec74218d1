// Key/value sets for benchmarks: synthetic ones, and real ones read from ../shared/data when present.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace planb::bench {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// `count` keys like "user-000123-<random>" with 20-60 byte values; deterministic.
KeyValues SyntheticKeyValues(size_t count);

// world-cities.csv.gz: city name -> country (later rows overwrite earlier ones). Empty when absent.
KeyValues WorldCities(std::string* why_missing);

// Reads a gzip-compressed RFC 4180 CSV file into rows of fields (header included).
bool ReadGzipCsv(const std::string& path, std::vector<std::vector<std::string>>* rows);

}  // namespace planb::bench
