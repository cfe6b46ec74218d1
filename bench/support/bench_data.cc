#include "support/bench_data.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

namespace planb::bench {

KeyValues SyntheticKeyValues(size_t count) {
  std::mt19937_64 rng(42);
  KeyValues out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "user-%06zu-%08llx", i, static_cast<unsigned long long>(rng() & 0xffffffff));
    out.emplace_back(key, std::string(20 + rng() % 41, static_cast<char>('a' + i % 26)));
  }
  return out;
}

bool ReadGzipCsv(const std::string& path, std::vector<std::vector<std::string>>* rows) {
  std::string command = "gzip -dc '" + path + "'";
  FILE* in = ::popen(command.c_str(), "r");
  if (in == nullptr) return false;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool any = false;
  for (int c = std::fgetc(in); c != EOF; c = std::fgetc(in)) {
    any = true;
    if (quoted) {
      if (c == '"') {
        int next = std::fgetc(in);
        if (next == '"') {
          field += '"';
        } else {
          quoted = false;
          if (next == EOF) break;
          std::ungetc(next, in);
        }
      } else {
        field += static_cast<char>(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows->push_back(std::move(row));
      row.clear();
    } else if (c != '\r') {
      field += static_cast<char>(c);
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows->push_back(std::move(row));
  }
  return ::pclose(in) == 0 && any;
}

namespace {

// Columns `key` -> `value` of the shared CSV file `file` (header skipped); later rows overwrite earlier ones, as a
// load would. Empty, with the reason, when the file is absent or unreadable.
KeyValues SharedCsv(const char* file, size_t key, size_t value, std::string* why_missing) {
  const char* env = std::getenv("PLANB_SHARED_DATA");
  std::string path = std::string(env != nullptr ? env : PLANB_SHARED_DATA_DIR) + "/" + file;
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
  std::map<std::string, std::string> last;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].size() > std::max(key, value) && !rows[i][key].empty()) last[rows[i][key]] = rows[i][value];
  }
  return KeyValues(last.begin(), last.end());
}

}  // namespace

std::vector<CountryRange> TorGeoIpIpv4(std::string* why_missing) {
  const char* env = std::getenv("PLANB_SHARED_DATA");
  const std::string path = std::string(env != nullptr ? env : PLANB_SHARED_DATA_DIR) + "/tor-geoip-ipv4.csv.gz";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *why_missing = path + " not found";
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  if (!ReadGzipCsv(path, &rows)) {
    *why_missing = path + " could not be read";
    return {};
  }
  std::vector<CountryRange> out;
  for (const auto& row : rows) {
    if (row.size() != 3 || row[0].empty() || row[0][0] == '#') continue;
    out.push_back({std::stoll(row[0]), std::stoll(row[1]), row[2]});
  }
  if (out.empty()) *why_missing = path + " holds no ranges";
  return out;
}

KeyValues WorldCities(std::string* why_missing) { return SharedCsv("world-cities.csv.gz", 0, 1, why_missing); }

KeyValues OuiVendors(std::string* why_missing) { return SharedCsv("ieee-oui-all.csv.gz", 1, 2, why_missing); }

KeyValues DomainCategories(size_t max_rows, std::string* why_missing) {
  KeyValues all = SharedCsv("domain-categories.csv.gz", 0, 1, why_missing);
  if (all.size() <= max_rows || max_rows == 0) return all;
  KeyValues out;
  out.reserve(max_rows);
  for (size_t i = 0; i < max_rows; ++i) out.push_back(std::move(all[i * all.size() / max_rows]));
  return out;
}

KeyValues CommitAuthors(std::string* why_missing) {
  return SharedCsv("git-commit-events.csv.gz", 0, 2, why_missing);
}

}  // namespace planb::bench
