// planb::Reader (libplanb_reader.so, as programs use it) beside raw LMDB on the same data: a State map with the
// hashed scheme (~1M keys, PLANB_BENCH_KEYS to change), hit lookups, at 1 and 2 threads. Every iteration answers
// 256 keys, so the four are comparable per batch:
//   raw_mdb_get         per key: mdb_txn_reset + mdb_txn_renew, XXH3 of the key as the hashed scheme does (the
//                       8-byte prefix + clash number 0), mdb_get, compare the stored key (the Reader's work without
//                       the Reader: one reused read transaction per thread, renewed for every lookup)
//   mdb_get_one_renew   the same with one reset + renew per 256 keys (what LookupMany's batching can gain)
//   reader_lookup       Reader::Lookup per key (the hot-key cache and the map's read index, which one maintenance
//                       pass builds before the runs: host/reader/point_answer_index.h)
//   reader_lookup_many  one Reader::LookupMany of 256 keys
//   reader_lookup_no_cache  Reader::Lookup through a second Reader on the same home whose config sets
//                       lookup_cache_size = 0 and read_index_max_size = 0 (neither: the store type's Get)
// Two key orders: lookup_256_keys/ every key once in a random order (nothing repeats: the cache stands aside), and
// apache_log_order/ the Apache log's 10,000 client addresses in the log's order (../shared/data/apache_logs.gz;
// skipped without it), loaded as keys of the same map: a real stream's skew, where a thread's hot-key cache answers
// the addresses asked again.
// The raw runs read the shard's own data.mdb, so that both share the page cache and the CPU caches. The Reader's
// environment is inside the library, so raw opens a second environment on the file: read-only and MDB_NOLOCK, it
// takes no lock and never touches the lock file, which is what LMDB's rule against opening a file twice protects
// (nothing writes during the benchmark). Its renew therefore skips the reader-table writes the Reader's does: if
// anything, the baseline is favoured.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "planb/lmdb.h"
#include "planb/reader.h"
#include "support/bench_data.h"
#include "support/hashed_layout.h"
#include "support/ratio_reporter.h"
#include "support/reader_batches.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {


struct Fixture {
  std::vector<std::string> keys;  // every key, shuffled
  std::vector<std::string> log_keys;  // the Apache log's client addresses, in log order (repeats kept)
  std::unique_ptr<Reader> reader;
  std::unique_ptr<Reader> uncached;  // lookup_cache_size = 0
  Env raw_env;
  MDB_dbi raw_dbi = 0;
};

Fixture* fixture = nullptr;

void Warm();

void Build(const std::string& root, size_t count) {
  KeyValues data = SyntheticKeyValues(count);
  std::vector<std::string> log;
  if (ReadGzipLines(SharedDataPath("apache_logs.gz"), &log)) {
    std::set<std::string> distinct;
    for (const std::string& line : log) {
      const std::string ip = line.substr(0, line.find(' '));
      if (ip.empty()) continue;
      fixture->log_keys.push_back(ip);
      if (distinct.insert(ip).second) data.emplace_back(ip, "owner-of-" + ip);
    }
  }
  {
    std::unique_ptr<Runtime> runtime = OpenBenchRuntime(root, "[map.hashed]\ntype = state\nscheme = hashed\n");
    LoadStream(runtime.get(), "bench", [&data](StreamWriter* writer) {
      Record record;
      record.has_key = record.has_value = true;
      for (const auto& [k, v] : data) {
        record.key = Bytes(k);
        record.value = Bytes(v);
        CheckSetup(writer->Add("hashed", record));
      }
    });
  }  // closes the shard before the Reader opens it
  Env::Options options;
  options.flags = MDB_NOTLS | MDB_RDONLY | MDB_NOLOCK;
  options.max_dbs = 8;
  CheckSetup(fixture->raw_env.Open(root + "/home/shards/hashed", options));
  Txn txn;
  CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
  CheckSetup(txn.OpenDbi("data", 0, &fixture->raw_dbi));
  CheckSetup(txn.Commit());

  ReaderOptions reader_options;
  reader_options.config_path = root + "/planb.ini";
  reader_options.maintenance_interval_ms = 0;  // nothing changes in the background while the runs time it
  CheckSetup(Reader::Open(reader_options, &fixture->reader));
  CheckSetup(fixture->reader->Prepare("hashed"));
  CheckSetup(fixture->reader->Maintain());  // builds the map's read index
  std::ofstream(root + "/uncached.ini") << "home = " << root << "/home\n[map.hashed]\ntype = state\nscheme = hashed\n"
                                         << "lookup_cache_size = 0\nread_index_max_size = 0\n";
  reader_options.config_path = root + "/uncached.ini";
  CheckSetup(Reader::Open(reader_options, &fixture->uncached));
  CheckSetup(fixture->uncached->Prepare("hashed"));
  for (auto& kv : data) {
    if (kv.second.rfind("owner-of-", 0) != 0) fixture->keys.push_back(std::move(kv.first));
  }
  std::shuffle(fixture->keys.begin(), fixture->keys.end(), std::mt19937_64(7));
  Warm();
}

// The hashed scheme's lookup, by hand (support/hashed_layout.h): hash, one mdb_get, the stored key compared. True
// when the row is this key's.
bool RawGet(MDB_txn* txn, MDB_dbi dbi, const std::string& key, MDB_val* value) {
  uint8_t prefix[kHashedLayoutKeySize];
  HashedLayoutKey(key, prefix);
  MDB_val k{sizeof prefix, prefix};
  if (mdb_get(txn, dbi, &k, value) != MDB_SUCCESS) return false;
  Bytes payload;
  return HashedLayoutMatch(Bytes(*value), key, &payload);
}

