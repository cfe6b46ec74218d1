// Point lookups beside plain LMDB (the performance issue's goal): a State map (default scheme) of
// PLANB_BENCH_KEYS keys (default 10,000,000), read through libplanb_reader.so, beside a plain LMDB database holding
// the same key -> value pairs, keys as text, written by sorted appends (MDB_APPEND): what a user would write by
// hand. Every iteration answers 256 keys:
//   raw_mdb_get                  the plain database: one read transaction, reset and renewed per 256 keys,
//                                mdb_get per key (the baseline: LMDB's own lookup and nothing else)
//   reader_lookup                Reader::Lookup per key (answered from the map's read index, point_answer_index.h)
//   c_api_lookup                 planb_reader_lookup per key (the C API of the same library)
//   reader_lookup_many           one Reader::LookupMany of the 256
//   c_api_lookup_many            one planb_reader_lookup_many of the 256
//   reader_lookup_no_index       Reader::Lookup through a second Reader whose config sets read_index_max_size = 0
//                                and lookup_cache_size = 0: the store type's Get on LMDB
//   reader_lookup_many_no_index  its LookupMany
// Two key orders: uniform/ every key once in a random order, and apache_log_order/ the Apache log's 10,000 client
// addresses in the log's order (../shared/data/apache_logs.gz, loaded as keys of both databases; skipped without
// it). The keys to ask lie one after the other in one buffer, in the order they are asked, as the keys of a batch
// of parsed events do (not each in a string of its own on the heap, which would add a cache miss per key to every
// row alike). Every benchmark checks that it found every key, and before the runs every key's value is checked
// equal in all three readers.
// The Readers' indexes are built by one maintenance pass (Reader::Maintain) before the runs, as their background
// thread would build them; the time it took is printed.
#include <benchmark/benchmark.h>
#include <lmdb.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "planb/lmdb.h"
#include "planb/reader.h"
#include "planb/reader_c.h"
#include "support/bench_data.h"
#include "support/plain_lmdb.h"
#include "support/ratio_reporter.h"
#include "support/reader_batches.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

constexpr char kMap[] = "points";

// Keys in the order they are asked, their bytes side by side in `text`.
struct KeyList {
  std::string text;
  std::vector<std::string_view> keys;

  void Fill(const std::vector<std::string>& in) {
    size_t bytes = 0;
    for (const std::string& k : in) bytes += k.size();
    text.reserve(bytes);
    for (const std::string& k : in) text += k;
    size_t at = 0;
    for (const std::string& k : in) {
      keys.emplace_back(text.data() + at, k.size());
      at += k.size();
    }
  }
};

struct Fixture {
  KeyList keys;      // every synthetic key, shuffled
  KeyList log_keys;  // the Apache log's client addresses, in log order (repeats kept)
  std::unique_ptr<Reader> reader;
  std::unique_ptr<Reader> plain;  // no read index, no hot-key cache
  planb_reader_t* c_reader = nullptr;
  Env raw_env;
  MDB_dbi raw_dbi = 0;
};

