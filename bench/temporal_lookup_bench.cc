// The Temporal State store's scheme suite: every key scheme in the plugin registry (value_dedup off and, where
// declared, on) beside a raw LMDB cursor baseline and RocksDB on the same rows, in the same run. Rows load/<data>/
// and merge/<data>/ time writing a batch and merging one into a shard (support/scheme_suite.h); lookup rows: hits (at and between effective times), misses of unknown keys and misses before a
// key's first effective time, on synthetic rows and, when ../shared/data is present, the IANA tz transitions.
// Set PLANB_BENCH_ROWS for the synthetic size (default 50000), PLANB_BENCH_MIN_TIME for seconds per lookup row
// (default 0.1). Lookup rows carry the counters bytes_per_row (data.mdb's size over the rows; RocksDB: SST files)
// and tree_bytes_per_row (the LMDB tables' pages in use; see RowBytes).
// merge_txn/<data>/lmdb_put_of_hashed_layout (and merge_update_txn/...) is raw's merge of the same rows written in
// the hashed scheme's layout (support/hashed_layout.h): the floor of a hashed merge, what its layout alone costs.
//
// RocksDB (support/rocksdb_peer.h) holds the baseline's keys and values; a lookup is SeekForPrev to (key, time) on
// one iterator kept for the run (as the read transaction is) and the same check of the row's key. Its bloom
// filters cannot help a seek (they hold whole keys), and it shares the baseline's non-self-delimiting keys: its
// answers are checked like the baseline's.
//
// The baseline is the obvious layout: LMDB key = key bytes + effective time (PutOrderedI64) -> value; a lookup is
// one SET_RANGE to (key, time), one PREV unless that landed on exactly (key, time), and a check that the row is
// the key's (its length and leading bytes). Its key is not self-delimiting: rows of a longer key that starts with
// the whole of a shorter one can sort among the shorter key's rows (tzdata: "EST5EDT" after "EST"'s row at the
// beginning of time), and the baseline then misses what is there. So its answers are checked against an
// in-memory model at setup, and strictly in the benchmark only where they were all right; elsewhere the counter
// "right" gives its share of right answers.
// Plan B's shards are built through the real path (StreamWriter -> staging -> MergeProcessor), in two streams
// (alternate rows) so that keys are both written and merged, and read through MapReader, which keeps its read
// transaction open between lookups, as the baseline does. Every row reads its keys from one
// support/key_stream.h, laid end to end in query order.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/hashed_layout.h"
#include "support/key_stream.h"
#include "support/ratio_reporter.h"
#include "support/rocksdb_peer.h"
#include "support/scheme_suite.h"
#include "support/shard_setup.h"
#include "support/temporal_data.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDay = int64_t{24} * 60 * 60 * 1000;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr size_t kMaxRawKey = 511 - 8;

struct Query {
  std::string key;
  int64_t time_ms;
  int64_t expect_ms;  // hits: the effective time of the right answer
};

struct QuerySet {
  std::string group;  // "temporal_hit/<fixture>"
  bool expect_hit;
  bool raw_right = true;  // the baseline answered every query right at setup
  bool rocks_right = true;  // and RocksDB
  std::vector<Query> queries;
  KeyStream keys;  // the queries' keys end to end, in query order: what the timed loops read
};

// Each key's effective times, sorted: what a lookup must answer.
using Model = std::map<std::string, std::vector<int64_t>>;

// One row set loaded as raw LMDB, RocksDB and a shard per scheme.
struct Fixture {
  std::string name;
  std::vector<TemporalRow> rows;
  std::vector<QuerySet> sets;
  SuiteRows suite;
  SuiteRows hashed_layout_suite;  // the same rows in the hashed scheme's layout (raw merges' floor)
  SchemeShards shards;
  RowBytes raw_bytes;
  RocksDbPeer rocks;
  std::unique_ptr<rocksdb::Iterator> rocks_it;
  RowBytes rocks_bytes;  // SST files (disk)
  Env raw_env;
  Txn raw_txn;
  Cursor raw_cursor;
  MDB_dbi raw_dbi = 0;
};

// The latest effective time of `key` at or before `time`; false when there is none.
bool ModelLookup(const Model& model, const std::string& key, int64_t time, int64_t* effective) {
  auto it = model.find(key);
  if (it == model.end()) return false;
  auto after = std::upper_bound(it->second.begin(), it->second.end(), time);
  if (after == it->second.begin()) return false;
  *effective = *(after - 1);
  return true;
}

