// The histogram and metric store types (plugins/counters, docs/counters.md) beside raw LMDB holding the same
// aggregates, in the same run, printed as ratios to raw (support/ratio_reporter.h). Maps use `bucket = 1m`.
// Data: PLANB_BENCH_KEYS keys (default 20000) "key-<i>", each with PLANB_BENCH_EVENTS events (default 10) at
// random instants of one hour, so about that many one-minute buckets per key; metric values are decimals.
// Rows:
//   lookup_hit/<data>/raw_mdb_get             the bucket start computed (floor to the minute), then one mdb_get of
//                                             key bytes + PutOrderedI64(start) -> the aggregate, in a read
//                                             transaction kept open.
//   lookup_hit/<data>/{histogram,metric}_<s>  MapReader::Lookup at the instant (the type's seek to the row at or
//                                             before it and the check that its bucket holds the instant), own
//                                             fields filled, on shards built through the real ingest path.
//   lookup_miss/<data>/...                    the same an hour after every bucket (a key's rows exist: the miss is
//                                             decided by the bucket's width, not by an absent key).
//   merge/<data>/raw_mdb_add                  one write transaction adding a batch's aggregates (rows sorted, in
//                                             memory) into the raw table: MDB_SET_KEY, add, MDB_CURRENT put (or a
//                                             new row), then the commit.
//   merge/<data>/{histogram,metric}_<s>       MergeIntoShard of a batch of as many events (its LMDB written and
//                                             open in setup): the store's Merge adding each batch row into the
//                                             shard's, the batch id recorded, the commit.
// Every batch hits buckets the shard already has (counts grow; rows do not), as a counter's steady state does.
//
// Measured (defaults, 2 cores shared with other work, one repetition; x raw of the same run): lookup hits
// histogram_hashed 1.26, _direct 1.06, metric_hashed 1.60, _direct 1.73; misses 1.03 to 1.35; merges of 20000
// events histogram_hashed 1.17, _direct 0.92, metric_hashed 1.48, _direct 1.34. A lookup is a seek and at most
// one step back where raw is one mdb_get of a computed key; a merge searches each row's bucket (and, for a new
// bucket of a key with rows, its neighbour) where raw finds its key directly.
#include <benchmark/benchmark.h>
#include <lmdb.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/common/iso_time.h"
#include "host/ingest/merge_map.h"
#include "host/ingest/stream_writer.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/ratio_reporter.h"
#include "support/scheme_suite.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kWidth = 60000;
constexpr int64_t kBase = 1704067200000;  // 2024-01-01T00:00:00Z
constexpr int64_t kSpan = 3600000;

size_t EnvSize(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoul(text) : fallback;
}

struct Event {
  std::string key;
  int64_t time_ms;
  std::string value;  // metric: a decimal
};

struct Query {
  std::string key;
  int64_t time_ms;
};

// What raw LMDB holds per (key, bucket start): the histogram's count and the metric's four numbers.
struct Agg {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

const char* const kMaps[] = {"histogram_hashed", "histogram_direct", "metric_hashed", "metric_direct"};

struct Fixture {
  std::string name;
  std::string root;
  std::unique_ptr<Runtime> runtime;
  std::map<std::string, std::unique_ptr<MapReader>> readers;
  std::map<std::string, int> batches;
  std::vector<std::string> keys;
  std::vector<Query> hits;
  std::vector<Query> misses;
  Env raw_env;
  Txn raw_txn;
  MDB_dbi raw_dbi = 0;
  int raw_batches = 0;
  size_t events_per_batch = 0;
};

int64_t Floor(int64_t t) { return t - ((t % kWidth) + kWidth) % kWidth; }

std::string RawKey(const std::string& key, int64_t start) {
  std::string k = key;
  k.resize(key.size() + 8);
  PutOrderedI64(reinterpret_cast<uint8_t*>(&k[key.size()]), start);
  return k;
}

std::string EncodeAgg(const Agg& a) {
  std::string v(32, '\0');
  std::memcpy(&v[0], &a.count, 8);
  std::memcpy(&v[8], &a.sum, 8);
  std::memcpy(&v[16], &a.min, 8);
  std::memcpy(&v[24], &a.max, 8);
  return v;
}

std::vector<Event> MakeEvents(const std::vector<std::string>& keys, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Event> events;
  events.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string& key = keys[rng() % keys.size()];
    const int64_t t = kBase + static_cast<int64_t>(rng() % kSpan);
    char value[32];
    std::snprintf(value, sizeof(value), "%.3f", static_cast<double>(rng() % 1000000) / 1000);
    events.push_back({key, t, value});
  }
  return events;
}

std::map<std::string, Agg> Aggregate(const std::vector<Event>& events) {
  std::map<std::string, Agg> rows;
  for (const Event& e : events) {
    Agg& a = rows[RawKey(e.key, Floor(e.time_ms))];
    const double v = std::strtod(e.value.c_str(), nullptr);
    a.min = a.count == 0 ? v : std::min(a.min, v);
    a.max = a.count == 0 ? v : std::max(a.max, v);
    ++a.count;
    a.sum += v;
  }
  return rows;
}