Fixture* fixture = nullptr;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Build(const std::string& root, size_t count) {
  auto started = std::chrono::steady_clock::now();
  KeyValues data = SyntheticKeyValues(count);
  std::vector<std::string> log;
  std::vector<std::string> log_keys;
  if (ReadGzipLines(SharedDataPath("apache_logs.gz"), &log)) {
    std::set<std::string> distinct;
    for (const std::string& line : log) {
      const std::string ip = line.substr(0, line.find(' '));
      if (ip.empty()) continue;
      log_keys.push_back(ip);
      if (distinct.insert(ip).second) data.emplace_back(ip, "owner-of-" + ip);
    }
  }
  fixture->log_keys.Fill(log_keys);
  // The index copies every key and value: room for it, whatever PLANB_BENCH_KEYS is.
  const std::string sections = std::string("[map.") + kMap + "]\ntype = state\nread_index_max_size = 4GiB\n";
  {
    std::unique_ptr<Runtime> runtime = OpenBenchRuntime(root, sections);
    LoadStream(runtime.get(), "bench", [&data](StreamWriter* writer) {
      Record record;
      record.has_key = record.has_value = true;
      for (const auto& [k, v] : data) {
        record.key = Bytes(k);
        record.value = Bytes(v);
        CheckSetup(writer->Add(kMap, record));
      }
    });
  }  // closes the shard before the Readers open it
  std::fprintf(stderr, "loaded the State map in %.1f s\n", SecondsSince(started));
  started = std::chrono::steady_clock::now();
  WritePlainLmdb(root + "/plain.mdb", data);
  std::fprintf(stderr, "wrote the plain LMDB database in %.1f s\n", SecondsSince(started));
  Env::Options options;
  options.flags = MDB_NOSUBDIR | MDB_RDONLY | MDB_NOTLS;
  CheckSetup(fixture->raw_env.Open(root + "/plain.mdb", options));
  {
    Txn txn;
    CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
    CheckSetup(txn.OpenDbi(nullptr, 0, &fixture->raw_dbi));
    CheckSetup(txn.Commit());
  }

  ReaderOptions reader_options;
  reader_options.config_path = root + "/planb.ini";
  reader_options.maintenance_interval_ms = 0;
  CheckSetup(Reader::Open(reader_options, &fixture->reader));
  CheckSetup(fixture->reader->Prepare(kMap));
  started = std::chrono::steady_clock::now();
  CheckSetup(fixture->reader->Maintain());
  std::fprintf(stderr, "built the Reader's read index in %.1f s\n", SecondsSince(started));
  std::ofstream(root + "/plain.ini") << "home = " << root << "/home\n[map." << kMap << "]\ntype = state\n"
                                     << "read_index_max_size = 0\nlookup_cache_size = 0\n";
  reader_options.config_path = root + "/plain.ini";
  CheckSetup(Reader::Open(reader_options, &fixture->plain));
  CheckSetup(fixture->plain->Prepare(kMap));

  planb_reader_options_t* c_options = planb_reader_options_create();
  const std::string config = root + "/planb.ini";
  planb_reader_options_set_config(c_options, config.data(), config.size());
  planb_reader_options_set_maintenance_interval_ms(c_options, 0);
  char error[512] = {};
  fixture->c_reader = planb_reader_open(c_options, error, sizeof error);
  planb_reader_options_destroy(c_options);
  if (fixture->c_reader == nullptr) CheckSetup(Status::Internal(std::string("planb_reader_open: ") + error));
  if (planb_reader_prepare(fixture->c_reader, kMap, sizeof kMap - 1, error, sizeof error) != PLANB_OK ||
      planb_reader_maintain(fixture->c_reader, error, sizeof error) != PLANB_OK) {
    CheckSetup(Status::Internal(std::string("planb_reader_maintain: ") + error));
  }
  for (const ReaderStats& stats : {fixture->reader->Stats()}) {
    for (const MapStats& map : stats.maps) {
      if (!map.read_index_current) CheckSetup(Status::Internal("no read index: " + map.read_index_error));
      std::fprintf(stderr, "read index: %llu bytes for %zu keys\n",
                   static_cast<unsigned long long>(map.read_index_bytes), data.size());
    }
  }

  // Every key answers the same value in the three readers.
  Txn txn;
  CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
  for (const auto& [k, v] : data) {
    MDB_val key{k.size(), const_cast<char*>(k.data())};
    MDB_val value;
    const bool raw = mdb_get(txn.get(), fixture->raw_dbi, &key, &value) == MDB_SUCCESS &&
                     std::string_view(static_cast<const char*>(value.mv_data), value.mv_size) == v;
    const LookupResult a = fixture->reader->Lookup(kMap, k);
    const LookupResult b = fixture->plain->Lookup(kMap, k);
    if (!raw || !a.found() || a.value.view() != v || !b.found() || b.value.view() != v) {
      CheckSetup(Status::Internal("key " + k + " answers differently"));
    }
  }
  std::vector<std::string> keys;
  for (auto& kv : data) {
    if (kv.second.rfind("owner-of-", 0) != 0) keys.push_back(std::move(kv.first));
  }
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(7));
  fixture->keys.Fill(keys);
}

