// planb_enrich: adds a looked-up value to each line of a stream of events, using planb::Reader in-process.
//
//   planb_enrich --config planb.ini --map city_to_country [--time 2024-01-01T00:00:00Z] <events >enriched
//
// Each input line is one key (a whole number for ranged maps). Each output line is the input line, a TAB and the
// map's answer: the value, or for session maps the session's start and end as ISO-8601 times ("START END");
// empty when the key is absent. Lines are looked up 256 at a time with LookupMany (one read transaction per
// batch). A line whose key cannot be looked up (not a number for a ranged map) gets an empty answer and a message
// on stderr; the exit status is then 1. Bad arguments (an unknown map, a --time that does not parse) exit 2.
// Uses only the installed headers: planb/reader.h and what it includes.
#include <planb/reader.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

const char kUsage[] =
    "usage: planb_enrich --config FILE --map NAME [--time ISO-8601] <lines >enriched\n"
    "  Prints each input line (a key; a whole number for ranged maps), a TAB and the map's answer.\n"
    "  --config FILE   the planb.ini\n"
    "  --map NAME      the map to look the keys up in\n"
    "  --time TIME     time-aware maps: the instant asked about, in any form `planb lookup --time` takes\n"
    "                  (2024-01-01T08:10:22.023Z, 2024-01-01T09:10:22+01:00, 2024-01-01...); default now\n"
    "  --help          this text\n"
    "Exit status: 0; 1 when a line could not be looked up or the map failed; 2 for bad arguments.\n";

enum class Parsed { kRun, kHelp, kError };

Parsed ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Parsed::kHelp;
    std::string* target = arg == "--config" ? &options->config
                          : arg == "--map"  ? &options->map
                          : arg == "--time" ? &options->time
                                            : nullptr;
    if (target == nullptr || i + 1 == argc) {
      std::fprintf(stderr, "planb_enrich: %s '%s'\n%s", target == nullptr ? "unknown argument" : "no value for",
                   arg.c_str(), kUsage);
      return Parsed::kError;
    }
    *target = argv[++i];
  }
  if (options->config.empty() || options->map.empty()) {
    std::fprintf(stderr, "planb_enrich: --config and --map are required\n%s", kUsage);
    return Parsed::kError;
  }
  return Parsed::kRun;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  switch (ParseArgs(argc, argv, &options)) {
    case Parsed::kHelp:
      std::fputs(kUsage, stdout);
      return 0;
    case Parsed::kError:
      return 2;
    case Parsed::kRun:
      break;
  }
  // The same parser as `planb lookup --time`, from the library.
  int64_t time_ms = 0;
  if (!options.time.empty() && !planb::Reader::ParseTime(options.time, &time_ms)) {
    std::fprintf(stderr, "planb_enrich: --time: '%s' is not an ISO-8601 time (e.g. 2024-01-01T08:10:22.023Z)\n",
                 options.time.c_str());
    return 2;
  }
  const planb::LookupTime time = options.time.empty() ? planb::LookupTime::Now() : planb::LookupTime::At(time_ms);
  planb::ReaderOptions reader_options;
  reader_options.config_path = options.config;
  std::unique_ptr<planb::Reader> reader;
  planb::Status s = planb::Reader::Open(reader_options, &reader);
  planb::MapInfo info;
  if (s.ok()) s = reader->Describe(options.map, &info);
  if (!s.ok()) {  // the config, the plugins, an unknown map: bad arguments
    std::fprintf(stderr, "planb_enrich: %s\n", s.message().c_str());
    return 2;
  }
  if (!options.time.empty() && !info.uses_time) {
    std::fprintf(stderr, "planb_enrich: --time does not apply to map %s (type %s has no time)\n",
                 options.map.c_str(), info.type.c_str());
    return 2;
  }
  // Opens the map now, so that a broken map, or one with no data on this node (kNoData: the wrong home, or nothing
  // loaded yet), shows before any input is read instead of every line missing.
  s = reader->Prepare(options.map);
  if (!s.ok()) {
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
      keys[n].time = time;
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
          out += planb::Reader::FormatTime(r.session_start_ms);
          out += ' ';
          out += planb::Reader::FormatTime(r.session_end_ms);
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
