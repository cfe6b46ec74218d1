// The State store's scheme suite: every key scheme in the plugin registry (with value_dedup off and, where the
// scheme declares it, on) beside raw LMDB on the same keys and values and RocksDB, in the same run, printed as
// ratios to raw LMDB (support/ratio_reporter.h). Rows, per data set <data>:
//   load/<data>/..., merge/<data>/...   writing a batch and merging one into a shard: support/scheme_suite.h.
//   merge_txn/<data>/lmdb_put_of_hashed_layout, merge_update_txn/<data>/lmdb_put_of_hashed_layout
//                                       raw's merges of the same rows laid out as the hashed scheme writes them
//                                       (support/hashed_layout.h): the floor of a hashed merge.
//   lookup_hit/<data>/raw_mdb_get       mdb_get of a present key in a read transaction kept open.
//   lookup_hit/<data>/lmdb_get_of_hashed_layout
//                                       raw LMDB reading the state_hashed shard's own table by hand (hash, one
//                                       mdb_get of XXH3-64 + clash number 0, compare the stored key: see
//                                       support/hashed_layout.h). The floor of a hashed lookup: what its layout and
//                                       its pages cost with none of Plan B's code on the path.
//   merge_txn/<data>/lmdb_put_of_lookup_table_layout
//                                       raw's merge of the new keys into the lookup_table scheme's three tables by
//                                       hand (support/lookup_table_layout.h): the floor of a lookup_table merge.
//   lookup_hit/<data>/lmdb_get_of_direct_layout
//                                       raw mdb_get on the state_direct shard's own table: the same rows as raw's
//                                       (but the type byte), on the pages two merges left.
//   lookup_hit/<data>/lmdb_get_of_lookup_table_layout
//                                       raw LMDB reading the state_lookup_table shard's tables by hand (the index's
//                                       entry, then the id's row): the floor of a lookup_table lookup.
//   merge_txn/<data>/lmdb_put_of_value_dedup_layout, lookup_hit/<data>/lmdb_get_of_value_dedup_layout
//                                       the same for direct with value_dedup (support/value_dedup_layout.h): the
//                                       row, and its value's entry in the value table.
//   lookup_hit/<data>/rocksdb_get       DB::Get of the same key (support/rocksdb_peer.h: bloom filters, block
//                                       cache of the raw LMDB file's size, compacted).
//   lookup_hit/<data>/state_<scheme>    MapReader::Lookup (the path of planb::Reader; its read transaction kept
//                                       open too) on a shard built through the real ingest path.
//   lookup_miss/<data>/...              the same with absent keys (each key with "#absent" appended).
// Every row reads its keys from one support/key_stream.h, laid end to end in lookup order.
// Lookups run PLANB_BENCH_MIN_TIME seconds each (default 0.1). Each lookup row carries the counters bytes_per_row
// (data.mdb's size over the rows, free pages included; RocksDB: its SST files) and tree_bytes_per_row (the LMDB
// tables' pages in use: the layout alone); see RowBytes.
// Data sets: synthetic keys (PLANB_BENCH_KEYS, default 50000) with 20-60-byte values, the same keys with heavily
// duplicated values (64 distinct 200-byte values), keys of 512 to 1,500 bytes (PLANB_BENCH_LONG_KEYS, default
// 5000: more than LMDB takes, so the raw baseline keys them by XXH3-64 with the key kept in the value and
// compared, the obvious way round the limit; schemes that refuse such keys are listed as skipped, with the
// reason), and, when ../shared/data is present, city names -> country, MAC prefixes -> vendor, domains ->
// categories (at most PLANB_BENCH_KEYS, spread over the list) and commit ids -> author (values duplicated).
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "planb/lmdb.h"
#include "support/bench_data.h"
#include "support/hashed_layout.h"
#include "support/key_stream.h"
#include "support/lookup_table_layout.h"
#include "support/ratio_reporter.h"
#include "support/rocksdb_peer.h"
#include "support/scheme_suite.h"
#include "support/shard_setup.h"
#include "support/value_dedup_layout.h"

