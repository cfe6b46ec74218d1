// Key/value sets for benchmarks: synthetic ones, and real ones read from ../shared/data when present.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace planb::bench {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// `count` keys like "user-000123-<random>" with 20-60 byte values; deterministic.
KeyValues SyntheticKeyValues(size_t count);

// world-cities.csv.gz: city name -> country (later rows overwrite earlier ones). Empty when absent.
KeyValues WorldCities(std::string* why_missing);

// ieee-oui-all.csv.gz: assignment (hex MAC prefix) -> organization name. Empty when absent.
KeyValues OuiVendors(std::string* why_missing);

// domain-categories.csv.gz: domain -> category list, at most `max_rows` of them spread evenly over the file
// (sorted by domain). Empty when absent.
KeyValues DomainCategories(size_t max_rows, std::string* why_missing);

// git-commit-events.csv.gz: commit id (40 hex digits) -> author id (~2,700 authors over ~82,000 commits: values
// heavily duplicated). Empty when absent.
KeyValues CommitAuthors(std::string* why_missing);

// tor-geoip-ipv4.csv.gz: IPv4 ranges (first and last address as numbers, inclusive) -> country code, in file
// order ('#' comment lines skipped). Empty when absent.
struct CountryRange {
  int64_t from = 0;
  int64_t to = 0;
  std::string country;
};
std::vector<CountryRange> TorGeoIpIpv4(std::string* why_missing);

// Reads a gzip-compressed RFC 4180 CSV file into rows of fields (header included).
bool ReadGzipCsv(const std::string& path, std::vector<std::vector<std::string>>* rows);

}  // namespace planb::bench
