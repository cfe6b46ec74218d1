// planb enrich's engine (EventEnricher) beside the Reader's own batched lookups of the same keys, on a stream of
// JSON events made from the Apache access log in ../shared/data (10,000 requests, 1,753 client IPs; skipped with
// a message when absent). Two maps, loaded through the real ingest path:
//   owner     state (hashed): client IP -> "owner-N", every IP of the log
//   sessions  session (direct): the log's own requests, 30 min timeout
// Each iteration passes the whole stream (items = events):
//   one_lookup/raw_reader_lookup_many    LookupMany of every event's client.ip in owner, 256 at a time: the
//                                        lookups alone, the baseline
//   one_lookup/enrich_json               enrich --lookup owner=owner:client.ip over the JSON lines: reading,
//                                        the full check of each line, finding the field, the lookups, writing
//   one_lookup/check_only                JsonLineChecker over every line: what parsing alone costs
//   two_lookups/raw_reader_lookup_many   the same for owner, and sessions at each event's @timestamp
//   two_lookups/enrich_json              --lookup owner=owner:client.ip --lookup session=sessions:client.ip@time
//   geoip/raw_reader_lookup_many         the client IPs in `geo`, Tor's IPv4 ranges -> country (385,602 ranges,
//                                        key_format = ipv4, from tor-geoip-ipv4.csv.gz; skipped when absent)
//   geoip/enrich_json                    --lookup geo.country=geo:client.ip
// The ratio of enrich_json to its baseline is what the JSON work adds to the lookups.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "host/common/iso_time.h"
#include "host/enrich/event_enricher.h"
#include "host/common/json_text.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/session_data.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

constexpr size_t kBatch = 256;

struct Event {
  std::string ip;
  int64_t time_ms = 0;
};

struct Fixture {
  std::vector<Event> events;
  bool geoip = false;  // the geo map is loaded
  std::string jsonl;  // one JSON object per event
  std::unique_ptr<Reader> reader;
  std::string why_missing;
};

Fixture* fixture = nullptr;

// Discards what is written, as a pipe to a fast consumer would.
class NullBuffer : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

// The quoted parts of a log line: request, referrer, agent; and the status and size between them.
std::string EventJson(const std::string& line, const Event& event) {
  std::vector<std::string> quoted;
  size_t at = 0;
  std::string between;
  while ((at = line.find('"', at)) != std::string::npos) {
    const size_t end = line.find('"', at + 1);
    if (end == std::string::npos) break;
    quoted.push_back(line.substr(at + 1, end - at - 1));
    if (quoted.size() == 1) {
      const size_t next = line.find('"', end + 1);
      between = line.substr(end + 1, next == std::string::npos ? 0 : next - end - 1);
    }
    at = end + 1;
  }
  unsigned status = 0;
  unsigned long long bytes = 0;
  std::sscanf(between.c_str(), "%u %llu", &status, &bytes);
  std::string json = "{\"@timestamp\":";
  AppendJsonString(FormatIsoTime(event.time_ms), &json);
  json += ",\"client\":{\"ip\":";
  AppendJsonString(event.ip, &json);
  json += "},\"http\":{\"request\":";
  AppendJsonString(quoted.size() > 0 ? quoted[0] : "", &json);
  json += ",\"status\":" + std::to_string(status) + ",\"bytes\":" + std::to_string(bytes) + "},\"referrer\":";
  AppendJsonString(quoted.size() > 1 ? quoted[1] : "", &json);
  json += ",\"agent\":";
  AppendJsonString(quoted.size() > 2 ? quoted[2] : "", &json);
  json += "}\n";
  return json;
}

