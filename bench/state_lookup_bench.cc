// Lookups through the State store (hashed, direct, hybrid, lookup_table, variable schemes, and hashed with
// value_dedup) beside raw mdb_get on the same keys and values,
// in the same run: hits and misses, on synthetic keys and, when ../shared/data is present, real city names.
// Plan B's shards are built through the real path (StreamWriter -> staging -> MergeProcessor) and read through
// MapReader, which keeps its read transaction open between lookups, as the raw baseline does.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/runtime.h"
#include "host/storage/map_reader.h"
#include "planb/lmdb.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::exit(1);
  }
}

// One data set loaded three ways: raw LMDB, State+hashed, State+direct.
struct Fixture {
  std::string name;
  KeyValues data;
  std::vector<std::string> hits;    // keys in random order
  std::vector<std::string> misses;  // keys that are not there
  std::unique_ptr<Runtime> runtime;
  MapReader hashed;
  MapReader direct;
  MapReader hybrid;
  MapReader lookup_table;
  MapReader variable;
  MapReader hashed_dedup;  // value_dedup = true
  Env raw_env;
  Txn raw_txn;
  MDB_dbi raw_dbi = 0;
};

void BuildRaw(const std::string& dir, Fixture* f) {
  fs::create_directories(dir);
  Env::Options options;
  Check(f->raw_env.Open(dir, options));
  Txn txn;
  Check(txn.Begin(f->raw_env.get(), 0));
  Check(txn.OpenDbi("data", MDB_CREATE, &f->raw_dbi));
  for (const auto& [k, v] : f->data) Check(txn.Put(f->raw_dbi, Bytes(k), Bytes(v)));
  Check(txn.Commit());
  Check(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));
}

void BuildPlanB(const std::string& dir, Fixture* f) {
  std::ofstream(dir + "/planb.ini") << "home = " << dir << "/home\n"
                                    << "[map.hashed]\ntype = state\nscheme = hashed\n"
                                    << "[map.direct]\ntype = state\nscheme = direct\n"
                                    << "[map.hybrid]\ntype = state\nscheme = hybrid\n"
                                    << "[map.lookup_table]\ntype = state\nscheme = lookup_table\n"
                                    << "[map.variable]\ntype = state\nscheme = variable\n"
                                    << "[map.hashed_dedup]\ntype = state\nscheme = hashed\nvalue_dedup = true\n";
  RuntimeOptions options;
  options.config_path = dir + "/planb.ini";
  Check(Runtime::Open(options, &f->runtime));
  StreamWriter writer(f->runtime->catalog(), f->runtime->home().writer() + "/bench");
  Record record;
  record.has_key = record.has_value = true;
  for (const auto& [k, v] : f->data) {
    record.key = Bytes(k);
    record.value = Bytes(v);
    Check(writer.Add("hashed", record));
    Check(writer.Add("direct", record));
    for (const char* map : {"hybrid", "lookup_table", "variable", "hashed_dedup"}) Check(writer.Add(map, record));
  }
  Check(writer.Finish());
  Check(bench::StageAndMerge(f->runtime.get(), &writer));
  std::shared_ptr<MapEnv> env;
  Check(f->runtime->OpenShard("hashed", &env));
  Check(f->hashed.Open(env));
  Check(f->runtime->OpenShard("direct", &env));
  Check(f->direct.Open(env));
  Check(f->runtime->OpenShard("hybrid", &env));
  Check(f->hybrid.Open(env));
  Check(f->runtime->OpenShard("lookup_table", &env));
  Check(f->lookup_table.Open(env));
  Check(f->runtime->OpenShard("variable", &env));
  Check(f->variable.Open(env));
  Check(f->runtime->OpenShard("hashed_dedup", &env));
  Check(f->hashed_dedup.Open(env));
  // Bytes on disk per row (file size: pages in use and free), for docs/schemes.md.
  for (const char* map : {"hashed", "direct", "hybrid", "lookup_table", "variable", "hashed_dedup"}) {
    Check(f->runtime->OpenShard(map, &env));
    std::error_code ec;
    const uintmax_t bytes = fs::file_size(env->path() + "/data.mdb", ec);
    std::fprintf(stderr, "%s/%s: %.1f bytes on disk per row\n", f->name.c_str(), map,
                 static_cast<double>(bytes) / static_cast<double>(f->data.size()));
  }
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, std::string name, KeyValues data) {
  auto f = std::make_unique<Fixture>();
  f->name = std::move(name);
  f->data = std::move(data);
  for (const auto& kv : f->data) {
    f->hits.push_back(kv.first);
    f->misses.push_back(kv.first + "#absent");
  }
  std::mt19937_64 rng(7);
  std::shuffle(f->hits.begin(), f->hits.end(), rng);
  std::shuffle(f->misses.begin(), f->misses.end(), rng);
  std::string dir = root + "/" + f->name;
  BuildRaw(dir + "/raw", f.get());
  BuildPlanB(dir, f.get());
  return f;
}