namespace planb::bench {
namespace {

size_t EnvSize(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoul(text) : fallback;
}

struct Fixture {
  KeyValues data;
  bool hashed_raw = false;          // raw keys: XXH3-64 of the key; value: u32 key size, key, value
  KeyStream hits;    // keys in random order
  KeyStream misses;  // keys that are not there
  SuiteRows rows;
  SuiteRows hashed_layout_rows;  // the same rows in the hashed scheme's State layout (raw merges' floor)
  LayoutWriter lookup_table_layout;  // raw's writer of the lookup_table scheme's tables (its merges' floor)
  LayoutWriter value_dedup_layout;   // raw's writer of direct's value_dedup tables (their merges' floor)
  SchemeShards shards;
  Env raw_env;
  Txn raw_txn;
  MDB_dbi raw_dbi = 0;
  RowBytes raw_bytes;
  RocksDbPeer rocks;
  RowBytes rocks_bytes;  // SST files (disk)
};

void HashedRawRow(const std::string& k, const std::string& v, std::string* key, std::string* value) {
  const uint64_t hash = XXH3_64bits(k.data(), k.size());
  key->assign(reinterpret_cast<const char*>(&hash), sizeof(hash));
  const uint32_t size = static_cast<uint32_t>(k.size());
  value->assign(reinterpret_cast<const char*>(&size), sizeof(size));
  value->append(k);
  value->append(v);
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, std::string name, KeyValues data, bool hashed_raw) {
  auto f = std::make_unique<Fixture>();
  f->data = std::move(data);
  f->hashed_raw = hashed_raw;
  std::vector<std::string> hits;
  std::vector<std::string> misses;
  for (const auto& kv : f->data) {
    hits.push_back(kv.first);
    misses.push_back(kv.first + "#absent");
  }
  std::mt19937_64 rng(7);
  std::shuffle(hits.begin(), hits.end(), rng);
  std::shuffle(misses.begin(), misses.end(), rng);
  f->hits = KeyStream(hits);
  f->misses = KeyStream(misses);
  Fixture* p = f.get();
  f->rows.name = std::move(name);
  f->rows.type = "state";
  f->rows.count = f->data.size();
  f->rows.record = [p](size_t i, Record* record) {
    record->has_key = record->has_value = true;
    record->key = Bytes(p->data[i].first);
    record->value = Bytes(p->data[i].second);
  };
  f->rows.raw = [p](size_t i, std::string* key, std::string* value) {
    if (p->hashed_raw) return HashedRawRow(p->data[i].first, p->data[i].second, key, value);
    *key = p->data[i].first;
    *value = p->data[i].second;
  };
  f->hashed_layout_rows = f->rows;
  f->hashed_layout_rows.raw = [p](size_t i, std::string* key, std::string* value) {
    *key = HashedLayoutKey(p->data[i].first);
    *value = HashedLayoutValue(p->data[i].first, static_cast<char>(ValueType::kString), p->data[i].second);
  };
  f->lookup_table_layout = LookupTableLayoutWriter(&f->rows);
  f->value_dedup_layout = ValueDedupLayoutWriter(&f->rows);
  const std::string dir = root + "/" + f->rows.name;
  std::fprintf(stderr, "%s: %zu rows: building raw LMDB, RocksDB and every scheme's shard...\n",
               f->rows.name.c_str(), f->data.size());
  BuildRawTable(dir + "/raw", f->rows, &f->raw_env, &f->raw_dbi);
  f->raw_bytes = MeasureRowBytes(f->raw_env.get(), dir + "/raw", f->data.size());
  CheckSetup(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));
  f->rocks.Build(dir + "/rocksdb", f->data.size(),
                 [p](size_t i, std::string* key, std::string* value) {
                   *key = p->data[i].first;
                   *value = p->data[i].second;
                 },
                 static_cast<uint64_t>(f->raw_bytes.disk * static_cast<double>(f->data.size())));
  f->rocks_bytes.disk = static_cast<double>(f->rocks.SstBytes()) / static_cast<double>(f->data.size());
  BuildSchemeShards(dir + "/planb", f->rows, &f->shards);
  return f;
}

bool RawLookup(const Fixture& f, std::string_view key, Bytes* value) {
  if (!f.hashed_raw) return f.raw_txn.Get(f.raw_dbi, Bytes(key), value);
  const uint64_t hash = XXH3_64bits(key.data(), key.size());
  Bytes stored;
  if (!f.raw_txn.Get(f.raw_dbi, Bytes(reinterpret_cast<const char*>(&hash), sizeof(hash)), &stored)) return false;
  uint32_t size = 0;
  if (stored.size < sizeof(size)) return false;
  std::memcpy(&size, stored.data, sizeof(size));
  if (stored.size < sizeof(size) + size || size != key.size() ||
      std::memcmp(stored.data + sizeof(size), key.data(), size) != 0) {
    return false;
  }
  *value = Bytes(stored.data + sizeof(size) + size, stored.size - sizeof(size) - size);
  return true;
}

// Lookups of `keys` in one of the raw tables through `Lookup` (a template argument: inlined, as a user's code
// would have it).
template <bool (*Lookup)(const Fixture&, std::string_view, Bytes*)>
void RawTableGet(benchmark::State& state, Fixture* f, const KeyStream* keys, bool expect_hit,
                 const RowBytes* bytes, const char* what) {
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    Bytes value;
    found += Lookup(*f, (*keys)[i], &value) ? 1 : 0;
    benchmark::DoNotOptimize(value);
    if (++i == keys->size()) i = 0;
  }
  SetRowBytes(state, *bytes);
  CheckFound(state, found, 0, expect_hit, what);
}

