// enrich_alloc_check CONFIG HOME: counts the heap allocations of planb enrich's engine over a warm stream (the
// allocation counter of `planb conform`, linked in as in the planb executable). Prints
// "events E allocations A" for a second pass over 4096 JSON events with lookups of a state, a temporal and a
// session map (hits, misses, per-event times, a fallback, tags); tests/host/cli/enrich_command_test.cc runs it
// against a home it loaded and expects no allocation per event.
#include <cstdio>
#include <memory>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "host/common/byte_source.h"
#include "host/enrich/event_enricher.h"
#include "host/kit/alloc_count.h"

namespace {

class NullBuffer : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

int Fail(const planb::Status& s) {
  std::fprintf(stderr, "enrich_alloc_check: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace planb;
  if (argc != 3 || !AllocationCountingAvailable()) {
    std::fprintf(stderr, "usage: enrich_alloc_check CONFIG HOME (built with the allocation counter)\n");
    return 2;
  }
  ReaderOptions options;
  options.config_path = argv[1];
  options.home = argv[2];
  options.maintenance_interval_ms = 0;  // no background thread allocating while counting
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  if (!s.ok()) return Fail(s);
  EnrichSpec spec;
  spec.on_miss = OnMiss::kTag;
  for (const char* text : {"geo.country=city_to_country:city", "d=dept:u@t", "s=sessions:u@@ts"}) {
    spec.lookups.emplace_back();
    s = ParseLookup(text, &spec.lookups.back());
    if (!s.ok()) return Fail(s);
  }
  s = ParseFallback("d=none", &spec.lookups);
  if (!s.ok()) return Fail(s);
  std::vector<MapInfo> infos(spec.lookups.size());
  for (size_t j = 0; j < spec.lookups.size(); ++j) {
    s = reader->Describe(spec.lookups[j].map, &infos[j]);
    if (!s.ok()) return Fail(s);
  }
  std::string events;
  const char* cities[] = {"Ankara", "Nowhere", "Bras\\u00edlia", "quote\\\"d"};
  for (int i = 0; i < 4096; ++i) {
    events += "{\"city\":\"" + std::string(cities[i % 4]) + "\",\"u\":\"u" + std::to_string(i % 3) +
              "\",\"t\":" + std::to_string(1704067200000 + i * 60000) + ",\"@ts\":\"2024-01-01T10:" +
              std::to_string(10 + i % 50) + ":00Z\",\"n\":1.50" + (i % 5 == 0 ? ",\"geo\":{\"x\":1}" : "") + "}\n";
  }
  events += "not json\n";
  NullBuffer null;
  std::ostream out(&null);
  std::ostringstream warnings;
  EventEnricher enricher(reader.get(), spec, infos, warnings);
  for (int pass = 0; pass < 2; ++pass) {
    std::istringstream stream(events);
    StreamByteSource in(stream);
    const uint64_t before = AllocationCount();
    if (pass == 1) SetAllocationCounting(true);
    s = enricher.Run(in, "events", out);
    SetAllocationCounting(false);
    if (!s.ok()) return Fail(s);
    if (pass == 1) {
      std::printf("events %llu allocations %llu hits %llu\n", 4097ULL,
                  static_cast<unsigned long long>(AllocationCount() - before),
                  static_cast<unsigned long long>(enricher.counts().lookups[0].hits));
    }
  }
  return 0;
}