// Every lookup of a hit key must hit, and every lookup of a miss key must miss: a benchmark that times the wrong
// path (a lookup failing early, say) is reported as an error, not as a fast result.
void CheckFound(benchmark::State& state, size_t found, bool expect_hit, const char* what) {
  const uint64_t expected = expect_hit ? static_cast<uint64_t>(state.iterations()) : 0;
  if (found == expected) return;
  const std::string message = std::string(what) + " lookups: " + std::to_string(found) + " of " +
                              std::to_string(state.iterations()) + " found, expected " + std::to_string(expected);
  state.SkipWithError(message.c_str());
}

void RawGet(benchmark::State& state, Fixture* f, const std::vector<std::string>* keys, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    Bytes value;
    found += f->raw_txn.Get(f->raw_dbi, Bytes((*keys)[i]), &value) ? 1 : 0;
    benchmark::DoNotOptimize(value);
    if (++i == keys->size()) i = 0;
  }
  CheckFound(state, found, expect_hit, "raw mdb_get");
}

void StateGet(benchmark::State& state, MapReader* reader, const std::vector<std::string>* keys, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  Row row;
  ErrorBuffer error;
  for (auto _ : state) {
    LookupKey key;
    key.key = Bytes((*keys)[i]);
    found += reader->Lookup(key, &row, &error) == Code::kOk ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == keys->size()) i = 0;
  }
  CheckFound(state, found, expect_hit, "State");
}

void Register(Fixture* f) {
  for (bool hit : {true, false}) {
    const std::vector<std::string>* keys = hit ? &f->hits : &f->misses;
    std::string group = std::string(hit ? "lookup_hit/" : "lookup_miss/") + f->name + "/";
    benchmark::RegisterBenchmark((group + "raw_mdb_get").c_str(), RawGet, f, keys, hit);
    benchmark::RegisterBenchmark((group + "state_hashed").c_str(), StateGet, &f->hashed, keys, hit);
    benchmark::RegisterBenchmark((group + "state_direct").c_str(), StateGet, &f->direct, keys, hit);
    benchmark::RegisterBenchmark((group + "state_hybrid").c_str(), StateGet, &f->hybrid, keys, hit);
    benchmark::RegisterBenchmark((group + "state_lookup_table").c_str(), StateGet, &f->lookup_table, keys, hit);
    benchmark::RegisterBenchmark((group + "state_variable").c_str(), StateGet, &f->variable, keys, hit);
    benchmark::RegisterBenchmark((group + "state_hashed_dedup").c_str(), StateGet, &f->hashed_dedup, keys, hit);
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
  const size_t synthetic = std::getenv("PLANB_BENCH_KEYS") ? std::stoul(std::getenv("PLANB_BENCH_KEYS")) : 1000000;
  std::fprintf(stderr, "building shards of %zu synthetic keys...\n", synthetic);
  fixtures.push_back(MakeFixture(root, "synthetic_" + std::to_string(synthetic), SyntheticKeyValues(synthetic)));
  // Heavily duplicated long values (value_dedup's case): 64 distinct 200-byte values over every key.
  KeyValues duplicated = SyntheticKeyValues(synthetic);
  for (size_t i = 0; i < duplicated.size(); ++i) {
    duplicated[i].second = "status-" + std::to_string(i % 64) + std::string(192, 'x');
  }
  fixtures.push_back(MakeFixture(root, "dup_long_values_" + std::to_string(synthetic), std::move(duplicated)));
  std::string why;
  KeyValues cities = WorldCities(&why);
  if (cities.empty()) {
    std::fprintf(stderr, "skipping real data: %s\n", why.c_str());
  } else {
    fixtures.push_back(MakeFixture(root, "world_cities", std::move(cities)));
  }
  for (auto& f : fixtures) Register(f.get());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixtures.clear();
  std::filesystem::remove_all(root);
  return 0;
}
