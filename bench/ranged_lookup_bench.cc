// Lookups through the Ranged and Temporal Ranged store types beside a raw LMDB cursor baseline on the same
// ranges, in the same run: hits and misses, on synthetic ranges (disjoint, with every tenth holding a nested
// range, and hits outside the nested ones: the case a "greatest from <= key" search gets wrong) and, when
// ../shared/data is present, the real IPv4 ranges of tor-geoip-ipv4.csv.gz.
// The baseline is that naive search: a table keyed from + to, one SET_RANGE to the key + 1 and one PREV, then a
// containment check. It is only right for disjoint ranges, so it is checked only there. A second raw figure,
// raw_cursor_and_get, adds one mdb_get on a second table of one 20-byte row per from (the shape of Plan B's
// range index): the floor for any design that keeps its index beside the data rather than in them.
// Plan B's shards are built through the real path (StreamWriter -> staging -> MergeProcessor) and read through
// MapReader, which keeps its read transaction open between lookups, as the raw baseline does. The reader_* rows
// look the same numbers and addresses up through planb::Reader, which answers ranged maps from its read index
// (host/reader/range_answer_index.h; the bench checks it holds a current one): what an event processor pays.
// The *_ip variants load the same ranges into maps with key_format = ip as IPv6 addresses (2001:db8:: plus the
// number in the low 64 bits, so every one of the 16 bytes of a bound is stored and compared) and look them up by
// address text, as `planb lookup` and Reader do: each lookup includes parsing the address.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/runtime.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/ip_address.h"
#include "planb/lmdb.h"
#include "planb/reader.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kEffectiveTime = 1700000000000;

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::exit(1);
  }
}

struct RangeValue {
  int64_t from;
  int64_t to;
  std::string value;
};

// One range set loaded three ways: raw LMDB (from + to -> value), ranged, temporal_ranged.
struct Fixture {
  std::string name;
  bool disjoint = true;  // the raw baseline's answers can be checked
  std::vector<RangeValue> ranges;
  std::vector<int64_t> hits;    // numbers inside some range, in random order
  std::vector<int64_t> misses;  // numbers in no range
  std::unique_ptr<Runtime> runtime;
  MapReader ranged;
  MapReader temporal;
  MapReader ranged_ip;
  MapReader temporal_ip;
  std::vector<std::string> hit_texts;  // hits and misses as IPv6 address text (Ip6)
  std::vector<std::string> miss_texts;
  Env raw_env;
  Txn raw_txn;
  Cursor raw_cursor;
  MDB_dbi raw_dbi = 0;
  MDB_dbi raw_index = 0;
  std::unique_ptr<Reader> reader;  // on the same home
};

void BuildRaw(const std::string& dir, Fixture* f) {
  fs::create_directories(dir);
  Env::Options options;
  Check(f->raw_env.Open(dir, options));
  Txn txn;
  Check(txn.Begin(f->raw_env.get(), 0));
  Check(txn.OpenDbi("data", MDB_CREATE, &f->raw_dbi));
  Check(txn.OpenDbi("index", MDB_CREATE, &f->raw_index));
  for (const RangeValue& r : f->ranges) {
    uint8_t key[20] = {0};
    PutOrderedI64(key, r.from);
    PutOrderedI64(key + 8, r.to);
    Check(txn.Put(f->raw_dbi, Bytes(key, 16), Bytes(r.value)));
    Check(txn.Put(f->raw_index, Bytes(key, 8), Bytes(key, sizeof(key))));
  }
  Check(txn.Commit());
  Check(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));
  Check(f->raw_cursor.Open(f->raw_txn.get(), f->raw_dbi));
}

// 2001:db8:: with the number (order-preserving, n ^ 2^63) in the low 64 bits.
std::string Ip6(int64_t n) {
  ip::Address a;
  a.bytes[0] = 0x20;
  a.bytes[1] = 0x01;
  a.bytes[2] = 0x0d;
  a.bytes[3] = 0xb8;
  PutOrderedI64(a.bytes + 8, n);
  char text[ip::kMaxText];
  return std::string(text, ip::Format(a, text));
}

