// planb_enrich: adds a looked-up value to each line of a stream of events, using planb::Reader in-process.
//
//   planb_enrich --config planb.ini --map city_to_country [--time 2024-01-01T00:00:00Z] <events >enriched
//
// Each input line is one key (a whole number for ranged maps). Each output line is the input line, a TAB and the
// map's answer: the value, or for session maps the session's start and end as ISO-8601 times ("START END");
// empty when the key is absent. Lines are looked up 256 at a time with LookupMany (one read transaction per
// batch). A line whose key cannot be looked up (not a number for a ranged map) gets an empty answer and a message
// on stderr; the exit status is then 1. Uses only the installed headers: planb/reader.h and what it includes.
#include <planb/reader.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr size_t kBatch = 256;

struct Options {
  std::string config;
  std::string map;
  std::string time;  // "" = now
};

const char kUsage[] = "usage: planb_enrich --config FILE --map NAME [--time ISO-8601] <lines >enriched\n";

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string* target = arg == "--config" ? &options->config
                          : arg == "--map"  ? &options->map
                          : arg == "--time" ? &options->time
                                            : nullptr;
    if (target == nullptr || i + 1 == argc) {
      std::fprintf(stderr, "planb_enrich: %s '%s'\n%s", target == nullptr ? "unknown argument" : "no value for",
                   arg.c_str(), kUsage);
      return false;
    }
    *target = argv[++i];
  }
  if (options->config.empty() || options->map.empty()) {
    std::fprintf(stderr, "planb_enrich: --config and --map are required\n%s", kUsage);
    return false;
  }
  return true;
}

// "2024-01-01T08:10:22Z" or "2024-01-01T08:10:22.023Z" (UTC) -> milliseconds since the epoch.
bool ParseTime(const std::string& text, int64_t* ms) {
  std::tm tm{};
  int millis = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return false;
  }
  const char* rest = text.c_str() + consumed;
  if (*rest == '.') {
    int digits = 0;
    for (++rest; *rest >= '0' && *rest <= '9'; ++rest, ++digits) {
      if (digits < 3) millis = millis * 10 + (*rest - '0');
    }
    if (digits == 0) return false;
    for (; digits < 3; ++digits) millis *= 10;
  }
  if (rest[0] != 'Z' || rest[1] != '\0') return false;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  *ms = static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
  return true;
}

// Milliseconds since the epoch -> "2024-01-01T08:10:22.023Z".
void AppendTime(int64_t ms, std::string* out) {
  int64_t seconds = ms / 1000;
  int64_t millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  out->append(text, n);
  std::snprintf(text, sizeof text, ".%03dZ", static_cast<int>(millis));
  out->append(text);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;
  planb::ReaderOptions reader_options;
  reader_options.config_path = options.config;
  std::unique_ptr<planb::Reader> reader;
  planb::Status s = planb::Reader::Open(reader_options, &reader);
  planb::MapInfo info;
  if (s.ok()) s = reader->Describe(options.map, &info);
  int64_t time_ms = 0;  // now
  if (s.ok() && !options.time.empty()) {
    if (!info.uses_time) {
      s = planb::Status::Invalid("--time does not apply to map " + options.map + " (type " + info.type +
                                 " has no time)");
    } else if (!ParseTime(options.time, &time_ms)) {
      s = planb::Status::Invalid("--time: '" + options.time + "' is not a UTC time like 2024-01-01T08:10:22.023Z");
    }
  }
  // Opens the map now, so that a broken map shows before any input is read; no data yet is fine (all misses).
  if (s.ok()) s = reader->Prepare(options.map);
  if (!s.ok() && s.code() != planb::Code::kNotFound) {
    std::fprintf(stderr, "planb_enrich: %s\n", s.message().c_str());
    return 1;
  }

  std::ios::sync_with_stdio(false);
  std::vector<std::string> lines(kBatch);
  std::vector<planb::ReaderKey> keys(kBatch);
  std::vector<planb::LookupResult> results(kBatch);
  std::vector<char> bad(kBatch);
  std::string out;
  uint64_t line_number = 0;
  bool any_bad = false;
  for (;;) {
    size_t n = 0;
    while (n < kBatch && std::getline(std::cin, lines[n])) {
      std::string& line = lines[n];
      if (!line.empty() && line.back() == '\r') line.pop_back();
      ++line_number;
      keys[n] = planb::ReaderKey();
      keys[n].time_ms = time_ms;
      bad[n] = 0;
      if (info.number_keys) {
        const char* end = line.data() + line.size();
        auto [ptr, ec] = std::from_chars(line.data(), end, keys[n].number);
        if (ec != std::errc() || ptr != end) {
          std::fprintf(stderr, "planb_enrich: line %llu: '%s' is not a whole number; map %s is keyed by numbers\n",
                       static_cast<unsigned long long>(line_number), line.c_str(), options.map.c_str());
          bad[n] = 1;
          any_bad = true;
        }
      } else {
        keys[n].key = line;
      }
      ++n;
    }
    if (n == 0) break;
    // Every result says what happened to its key, so the batch's own code adds nothing here.
    (void)reader->LookupMany(options.map, keys.data(), n, results.data());
    out.clear();
    for (size_t i = 0; i < n; ++i) {
      out += lines[i];
      out += '\t';
      const planb::LookupResult& r = results[i];
      if (!bad[i] && r.code != planb::Code::kOk && r.code != planb::Code::kNotFound) {
        std::fprintf(stderr, "planb_enrich: %s\n", r.error);  // the map failed (its environment, its snapshot)
        return 1;
      }
      if (!bad[i] && r.found()) {
        if (info.has_session) {
          AppendTime(r.session_start_ms, &out);
          out += ' ';
          AppendTime(r.session_end_ms, &out);
        } else {
          out.append(r.value.view());
        }
      }
      out += '\n';
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (n < kBatch) break;
  }
  std::fflush(stdout);
  return any_bad ? 1 : 0;
}