bool RawLookup(MDB_cursor* cursor, Bytes key, int64_t time, int64_t* effective, Bytes* value) {
  if (key.size > kMaxRawKey) return false;
  uint8_t probe[kMaxRawKey + 8];
  std::memcpy(probe, key.data, key.size);
  PutOrderedI64(probe + key.size, time);
  MDB_val k{key.size + 8, probe};
  MDB_val v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
  if (rc == MDB_SUCCESS) {
    if (k.mv_size != key.size + 8 || std::memcmp(k.mv_data, probe, key.size + 8) != 0) {
      rc = mdb_cursor_get(cursor, &k, &v, MDB_PREV);
    }
  } else if (rc == MDB_NOTFOUND) {
    rc = mdb_cursor_get(cursor, &k, &v, MDB_LAST);
  }
  if (rc != MDB_SUCCESS || k.mv_size != key.size + 8 || std::memcmp(k.mv_data, key.data, key.size) != 0) {
    return false;
  }
  *effective = GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + key.size);
  *value = Bytes(v);
  return true;
}

bool RocksLookup(rocksdb::Iterator* it, Bytes key, int64_t time, int64_t* effective, Bytes* value) {
  if (key.size > kMaxRawKey) return false;
  uint8_t probe[kMaxRawKey + 8];
  std::memcpy(probe, key.data, key.size);
  PutOrderedI64(probe + key.size, time);
  it->SeekForPrev(rocksdb::Slice(reinterpret_cast<const char*>(probe), key.size + 8));
  if (!it->Valid()) return false;
  const rocksdb::Slice k = it->key();
  if (k.size() != key.size + 8 || std::memcmp(k.data(), key.data, key.size) != 0) return false;
  *effective = GetOrderedI64(reinterpret_cast<const uint8_t*>(k.data()) + key.size);
  *value = Bytes(it->value().data(), it->value().size());
  return true;
}

// Row i in the baseline's layout: key bytes + effective time (ordered) -> value.
void RawRow(const TemporalRow& r, std::string* key, std::string* value) {
  key->assign(r.key);
  key->resize(r.key.size() + 8);
  PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[r.key.size()]), r.time_ms);
  *value = r.value;
}

void BuildRaw(const std::string& dir, Fixture* f) {
  fs::create_directories(dir);
  Env::Options options;
  CheckSetup(f->raw_env.Open(dir, options));
  Txn txn;
  CheckSetup(txn.Begin(f->raw_env.get(), 0));
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, &f->raw_dbi));
  std::string key;
  for (const TemporalRow& r : f->rows) {
    key.assign(r.key);
    key.resize(r.key.size() + 8);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&key[r.key.size()]), r.time_ms);
    CheckSetup(txn.Put(f->raw_dbi, Bytes(key), Bytes(r.value)));
  }
  CheckSetup(txn.Commit());
  CheckSetup(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));
  CheckSetup(f->raw_cursor.Open(f->raw_txn.get(), f->raw_dbi));
}

void BuildPlanB(const std::string& dir, Fixture* f) {
  Fixture* p = f;
  f->suite.name = f->name;
  f->suite.type = "temporal";
  f->suite.count = f->rows.size();
  f->suite.record = [p](size_t i, Record* record) {
    const TemporalRow& r = p->rows[i];
    record->has_key = record->has_value = record->time_given = true;
    record->key = Bytes(r.key);
    record->time_ms = r.time_ms;
    record->value = Bytes(r.value);
  };
  f->suite.raw = [p](size_t i, std::string* key, std::string* value) { RawRow(p->rows[i], key, value); };
  f->hashed_layout_suite = f->suite;
  f->hashed_layout_suite.raw = [p](size_t i, std::string* key, std::string* value) {
    const TemporalRow& r = p->rows[i];
    *key = HashedLayoutKey(r.key);
    key->resize(kHashedLayoutKeySize + 8);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[kHashedLayoutKeySize]), r.time_ms);
    *value = HashedLayoutValue(r.key, static_cast<char>(ValueType::kString), r.value);
  };
  f->raw_bytes = MeasureRowBytes(f->raw_env.get(), dir + "/raw", f->rows.size());
  f->rocks.Build(dir + "/rocksdb", f->rows.size(), f->suite.raw,
                 static_cast<uint64_t>(f->raw_bytes.disk * static_cast<double>(f->rows.size())));
  f->rocks_it.reset(f->rocks.db()->NewIterator(f->rocks.read_options()));
  f->rocks_bytes.disk = static_cast<double>(f->rocks.SstBytes()) / static_cast<double>(f->rows.size());
  BuildSchemeShards(dir + "/planb", f->suite, &f->shards);
}

// A time in [lo, hi], now and then exactly lo (the effective instant). A row at the beginning of time is looked
// up within a century before the next one.
int64_t PickTime(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (lo == kMin) lo = hi - 100 * 365 * kDay;
  if (rng() % 8 == 0) return lo;
  return lo + static_cast<int64_t>(rng() % (static_cast<uint64_t>(hi - lo) + 1));
}