// One pass over every key through both environments, so that no run pays for first touches of pages (each maps
// the file separately, and page faults would otherwise land on whichever benchmark reads a page first).
void Warm() {
  Txn txn;
  CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
  size_t found = 0;
  for (const std::string& key : fixture->keys) {
    MDB_val value;
    found += RawGet(txn.get(), fixture->raw_dbi, key, &value);
    found += fixture->reader->Lookup("hashed", key).found();
    found += fixture->uncached->Lookup("hashed", key).found();
  }
  if (found != 3 * fixture->keys.size()) CheckSetup(Status::Internal("warm-up: keys missing"));
  for (const std::string& key : fixture->log_keys) {
    MDB_val value;
    if (!RawGet(txn.get(), fixture->raw_dbi, key, &value) || !fixture->uncached->Lookup("hashed", key).found()) {
      CheckSetup(Status::Internal("warm-up: log address " + key + " missing"));
    }
  }
}

void RawMdbGet(benchmark::State& state, const std::vector<std::string>* key_list, bool renew_per_key) {
  const std::vector<std::string>& keys = *key_list;
  Txn txn;
  CheckSetup(txn.Begin(fixture->raw_env.get(), MDB_RDONLY));
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    if (!renew_per_key) {
      txn.Reset();
      CheckSetup(txn.Renew());
    }
    for (size_t i = 0; i < kReaderBatch; ++i) {
      if (renew_per_key) {
        txn.Reset();
        CheckSetup(txn.Renew());
      }
      MDB_val value;
      found += RawGet(txn.get(), fixture->raw_dbi, keys[next + i], &value);
      benchmark::DoNotOptimize(value);
    }
    next += kReaderBatch;
  }
  FinishBatches(state, found, renew_per_key ? "raw mdb_get" : "mdb_get, one renew per batch");
}

void ReaderLookup(benchmark::State& state, const std::vector<std::string>* key_list, Reader* which) {
  TimeReaderLookups(state, *key_list, *which, "hashed");
}

void ReaderLookupMany(benchmark::State& state, const std::vector<std::string>* key_list) {
  TimeReaderLookupMany(state, *key_list, *fixture->reader, "hashed");
}

// RatioReporter groups by the name up to the last '/', which "/threads:2" would split: the thread count moves into
// the group instead ("lookup_256_keys_threads:2/raw_mdb_get"). It also prints the ratios of CPU time, which a busy
// machine distorts less than the wall-clock ratios RatioReporter prints.
class ThreadGroupReporter : public RatioReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> renamed = runs;
    for (Run& run : renamed) {
      const size_t slash = run.run_name.function_name.find('/');
      if (slash == std::string::npos || run.run_name.threads.empty()) continue;
      run.run_name.function_name.insert(slash, "_" + run.run_name.threads);
      run.run_name.threads.clear();
      if (run.run_type == Run::RT_Iteration && run.iterations > 0) {
        cpu_.emplace_back(run.run_name.function_name, run.GetAdjustedCPUTime());
      }
    }
    RatioReporter::ReportRuns(renamed);
  }

  void Finalize() override {
    RatioReporter::Finalize();
    std::map<std::string, double> baseline;  // group -> the first "raw" run's CPU time
    for (const auto& [name, time] : cpu_) {
      if (name.find("raw") != std::string::npos) baseline.emplace(name.substr(0, name.rfind('/')), time);
    }
    std::printf("\n%-60s %12s %10s\n", "benchmark", "cpu/op", "x raw cpu");
    for (const auto& [name, time] : cpu_) {
      auto it = baseline.find(name.substr(0, name.rfind('/')));
      if (it != baseline.end()) std::printf("%-60s %12.1f %10.2f\n", name.c_str(), time, time / it->second);
    }
  }

 private:
  std::vector<std::pair<std::string, double>> cpu_;
};

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  char pattern[] = "/tmp/planb-reader-bench-XXXXXX";
  const std::string root = ::mkdtemp(pattern);
  const size_t count = std::getenv("PLANB_BENCH_KEYS") ? std::stoul(std::getenv("PLANB_BENCH_KEYS")) : 1000000;
  std::fprintf(stderr, "building a State (hashed) shard of %zu keys...\n", count);
  Fixture f;
  fixture = &f;
  Build(root, count);
  for (int threads : {1, 2}) {
    for (const auto* keys : {&f.keys, &f.log_keys}) {
      if (keys->empty()) continue;
      const std::string group = keys == &f.keys ? "lookup_256_keys/" : "apache_log_order/";
      benchmark::RegisterBenchmark((group + "raw_mdb_get").c_str(), RawMdbGet, keys, true)->Threads(threads);
      benchmark::RegisterBenchmark((group + "mdb_get_one_renew").c_str(), RawMdbGet, keys, false)->Threads(threads);
      benchmark::RegisterBenchmark((group + "reader_lookup").c_str(), ReaderLookup, keys, f.reader.get())
          ->Threads(threads);
      benchmark::RegisterBenchmark((group + "reader_lookup_many").c_str(), ReaderLookupMany, keys)->Threads(threads);
      benchmark::RegisterBenchmark((group + "reader_lookup_no_cache").c_str(), ReaderLookup, keys, f.uncached.get())
          ->Threads(threads);
    }
  }
  ThreadGroupReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  f.reader.reset();
  f.uncached.reset();
  f.raw_env.Close();
  std::filesystem::remove_all(root);
  return 0;
}