void RocksGet(benchmark::State& state, Fixture* f, const KeyStream* keys, bool expect_hit) {
  size_t i = 0;
  size_t found = 0;
  rocksdb::PinnableSlice value;
  for (auto _ : state) {
    found += f->rocks.Get((*keys)[i], &value) ? 1 : 0;
    benchmark::DoNotOptimize(value.data());
    if (++i == keys->size()) i = 0;
  }
  SetRowBytes(state, f->rocks_bytes);
  CheckFound(state, found, 0, expect_hit, "rocksdb Get");
}

void StateGet(benchmark::State& state, Fixture* f, size_t variant, const KeyStream* keys,
              bool expect_hit) {
  const MapReader* reader = f->shards.readers[variant].get();
  size_t i = 0;
  size_t found = 0;
  size_t errors = 0;
  Row row;
  ErrorBuffer error;
  LookupKey key;
  for (auto _ : state) {
    key.key = Bytes((*keys)[i]);
    const Code code = reader->Lookup(key, &row, &error);
    found += code == Code::kOk ? 1 : 0;
    errors += code != Code::kOk && code != Code::kNotFound ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == keys->size()) i = 0;
  }
  SetRowBytes(state, f->shards.row_bytes[variant]);
  CheckFound(state, found, errors, expect_hit, "State", error.message);
}

// The floors: raw LMDB reading a Plan B shard's own tables by hand, through the shard reader's read transaction,
// with none of Plan B's code on the path. What the layout and its pages cost.

// state_direct: one mdb_get of the key itself (State rows have no length prefix), the value after the type byte.
// The same layout as raw's table but for that byte; the difference is the shard's pages (two merges' worth).
bool DirectLayoutGet(const Table& table, std::string_view key, Bytes* value) {
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val row;
  if (mdb_get(table.txn, table.dbi, &k, &row) != MDB_SUCCESS || row.mv_size == 0) return false;
  *value = Bytes(static_cast<const uint8_t*>(row.mv_data) + 1, row.mv_size - 1);
  return true;
}

// state_hashed: hash, one mdb_get, the stored key compared (support/hashed_layout.h), the value after it.
bool HashedLayoutGet(const Table& table, std::string_view key, Bytes* value) {
  uint8_t probe[kHashedLayoutKeySize];
  HashedLayoutKey(key, probe);
  MDB_val k{sizeof(probe), probe};
  MDB_val stored;
  return mdb_get(table.txn, table.dbi, &k, &stored) == MDB_SUCCESS && HashedLayoutMatch(Bytes(stored), key, value);
}

// state_lookup_table: the index's entry of the key's hash, then the id's row (support/lookup_table_layout.h).
bool LookupTableGet(const Table& table, std::string_view key, Bytes* value) {
  return LookupTableLayoutGet(table.txn, table.scheme_tables[0], table.dbi, key, value);
}

// state_direct_dedup: the row, then its value's entry in the value table (support/value_dedup_layout.h; direct
// declares no table of its own, so "values" is the scheme's first).
bool ValueDedupGet(const Table& table, std::string_view key, Bytes* value) {
  return ValueDedupLayoutGet(table.txn, table.dbi, table.scheme_tables[0], key, value);
}

// Lookups of `keys` through `Lookup` on the shard of shards.variants[variant].
template <bool (*Lookup)(const Table&, std::string_view, Bytes*)>
void ShardFloorGet(benchmark::State& state, Fixture* f, size_t variant, const KeyStream* keys, bool expect_hit) {
  const Table& table = f->shards.readers[variant]->table();
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    Bytes value;
    found += Lookup(table, (*keys)[i], &value) ? 1 : 0;
    benchmark::DoNotOptimize(value);
    if (++i == keys->size()) i = 0;
  }
  SetRowBytes(state, f->shards.row_bytes[variant]);
  CheckFound(state, found, 0, expect_hit, "raw mdb_get of a Plan B shard's tables");
}