void AddEvents(StreamWriter* writer, const std::string& map, const std::vector<Event>& events, bool with_value) {
  Record record;
  record.has_key = true;
  record.time_given = true;
  for (const Event& e : events) {
    record.key = Bytes(e.key);
    record.time_ms = e.time_ms;
    record.has_value = with_value;
    record.value = Bytes(e.value);
    CheckSetup(writer->Add(map, record));
  }
}

// One raw write transaction adding `rows` (sorted) into the table, then the commit.
Status RawAdd(Fixture* f, const std::map<std::string, Agg>& rows) {
  Txn txn;
  Status s = txn.Begin(f->raw_env.get(), 0);
  Cursor cursor;
  if (s.ok()) s = cursor.Open(txn.get(), f->raw_dbi);
  for (auto it = rows.begin(); s.ok() && it != rows.end(); ++it) {
    MDB_val k{it->first.size(), const_cast<char*>(it->first.data())};
    MDB_val v;
    Agg a = it->second;
    const int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_SET_KEY);
    if (rc == MDB_SUCCESS && v.mv_size == 32) {
      Agg old;
      std::memcpy(&old.count, v.mv_data, 8);
      std::memcpy(&old.sum, static_cast<char*>(v.mv_data) + 8, 8);
      std::memcpy(&old.min, static_cast<char*>(v.mv_data) + 16, 8);
      std::memcpy(&old.max, static_cast<char*>(v.mv_data) + 24, 8);
      a.count += old.count;
      a.sum += old.sum;
      a.min = std::min(a.min, old.min);
      a.max = std::max(a.max, old.max);
    }
    const std::string value = EncodeAgg(a);
    MDB_val nv{value.size(), const_cast<char*>(value.data())};
    s = LmdbStatus(mdb_cursor_put(cursor.get(), &k, &nv, rc == MDB_SUCCESS ? MDB_CURRENT : 0), "raw put");
  }
  cursor.Close();
  if (s.ok()) s = txn.Commit();
  return s;
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, size_t key_count, size_t events_per_key) {
  auto f = std::make_unique<Fixture>();
  f->name = "keys_" + std::to_string(key_count) + "_events_" + std::to_string(key_count * events_per_key);
  f->root = root;
  for (size_t i = 0; i < key_count; ++i) f->keys.push_back("key-" + std::to_string(i));
  const std::vector<Event> events = MakeEvents(f->keys, key_count * events_per_key, 1);
  f->events_per_batch = std::max<size_t>(1, key_count * events_per_key / 10);

  std::string sections;
  for (const char* map : kMaps) {
    const std::string m = map;
    sections += "[map." + m + "]\ntype = " + m.substr(0, m.find('_')) + "\nscheme = " + m.substr(m.find('_') + 1) +
                "\nbucket = 1m\n";
  }
  fs::create_directories(root + "/planb");
  f->runtime = OpenBenchRuntime(root + "/planb", sections);
  LoadStream(f->runtime.get(), StreamWriter::NewStreamName(), [&](StreamWriter* writer) {
    for (const char* map : kMaps) AddEvents(writer, map, events, std::string(map).rfind("metric", 0) == 0);
  });
  for (const char* map : kMaps) {
    f->readers[map] = std::make_unique<MapReader>();
    OpenReader(f->runtime.get(), map, f->readers[map].get());
  }

  fs::create_directories(root + "/raw");
  CheckSetup(f->raw_env.Open(root + "/raw", Env::Options()));
  {
    Txn txn;
    CheckSetup(txn.Begin(f->raw_env.get(), 0));
    CheckSetup(txn.OpenDbi("data", MDB_CREATE, &f->raw_dbi));
    for (const auto& [key, agg] : Aggregate(events)) {
      CheckSetup(txn.Put(f->raw_dbi, Bytes(key), Bytes(EncodeAgg(agg)), MDB_APPEND));
    }
    CheckSetup(txn.Commit());
  }
  CheckSetup(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));

  std::mt19937_64 rng(7);
  for (size_t i = 0; i < 20000 && !events.empty(); ++i) {
    const Event& e = events[rng() % events.size()];
    f->hits.push_back({e.key, Floor(e.time_ms) + static_cast<int64_t>(rng() % kWidth)});
    f->misses.push_back({e.key, kBase + kSpan + static_cast<int64_t>(rng() % kSpan)});
  }
  return f;
}