void BuildPlanB(const std::string& dir, Fixture* f) {
  std::ofstream(dir + "/planb.ini") << "home = " << dir << "/home\n"
                                    << "[map.ranged]\ntype = ranged\n"
                                    << "[map.temporal]\ntype = temporal_ranged\n"
                                    << "[map.ranged_ip]\ntype = ranged\nkey_format = ip\n"
                                    << "[map.temporal_ip]\ntype = temporal_ranged\nkey_format = ip\n";
  RuntimeOptions options;
  options.config_path = dir + "/planb.ini";
  Check(Runtime::Open(options, &f->runtime));
  // Two streams, so that the shard is built both ways: the first batch becomes the shard (indexed by Put), the
  // second merges into it (indexed by Merge).
  const size_t half = f->ranges.size() / 2;
  for (auto [begin, end] : {std::pair{size_t{0}, half}, std::pair{half, f->ranges.size()}}) {
    StreamWriter writer(f->runtime->catalog(), f->runtime->home().writer() + "/bench-" + std::to_string(begin));
    Record record;
    record.has_range = record.has_value = true;
    record.time_given = true;
    record.time_ms = kEffectiveTime;
    for (size_t i = begin; i < end; ++i) {
      const RangeValue& r = f->ranges[i];
      const std::string from = std::to_string(r.from);
      const std::string to = std::to_string(r.to);
      record.range_from = Bytes(from);
      record.range_to = Bytes(to);
      record.value = Bytes(r.value);
      Check(writer.Add("ranged", record));
      Check(writer.Add("temporal", record));
      const std::string ip_from = Ip6(r.from);
      const std::string ip_to = Ip6(r.to);
      record.range_from = Bytes(ip_from);
      record.range_to = Bytes(ip_to);
      Check(writer.Add("ranged_ip", record));
      Check(writer.Add("temporal_ip", record));
    }
    Check(writer.Finish());
    Check(bench::StageAndMerge(f->runtime.get(), &writer));
  }
  std::shared_ptr<MapEnv> env;
  Check(f->runtime->OpenShard("ranged", &env));
  Check(f->ranged.Open(env));
  Check(f->runtime->OpenShard("temporal", &env));
  Check(f->temporal.Open(env));
  Check(f->runtime->OpenShard("ranged_ip", &env));
  Check(f->ranged_ip.Open(env));
  Check(f->runtime->OpenShard("temporal_ip", &env));
  Check(f->temporal_ip.Open(env));
  ReaderOptions reader_options;
  reader_options.config_path = dir + "/planb.ini";
  Check(Reader::Open(reader_options, &f->reader));
  for (const char* map : {"ranged", "ranged_ip"}) {
    Check(f->reader->Prepare(map));
    for (const MapStats& stats : f->reader->Stats().maps) {
      if (stats.map != map) continue;
      if (!stats.read_index_current) {
        Check(Status::Internal(std::string("map ") + map + " has no current read index: " + stats.read_index_error));
      }
      std::fprintf(stderr, "%s: read index of %s: %llu bytes\n", f->name.c_str(), map,
                   static_cast<unsigned long long>(stats.read_index_bytes));
    }
  }
}

// Hits: a random number inside a random range; misses: the number after a range that is in no range, and
// numbers below every range. Ranges must be sorted by from.
void PickNumbers(Fixture* f, const std::vector<std::pair<int64_t, int64_t>>& covered) {
  std::mt19937_64 rng(7);
  const size_t n = std::min<size_t>(f->ranges.size(), 200000);
  for (size_t i = 0; i < n; ++i) {
    const RangeValue& r = f->ranges[rng() % f->ranges.size()];
    f->hits.push_back(r.from + static_cast<int64_t>(rng() % (static_cast<uint64_t>(r.to - r.from) + 1)));
  }
  // `covered`: the union of the ranges as sorted disjoint intervals; a miss is just past one of them.
  for (size_t i = 0; i + 1 < covered.size() && f->misses.size() < n; ++i) {
    if (covered[i].second + 1 < covered[i + 1].first) f->misses.push_back(covered[i].second + 1);
  }
  for (int64_t i = 1; f->misses.size() < 1000; ++i) f->misses.push_back(covered.front().first - i);
  std::shuffle(f->misses.begin(), f->misses.end(), rng);
  for (int64_t n : f->hits) f->hit_texts.push_back(Ip6(n));
  for (int64_t n : f->misses) f->miss_texts.push_back(Ip6(n));
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, std::string name, std::vector<RangeValue> ranges,
                                     bool disjoint) {
  auto f = std::make_unique<Fixture>();
  f->name = std::move(name);
  f->disjoint = disjoint;
  f->ranges = std::move(ranges);
  std::sort(f->ranges.begin(), f->ranges.end(),
            [](const RangeValue& a, const RangeValue& b) { return a.from != b.from ? a.from < b.from : a.to < b.to; });
  std::vector<std::pair<int64_t, int64_t>> covered;
  for (const RangeValue& r : f->ranges) {
    if (!covered.empty() && r.from <= covered.back().second + 1) {
      covered.back().second = std::max(covered.back().second, r.to);
    } else {
      covered.emplace_back(r.from, r.to);
    }
  }
  PickNumbers(f.get(), covered);
  const std::string dir = root + "/" + f->name;
  BuildRaw(dir + "/raw", f.get());
  BuildPlanB(dir, f.get());
  return f;
}