void Register(Fixture* f, const std::string& root) {
  RegisterLoadAndMerge(&f->rows, &f->shards, root);
  RegisterRawMergeFloor(&f->hashed_layout_rows, "lmdb_put_of_hashed_layout", root);
  RegisterLayoutMergeFloor(&f->rows, "lmdb_put_of_lookup_table_layout", &f->lookup_table_layout, root);
  if (!f->hashed_raw) {  // direct's layout: keys LMDB takes
    RegisterLayoutMergeFloor(&f->rows, "lmdb_put_of_value_dedup_layout", &f->value_dedup_layout, root);
  }
  std::vector<std::string> groups;
  for (bool hit : {true, false}) {
    const KeyStream* keys = hit ? &f->hits : &f->misses;
    const std::string group = std::string(hit ? "lookup_hit/" : "lookup_miss/") + f->rows.name;
    groups.push_back(group);
    benchmark::RegisterBenchmark((group + "/raw_mdb_get").c_str(), RawTableGet<RawLookup>, f, keys, hit,
                                 &f->raw_bytes, "raw mdb_get")
        ->MinTime(LookupMinTime());
    benchmark::RegisterBenchmark((group + "/rocksdb_get").c_str(), RocksGet, f, keys, hit)->MinTime(LookupMinTime());
    for (size_t v = 0; v < f->shards.variants.size(); ++v) {
      benchmark::RegisterBenchmark((group + "/state_" + f->shards.variants[v].label).c_str(), StateGet, f, v, keys,
                                   hit)
          ->MinTime(LookupMinTime());
      // The floors, on the shards whose layouts they read (hash_bits 64; value_dedup only where named).
      const std::string& label = f->shards.variants[v].label;
      const auto floor = [&](const char* name, auto get) {
        benchmark::RegisterBenchmark((group + "/" + name).c_str(), get, f, v, keys, hit)->MinTime(LookupMinTime());
      };
      if (label == "direct") floor("lmdb_get_of_direct_layout", ShardFloorGet<DirectLayoutGet>);
      if (label == "hashed") floor("lmdb_get_of_hashed_layout", ShardFloorGet<HashedLayoutGet>);
      if (label == "lookup_table") floor("lmdb_get_of_lookup_table_layout", ShardFloorGet<LookupTableGet>);
      if (label == "direct_dedup") floor("lmdb_get_of_value_dedup_layout", ShardFloorGet<ValueDedupGet>);
    }
  }
  ReportRefused(f->shards, groups);
}

// Keys of 512 to 1,500 bytes ("long-<i>-" then letters), values as in SyntheticKeyValues; deterministic.
KeyValues LongKeyValues(size_t count) {
  std::mt19937_64 rng(11);
  KeyValues out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::string key = "long-" + std::to_string(i) + "-";
    key.resize(512 + rng() % 989, static_cast<char>('a' + i % 26));
    out.emplace_back(std::move(key), std::string(20 + rng() % 41, static_cast<char>('a' + i % 26)));
  }
  return out;
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("state-bench");
  std::vector<std::unique_ptr<Fixture>> fixtures;
  const size_t keys = EnvSize("PLANB_BENCH_KEYS", 50000);
  const size_t long_keys = EnvSize("PLANB_BENCH_LONG_KEYS", 5000);
  fixtures.push_back(MakeFixture(root, "synthetic_" + std::to_string(keys), SyntheticKeyValues(keys), false));
  KeyValues duplicated = SyntheticKeyValues(keys);
  for (size_t i = 0; i < duplicated.size(); ++i) {
    duplicated[i].second = "status-" + std::to_string(i % 64) + std::string(192, 'x');
  }
  fixtures.push_back(MakeFixture(root, "dup_long_values_" + std::to_string(keys), std::move(duplicated), false));
  fixtures.push_back(MakeFixture(root, "long_keys_" + std::to_string(long_keys), LongKeyValues(long_keys), true));
  struct Real {
    const char* name;
    KeyValues (*read)(size_t max_rows, std::string* why);
  };
  const Real reals[] = {
      {"world_cities", [](size_t, std::string* why) { return WorldCities(why); }},
      {"oui_vendors", [](size_t, std::string* why) { return OuiVendors(why); }},
      {"domain_categories", &DomainCategories},
      {"commit_authors", [](size_t, std::string* why) { return CommitAuthors(why); }},
  };
  for (const Real& real : reals) {
    std::string why;
    KeyValues data = real.read(keys, &why);
    if (data.empty()) {
      std::fprintf(stderr, "skipping real data %s: %s\n", real.name, why.c_str());
      continue;
    }
    fixtures.push_back(MakeFixture(root, real.name, std::move(data), false));
  }
  for (auto& f : fixtures) Register(f.get(), root);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixtures.clear();
  return 0;
}