void RawGet(benchmark::State& state, Fixture* f, const std::vector<Query>* queries, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  uint8_t key[512];
  for (auto _ : state) {
    const Query& q = (*queries)[i];
    std::memcpy(key, q.key.data(), q.key.size());
    PutOrderedI64(key + q.key.size(), Floor(q.time_ms));
    MDB_val k{q.key.size() + 8, key};
    MDB_val v;
    if (mdb_get(f->raw_txn.get(), f->raw_dbi, &k, &v) == MDB_SUCCESS) {
      int64_t count;
      std::memcpy(&count, v.mv_data, 8);
      found += count > 0 ? 1 : 0;
    }
    if (++i == queries->size()) i = 0;
  }
  CheckFound(state, found, 0, expect_hit, "raw mdb_get");
}

void PlanBGet(benchmark::State& state, Fixture* f, std::string map, const std::vector<Query>* queries,
              bool expect_hit) {
  const MapReader* reader = f->readers[map].get();
  size_t i = 0;
  size_t found = 0;
  size_t errors = 0;
  FieldValue own[8] = {};
  ErrorBuffer error;
  LookupKey lookup;
  for (auto _ : state) {
    const Query& q = (*queries)[i];
    Row row;
    row.own_fields = own;
    row.own_field_count = 7;
    lookup.key = Bytes(q.key);
    lookup.time_ms = q.time_ms;
    const Code code = reader->Lookup(lookup, &row, &error);
    found += code == Code::kOk && own[2].number > 0 ? 1 : 0;
    errors += code != Code::kOk && code != Code::kNotFound ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == queries->size()) i = 0;
  }
  CheckFound(state, found, errors, expect_hit, map.c_str(), error.message);
}

void RawMerge(benchmark::State& state, Fixture* f) {
  for (auto _ : state) {
    state.PauseTiming();
    const auto rows = Aggregate(MakeEvents(f->keys, f->events_per_batch, 1000 + f->raw_batches++));
    f->raw_txn.Reset();  // a kept reader would pin the pages the adds free
    state.ResumeTiming();
    const Status s = RawAdd(f, rows);
    state.PauseTiming();
    CheckSetup(f->raw_txn.Renew());
    state.ResumeTiming();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->events_per_batch));
}

void PlanBMerge(benchmark::State& state, Fixture* f, std::string map) {
  std::shared_ptr<const MapPlugins> plugins;
  CheckSetup(f->runtime->catalog().Get(map, &plugins));
  std::shared_ptr<MapEnv> shard;
  CheckSetup(f->runtime->OpenShard(map, &shard));
  int& batch = f->batches[map];
  for (auto _ : state) {
    state.PauseTiming();
    const int number = batch++;
    StreamWriter writer(f->runtime->catalog(), f->root + "/batches/" + map + "-" + std::to_string(number));
    AddEvents(&writer, map, MakeEvents(f->keys, f->events_per_batch, 1000 + number), map.rfind("metric", 0) == 0);
    CheckSetup(writer.Finish());
    std::shared_ptr<MapEnv> batch_env;
    CheckSetup(MapEnv::Open(writer.dir() + "/" + map, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags,
                            &batch_env));
    Txn batch_txn;
    CheckSetup(batch_txn.Begin(batch_env->env(), MDB_RDONLY));
    f->readers[map].reset();  // a kept reader would pin the pages the merge frees
    state.ResumeTiming();

    MapMergeResult result;
    const Status s = MergeIntoShard(*plugins, *batch_env, batch_txn.get(), *shard,
                                    "bench/" + map + "-" + std::to_string(number), CurrentTimeMs(), &result);

    state.PauseTiming();
    batch_txn.Abort();
    batch_env.reset();
    writer.Discard();
    f->readers[map] = std::make_unique<MapReader>();
    OpenReader(f->runtime.get(), map, f->readers[map].get());
    state.ResumeTiming();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->events_per_batch));
}

void Register(Fixture* f) {
  for (bool hit : {true, false}) {
    const std::vector<Query>* queries = hit ? &f->hits : &f->misses;
    const std::string group = std::string(hit ? "lookup_hit/" : "lookup_miss/") + f->name;
    benchmark::RegisterBenchmark((group + "/raw_mdb_get").c_str(), RawGet, f, queries, hit)->MinTime(LookupMinTime());
    for (const char* map : kMaps) {
      benchmark::RegisterBenchmark((group + "/" + map).c_str(), PlanBGet, f, std::string(map), queries, hit)
          ->MinTime(LookupMinTime());
    }
  }
  const std::string group = "merge/" + f->name;
  benchmark::RegisterBenchmark((group + "/raw_mdb_add").c_str(), RawMerge, f)->Iterations(5);
  for (const char* map : kMaps) {
    benchmark::RegisterBenchmark((group + "/" + map).c_str(), PlanBMerge, f, std::string(map))->Iterations(5);
  }
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("counters-bench");
  auto fixture = MakeFixture(root, EnvSize("PLANB_BENCH_KEYS", 20000), EnvSize("PLANB_BENCH_EVENTS", 10));
  Register(fixture.get());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixture.reset();
  return 0;
}