// Hits: a time at or after a random row and before the key's next one. Misses: an unknown key (the last byte
// changed) at a row's time, and a known key before its first row (none where every key starts at INT64_MIN).
void PickQueries(Fixture* f, const Model& model) {
  std::mt19937_64 rng(7);
  const size_t n = std::min<size_t>(f->rows.size(), 200000);
  QuerySet hits{"temporal_hit/" + f->name, true, true, true, {}, {}};
  QuerySet no_key{"temporal_miss_no_key/" + f->name, false, true, true, {}, {}};
  QuerySet too_early{"temporal_miss_too_early/" + f->name, false, true, true, {}, {}};
  for (size_t i = 0; i < n; ++i) {
    const TemporalRow& r = f->rows[rng() % f->rows.size()];
    const std::vector<int64_t>& times = model.at(r.key);
    const size_t j = std::lower_bound(times.begin(), times.end(), r.time_ms) - times.begin();
    const int64_t next = j + 1 < times.size() ? times[j + 1] : kMin;
    const int64_t hi = next != kMin ? next - 1 : (r.time_ms == kMin ? int64_t{1700000000000} : r.time_ms + 365 * kDay);
    const int64_t time = PickTime(rng, r.time_ms, hi);
    int64_t expect = 0;
    if (!ModelLookup(model, r.key, time, &expect) || expect != r.time_ms) {
      std::fprintf(stderr, "bench setup: hit query %s at %lld is wrong\n", r.key.c_str(), static_cast<long long>(time));
      std::exit(1);
    }
    hits.queries.push_back({r.key, time, expect});

    std::string absent = r.key;
    absent.back() = absent.back() == '~' ? '}' : '~';
    if (model.count(absent) != 0) absent += "~absent";
    no_key.queries.push_back({absent, r.time_ms == kMin ? time : r.time_ms, 0});

    if (times.front() != kMin) {
      const int64_t early = times.front() - 1 - static_cast<int64_t>(rng() % (30 * kDay));
      too_early.queries.push_back({r.key, early, 0});
    }
  }
  for (QuerySet* set : {&hits, &no_key, &too_early}) {
    for (const Query& q : set->queries) set->keys.Add(q.key);
    if (!set->queries.empty()) f->sets.push_back(std::move(*set));
  }
}

// Runs every query once through the baseline and compares it with the model.
void CheckRawAnswers(Fixture* f) {
  for (QuerySet& set : f->sets) {
    size_t right = 0;
    size_t rocks_right = 0;
    for (const Query& q : set.queries) {
      int64_t effective = 0;
      Bytes value;
      bool found = RawLookup(f->raw_cursor.get(), Bytes(q.key), q.time_ms, &effective, &value);
      right += found == set.expect_hit && (!found || effective == q.expect_ms) ? 1 : 0;
      found = RocksLookup(f->rocks_it.get(), Bytes(q.key), q.time_ms, &effective, &value);
      rocks_right += found == set.expect_hit && (!found || effective == q.expect_ms) ? 1 : 0;
    }
    set.raw_right = right == set.queries.size();
    set.rocks_right = rocks_right == set.queries.size();
    if (!set.raw_right) {
      std::fprintf(stderr, "note: %s: the raw baseline answers %zu of %zu right (its keys are not self-delimiting)\n",
                   set.group.c_str(), right, set.queries.size());
    }
    if (!set.rocks_right) {
      std::fprintf(stderr, "note: %s: RocksDB answers %zu of %zu right (the baseline's keys)\n", set.group.c_str(),
                   rocks_right, set.queries.size());
    }
  }
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, std::string name, std::vector<TemporalRow> rows) {
  auto f = std::make_unique<Fixture>();
  f->name = std::move(name);
  f->rows = std::move(rows);
  Model model;
  for (const TemporalRow& r : f->rows) model[r.key].push_back(r.time_ms);
  for (auto& [key, times] : model) {
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
  }
  PickQueries(f.get(), model);
  const std::string dir = root + "/" + f->name;
  std::fprintf(stderr, "%s: %zu rows: building raw LMDB, RocksDB and every scheme's shard...\n", f->name.c_str(),
               f->rows.size());
  BuildRaw(dir + "/raw", f.get());
  BuildPlanB(dir, f.get());
  CheckRawAnswers(f.get());
  return f;
}