// `count` ranges of 1 to 81 numbers, 100 apart; every tenth holds a nested range [from + 10, from + 20].
std::vector<RangeValue> SyntheticRanges(size_t count) {
  std::mt19937_64 rng(42);
  std::vector<RangeValue> out;
  for (size_t i = 0; out.size() < count; ++i) {
    const int64_t from = static_cast<int64_t>(i) * 100 + static_cast<int64_t>(rng() % 10) - 5000000;
    const int64_t width = i % 10 == 0 ? 80 : static_cast<int64_t>(rng() % 81);
    out.push_back({from, from + width, "v" + std::to_string(i)});
    if (i % 10 == 0) out.push_back({from + 10, from + 20, "nested" + std::to_string(i)});
  }
  return out;
}

// tor-geoip-ipv4.csv.gz (support/bench_data.h) as this bench's ranges.
std::vector<RangeValue> TorGeoIp(std::string* why_missing) {
  std::vector<RangeValue> out;
  for (const CountryRange& r : TorGeoIpIpv4(why_missing)) out.push_back({r.from, r.to, r.country});
  return out;
}

// Every lookup of a hit must hit and every lookup of a miss must miss: a benchmark timing the wrong path (a
// lookup failing early, say) is reported as an error, not as a fast result.
void CheckFound(benchmark::State& state, size_t found, bool expect_hit, const char* what) {
  const uint64_t expected = expect_hit ? static_cast<uint64_t>(state.iterations()) : 0;
  if (found == expected) return;
  const std::string message = std::string(what) + " lookups: " + std::to_string(found) + " of " +
                              std::to_string(state.iterations()) + " found, expected " + std::to_string(expected);
  state.SkipWithError(message.c_str());
}

// SET_RANGE to from = x + 1, PREV: the row with the greatest from <= x; a hit when it contains x. With
// `and_get`, also one mdb_get of that from in the second table.
void RawCursor(benchmark::State& state, Fixture* f, const std::vector<int64_t>* numbers, bool expect_hit,
               bool and_get) {
  size_t i = 0;
  size_t found = 0;
  MDB_cursor* cursor = f->raw_cursor.get();
  for (auto _ : state) {
    const int64_t x = (*numbers)[i];
    uint8_t probe[8];
    PutOrderedI64(probe, x + 1);
    MDB_val k{sizeof(probe), probe};
    MDB_val v;
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
    rc = rc == MDB_SUCCESS ? mdb_cursor_get(cursor, &k, &v, MDB_PREV) : mdb_cursor_get(cursor, &k, &v, MDB_LAST);
    if (rc == MDB_SUCCESS && and_get) {
      MDB_val index_key{8, k.mv_data};
      MDB_val index_value;
      rc = mdb_get(f->raw_txn.get(), f->raw_index, &index_key, &index_value);
      benchmark::DoNotOptimize(index_value);
    }
    if (rc == MDB_SUCCESS && GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + 8) >= x) ++found;
    benchmark::DoNotOptimize(v);
    if (++i == numbers->size()) i = 0;
  }
  if (f->disjoint) {
    CheckFound(state, found, expect_hit, "raw cursor");
  } else {
    state.counters["answered"] = static_cast<double>(found) / static_cast<double>(state.iterations());
  }
}