void RawMdbGet(benchmark::State& state, const KeyList* key_list) {
  const std::vector<std::string_view>& keys = key_list->keys;
  Txn txn;
  CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    txn.Reset();
    CheckSetup(txn.Renew());
    for (size_t i = 0; i < kReaderBatch; ++i) {
      const std::string_view k = keys[next + i];
      MDB_val key{k.size(), const_cast<char*>(k.data())};
      MDB_val value;
      found += mdb_get(txn.get(), fixture->raw_dbi, &key, &value) == MDB_SUCCESS;
      benchmark::DoNotOptimize(value);
    }
    next += kReaderBatch;
  }
  FinishBatches(state, found, "raw mdb_get");
}

void ReaderLookup(benchmark::State& state, const KeyList* key_list, Reader* reader) {
  TimeReaderLookups(state, key_list->keys, *reader, kMap);
}

void ReaderLookupMany(benchmark::State& state, const KeyList* key_list, Reader* reader) {
  TimeReaderLookupMany(state, key_list->keys, *reader, kMap);
}

void CApiLookup(benchmark::State& state, const KeyList* key_list) {
  const std::vector<std::string_view>& keys = key_list->keys;
  planb_result_t r;
  (void)planb_reader_lookup(fixture->c_reader, kMap, sizeof kMap - 1, keys[0].data(), keys[0].size(), nullptr, &r);
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    for (size_t i = 0; i < kReaderBatch; ++i) {
      const std::string_view k = keys[next + i];
      found +=
          planb_reader_lookup(fixture->c_reader, kMap, sizeof kMap - 1, k.data(), k.size(), nullptr, &r) == PLANB_OK;
      benchmark::DoNotOptimize(r.value);
    }
    next += kReaderBatch;
  }
  FinishBatches(state, found, "planb_reader_lookup");
}

void CApiLookupMany(benchmark::State& state, const KeyList* key_list) {
  const std::vector<std::string_view>& keys = key_list->keys;
  std::vector<planb_key_t> batch(kReaderBatch);
  std::vector<planb_result_t> results(kReaderBatch);
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    for (size_t i = 0; i < kReaderBatch; ++i) {
      batch[i] = planb_key_t{keys[next + i].data(), keys[next + i].size(), 0, 0, 0};
    }
    if (planb_reader_lookup_many(fixture->c_reader, kMap, sizeof kMap - 1, batch.data(), kReaderBatch, results.data()) ==
        PLANB_OK) {
      for (const planb_result_t& r : results) found += r.code == PLANB_OK;
    }
    benchmark::DoNotOptimize(results.data());
    next += kReaderBatch;
  }
  FinishBatches(state, found, "planb_reader_lookup_many");
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("point-lookup-bench");
  const size_t count = std::getenv("PLANB_BENCH_KEYS") ? std::stoul(std::getenv("PLANB_BENCH_KEYS")) : 10000000;
  std::fprintf(stderr, "building a State map and a plain LMDB database of %zu keys...\n", count);
  Fixture f;
  fixture = &f;
  Build(root, count);
  for (const auto* keys : {&f.keys, &f.log_keys}) {
    if (keys->keys.empty()) continue;
    const std::string group = keys == &f.keys ? "uniform/" : "apache_log_order/";
    benchmark::RegisterBenchmark((group + "raw_mdb_get").c_str(), RawMdbGet, keys);
    benchmark::RegisterBenchmark((group + "reader_lookup").c_str(), ReaderLookup, keys, f.reader.get());
    benchmark::RegisterBenchmark((group + "c_api_lookup").c_str(), CApiLookup, keys);
    benchmark::RegisterBenchmark((group + "reader_lookup_many").c_str(), ReaderLookupMany, keys, f.reader.get());
    benchmark::RegisterBenchmark((group + "c_api_lookup_many").c_str(), CApiLookupMany, keys);
    benchmark::RegisterBenchmark((group + "reader_lookup_no_index").c_str(), ReaderLookup, keys, f.plain.get());
    benchmark::RegisterBenchmark((group + "reader_lookup_many_no_index").c_str(), ReaderLookupMany, keys,
                                 f.plain.get());
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  planb_reader_close(f.c_reader);
  f.reader.reset();
  f.plain.reset();
  f.raw_env.Close();
  return 0;
}