void RawGet(benchmark::State& state, Fixture* f, const QuerySet* set) {
  size_t i = 0;
  size_t found = 0;
  MDB_cursor* cursor = f->raw_cursor.get();
  for (auto _ : state) {
    const Query& q = set->queries[i];
    int64_t effective = 0;
    Bytes value;
    const bool hit = RawLookup(cursor, Bytes(set->keys[i]), q.time_ms, &effective, &value);
    found += hit && (!set->expect_hit || effective == q.expect_ms) ? 1 : 0;
    benchmark::DoNotOptimize(value);
    if (++i == set->queries.size()) i = 0;
  }
  SetRowBytes(state, f->raw_bytes);
  if (set->raw_right) {
    CheckFound(state, found, 0, set->expect_hit, "raw cursor");
  } else {
    const double share = static_cast<double>(found) / static_cast<double>(state.iterations());
    state.counters["right"] = set->expect_hit ? share : 1 - share;
  }
}

void RocksGet(benchmark::State& state, Fixture* f, const QuerySet* set) {
  size_t i = 0;
  size_t found = 0;
  rocksdb::Iterator* it = f->rocks_it.get();
  for (auto _ : state) {
    const Query& q = set->queries[i];
    int64_t effective = 0;
    Bytes value;
    const bool hit = RocksLookup(it, Bytes(set->keys[i]), q.time_ms, &effective, &value);
    found += hit && (!set->expect_hit || effective == q.expect_ms) ? 1 : 0;
    benchmark::DoNotOptimize(value);
    if (++i == set->queries.size()) i = 0;
  }
  SetRowBytes(state, f->rocks_bytes);
  if (set->rocks_right) {
    CheckFound(state, found, 0, set->expect_hit, "rocksdb seek");
  } else {
    const double share = static_cast<double>(found) / static_cast<double>(state.iterations());
    state.counters["right"] = set->expect_hit ? share : 1 - share;
  }
}

void PlanBGet(benchmark::State& state, Fixture* f, size_t variant, const QuerySet* set) {
  const MapReader* reader = f->shards.readers[variant].get();
  size_t i = 0;
  size_t found = 0;
  size_t errors = 0;
  LookupKey key;
  Row row;
  ErrorBuffer error;
  for (auto _ : state) {
    const Query& q = set->queries[i];
    key.key = Bytes(set->keys[i]);
    key.time_ms = q.time_ms;
    const Code code = reader->Lookup(key, &row, &error);
    found += code == Code::kOk && (!set->expect_hit || row.effective_time_ms == q.expect_ms) ? 1 : 0;
    errors += code != Code::kOk && code != Code::kNotFound ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == set->queries.size()) i = 0;
  }
  SetRowBytes(state, f->shards.row_bytes[variant]);
  CheckFound(state, found, errors, set->expect_hit, "Temporal State", error.message);
}

void Register(Fixture* f, const std::string& root) {
  RegisterLoadAndMerge(&f->suite, &f->shards, root);
  RegisterRawMergeFloor(&f->hashed_layout_suite, "lmdb_put_of_hashed_layout", root);
  std::vector<std::string> groups;
  for (const QuerySet& set : f->sets) {
    groups.push_back(set.group);
    benchmark::RegisterBenchmark((set.group + "/raw_cursor").c_str(), RawGet, f, &set)->MinTime(LookupMinTime());
    benchmark::RegisterBenchmark((set.group + "/rocksdb_seek").c_str(), RocksGet, f, &set)->MinTime(LookupMinTime());
    for (size_t v = 0; v < f->shards.variants.size(); ++v) {
      benchmark::RegisterBenchmark((set.group + "/temporal_" + f->shards.variants[v].label).c_str(), PlanBGet, f, v,
                                   &set)
          ->MinTime(LookupMinTime());
    }
  }
  ReportRefused(f->shards, groups);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("temporal-bench");
  std::vector<std::unique_ptr<Fixture>> fixtures;
  const size_t synthetic = std::getenv("PLANB_BENCH_ROWS") ? std::stoul(std::getenv("PLANB_BENCH_ROWS")) : 50000;
  std::fprintf(stderr, "building shards of %zu synthetic temporal rows...\n", synthetic);
  fixtures.push_back(MakeFixture(root, "synthetic_" + std::to_string(synthetic), SyntheticTemporalRows(synthetic)));
  std::string why;
  std::vector<TemporalRow> tz = TzdataTransitions(&why);
  if (tz.empty()) {
    std::fprintf(stderr, "skipping real data: %s\n", why.c_str());
  } else {
    std::fprintf(stderr, "building shards of %zu tz transitions...\n", tz.size());
    fixtures.push_back(MakeFixture(root, "tzdata_transitions", std::move(tz)));
  }
  for (auto& f : fixtures) Register(f.get(), root);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixtures.clear();
  return 0;
}