void PlanBGet(benchmark::State& state, MapReader* reader, const std::vector<int64_t>* numbers, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  Row row;
  ErrorBuffer error;
  LookupKey key;
  key.time_ms = kEffectiveTime + 1;
  for (auto _ : state) {
    key.number = (*numbers)[i];
    found += reader->Lookup(key, &row, &error) == Code::kOk ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == numbers->size()) i = 0;
  }
  CheckFound(state, found, expect_hit, "Plan B");
}

// As PlanBGet, by address text (key_format = ip).
void PlanBGetText(benchmark::State& state, MapReader* reader, const std::vector<std::string>* texts,
                  bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  Row row;
  ErrorBuffer error;
  LookupKey key;
  key.time_ms = kEffectiveTime + 1;
  for (auto _ : state) {
    key.key = Bytes((*texts)[i]);
    found += reader->Lookup(key, &row, &error) == Code::kOk ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == texts->size()) i = 0;
  }
  CheckFound(state, found, expect_hit, "Plan B (ip)");
}

// Reader::Lookup of a number (the ranged map) or an address text (ranged_ip).
void ReaderGet(benchmark::State& state, Fixture* f, const std::vector<int64_t>* numbers,
               const std::vector<std::string>* texts, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  const size_t n = numbers != nullptr ? numbers->size() : texts->size();
  for (auto _ : state) {
    const LookupResult r = numbers != nullptr ? f->reader->Lookup("ranged", (*numbers)[i])
                                              : f->reader->Lookup("ranged_ip", (*texts)[i]);
    found += r.found() ? 1 : 0;
    benchmark::DoNotOptimize(r.value);
    if (++i == n) i = 0;
  }
  CheckFound(state, found, expect_hit, "Reader");
}

void Register(Fixture* f) {
  for (bool hit : {true, false}) {
    const std::vector<int64_t>* numbers = hit ? &f->hits : &f->misses;
    const std::string group = std::string(hit ? "lookup_hit/" : "lookup_miss/") + f->name + "/";
    benchmark::RegisterBenchmark((group + "raw_cursor").c_str(), RawCursor, f, numbers, hit, false);
    benchmark::RegisterBenchmark((group + "raw_cursor_and_get").c_str(), RawCursor, f, numbers, hit, true);
    benchmark::RegisterBenchmark((group + "ranged").c_str(), PlanBGet, &f->ranged, numbers, hit);
    benchmark::RegisterBenchmark((group + "reader_ranged").c_str(), ReaderGet, f, numbers, nullptr, hit);
    benchmark::RegisterBenchmark((group + "temporal_ranged").c_str(), PlanBGet, &f->temporal, numbers, hit);
    const std::vector<std::string>* texts = hit ? &f->hit_texts : &f->miss_texts;
    benchmark::RegisterBenchmark((group + "ranged_ip").c_str(), PlanBGetText, &f->ranged_ip, texts, hit);
    benchmark::RegisterBenchmark((group + "reader_ranged_ip").c_str(), ReaderGet, f, nullptr, texts, hit);
    benchmark::RegisterBenchmark((group + "temporal_ranged_ip").c_str(), PlanBGetText, &f->temporal_ip, texts, hit);
  }
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  char pattern[] = "/tmp/planb-bench-XXXXXX";
  std::string root = ::mkdtemp(pattern);
  std::vector<std::unique_ptr<Fixture>> fixtures;
  const size_t synthetic = std::getenv("PLANB_BENCH_RANGES") ? std::stoul(std::getenv("PLANB_BENCH_RANGES")) : 1000000;
  std::fprintf(stderr, "building shards of %zu synthetic ranges...\n", synthetic);
  fixtures.push_back(MakeFixture(root, "synthetic_nested_" + std::to_string(synthetic), SyntheticRanges(synthetic),
                                 /*disjoint=*/false));
  std::string why;
  std::vector<RangeValue> geoip = TorGeoIp(&why);
  if (geoip.empty()) {
    std::fprintf(stderr, "skipping real data: %s\n", why.c_str());
  } else {
    std::fprintf(stderr, "building shards of %zu IPv4 ranges...\n", geoip.size());
    fixtures.push_back(MakeFixture(root, "tor_geoip_ipv4", std::move(geoip), /*disjoint=*/true));
  }
  for (auto& f : fixtures) Register(f.get());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixtures.clear();
  std::filesystem::remove_all(root);
  return 0;
}
