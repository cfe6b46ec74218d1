#include "support/bench_data.h"

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

KeyValues WorldCities(std::string* why_missing) {
  const char* env = std::getenv("PLANB_SHARED_DATA");
  std::string path = std::string(env != nullptr ? env : PLANB_SHARED_DATA_DIR) + "/world-cities.csv.gz";
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
  std::map<std::string, std::string> last;  // later rows overwrite, as a load would
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].size() >= 2 && !rows[i][0].empty()) last[rows[i][0]] = rows[i][1];
  }
  return KeyValues(last.begin(), last.end());
}

}  // namespace planb::bench