bool Build(const std::string& root) {
  std::vector<std::string> lines;
  const std::string path = SharedDataPath("apache_logs.gz");
  if (!ReadGzipLines(path, &lines)) {
    fixture->why_missing = path + " not found or unreadable";
    return false;
  }
  for (const std::string& line : lines) {
    const size_t space = line.find(' ');
    const size_t bracket = line.find('[');
    Event event;
    if (space == 0 || space == std::string::npos || bracket == std::string::npos ||
        !ParseApacheTime(line.c_str() + bracket + 1, &event.time_ms)) {
      continue;
    }
    event.ip = line.substr(0, space);
    fixture->jsonl += EventJson(line, event);
    fixture->events.push_back(std::move(event));
  }
  std::set<std::string> ips;
  for (const Event& e : fixture->events) ips.insert(e.ip);
  std::string why_no_geoip;
  const std::vector<CountryRange> geoip = TorGeoIpIpv4(&why_no_geoip);
  fixture->geoip = !geoip.empty();
  {
    std::unique_ptr<Runtime> runtime = OpenBenchRuntime(
        root, "[map.owner]\ntype = state\nscheme = hashed\n[map.sessions]\ntype = session\nscheme = direct\n"
              "[map.geo]\ntype = ranged\nkey_format = ipv4\nmax_store_size = 1GiB\n");
    LoadStream(runtime.get(), "bench", [&](StreamWriter* writer) {
      std::string from, to;
      for (const CountryRange& r : geoip) {
        from = std::to_string(r.from);
        to = std::to_string(r.to);
        Record range;
        range.has_range = range.has_value = true;
        range.range_from = Bytes(from);
        range.range_to = Bytes(to);
        range.value = Bytes(r.country);
        CheckSetup(writer->Add("geo", range));
      }
      Record record;
      record.has_key = record.has_value = true;
      size_t n = 0;
      for (const std::string& ip : ips) {
        const std::string value = "owner-" + std::to_string(n++);
        record.key = Bytes(ip);
        record.value = Bytes(value);
        CheckSetup(writer->Add("owner", record));
      }
      for (const Event& e : fixture->events) {
        Record session;
        session.kind = RecordKind::kSession;
        session.has_key = true;
        session.key = Bytes(e.ip);
        session.time_ms = e.time_ms;
        session.time_given = true;
        session.timeout_ms = 30 * 60 * 1000;
        session.has_timeout = true;
        CheckSetup(writer->Add("sessions", session));
      }
    });
  }
  ReaderOptions options;
  options.config_path = root + "/planb.ini";
  CheckSetup(Reader::Open(options, &fixture->reader));
  CheckSetup(fixture->reader->Prepare("owner"));
  CheckSetup(fixture->reader->Prepare("sessions"));
  if (fixture->geoip) CheckSetup(fixture->reader->Prepare("geo"));
  return true;
}

void Finish(benchmark::State& state, size_t found, size_t expected, const char* what) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * fixture->events.size()));
  if (found == expected * static_cast<size_t>(state.iterations())) return;
  const std::string message = std::string(what) + ": " + std::to_string(found) + " answers, expected " +
                              std::to_string(expected * static_cast<size_t>(state.iterations()));
  state.SkipWithError(message.c_str());
}

// How many of the events' client IPs lie in a geo range (a miss is an address in a gap or IPv6).
size_t GeoAnswers() {
  static const size_t answers = [] {
    size_t n = 0;
    for (const Event& e : fixture->events) n += fixture->reader->Lookup("geo", e.ip).found();
    return n;
  }();
  return answers;
}

// Every event's client.ip in `map` (and, `with_sessions`, in sessions at the event's time), 256 at a time.
void LookupMany(benchmark::State& state, const char* map, bool with_sessions) {
  Reader& reader = *fixture->reader;
  const std::vector<Event>& events = fixture->events;
  std::vector<ReaderKey> keys(kBatch);
  std::vector<ReaderKey> timed(kBatch);
  std::vector<LookupResult> results(kBatch);
  std::vector<LookupResult> sessions(kBatch);
  size_t found = 0;
  for (auto _ : state) {
    for (size_t start = 0; start < events.size(); start += kBatch) {
      const size_t n = std::min(kBatch, events.size() - start);
      for (size_t i = 0; i < n; ++i) {
        keys[i].key = events[start + i].ip;
        if (with_sessions) {
          timed[i].key = events[start + i].ip;
          timed[i].time = LookupTime::At(events[start + i].time_ms);
        }
      }
      (void)reader.LookupMany(map, keys.data(), n, results.data());
      for (size_t i = 0; i < n; ++i) found += results[i].found();
      if (with_sessions) {
        (void)reader.LookupMany("sessions", timed.data(), n, sessions.data());
        for (size_t i = 0; i < n; ++i) found += sessions[i].found();
      }
      benchmark::DoNotOptimize(results.data());
    }
  }
  const size_t answers = std::string(map) == "geo" ? GeoAnswers() : events.size();
  Finish(state, found, answers + (with_sessions ? events.size() : 0), "Reader::LookupMany");
}

// `lookups`: 1 (owner), 2 (owner and sessions) or 0 (geo alone).
void EnrichJson(benchmark::State& state, int lookups) {
  EnrichSpec spec;
  spec.lookups.resize(lookups == 0 ? 1 : static_cast<size_t>(lookups));
  CheckSetup(ParseLookup(lookups == 0 ? "geo.country=geo:client.ip" : "owner=owner:client.ip", &spec.lookups[0]));
  if (lookups == 2) CheckSetup(ParseLookup("session=sessions:client.ip@@timestamp", &spec.lookups[1]));
  std::vector<MapInfo> infos(spec.lookups.size());
  for (size_t j = 0; j < spec.lookups.size(); ++j) CheckSetup(fixture->reader->Describe(spec.lookups[j].map, &infos[j]));
  NullBuffer null;
  std::ostream out(&null);
  std::ostringstream warnings;
  EventEnricher enricher(fixture->reader.get(), spec, infos, warnings);
  for (auto _ : state) {
    std::istringstream stream(fixture->jsonl);
    StreamByteSource in(stream);
    CheckSetup(enricher.Run(in, "apache", out));
  }
  size_t found = 0;
  for (const LookupCounts& c : enricher.counts().lookups) found += c.hits;
  Finish(state, found, lookups == 0 ? GeoAnswers() : fixture->events.size() * spec.lookups.size(), "enrich");
}

void CheckOnly(benchmark::State& state) {
  JsonLineChecker checker;
  std::string why;
  size_t valid = 0;
  std::vector<std::string_view> lines;
  std::string_view all(fixture->jsonl);
  for (size_t at = 0; at < all.size();) {
    const size_t end = all.find('\n', at);
    lines.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  for (auto _ : state) {
    for (std::string_view line : lines) valid += checker.Check(line, true, &why);  // the stream's bytes pad it
  }
  Finish(state, valid, fixture->events.size(), "JsonLineChecker");
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  fixture = new Fixture();
  const std::string root = MakeBenchRoot("enrich");
  if (!Build(root)) {
    std::printf("enrich_bench: skipped: %s\n", fixture->why_missing.c_str());
    return 0;
  }
  std::printf("enrich_bench: %zu events, %zu bytes of JSON lines\n", fixture->events.size(), fixture->jsonl.size());
  benchmark::RegisterBenchmark("one_lookup/raw_reader_lookup_many", LookupMany, "owner", false);
  benchmark::RegisterBenchmark("one_lookup/enrich_json", EnrichJson, 1);
  benchmark::RegisterBenchmark("one_lookup/check_only", CheckOnly);
  benchmark::RegisterBenchmark("two_lookups/raw_reader_lookup_many", LookupMany, "owner", true);
  benchmark::RegisterBenchmark("two_lookups/enrich_json", EnrichJson, 2);
  if (fixture->geoip) {
    benchmark::RegisterBenchmark("geoip/raw_reader_lookup_many", LookupMany, "geo", false);
    benchmark::RegisterBenchmark("geoip/enrich_json", EnrichJson, 0);
  } else {
    NoteSkipped("geoip/enrich_json", "tor-geoip-ipv4.csv.gz not found");
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
