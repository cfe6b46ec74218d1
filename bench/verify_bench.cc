// Verifying a received batch's LMDB file: what a storage node does to every upload, and a reader to every
// snapshot, before it trusts the file (host/storage/lmdb_verifier.h), beside a raw walk of the same file.
//
//   verify/<rows>/raw_cursor_walk          open the file read-only, read every row of every table with a cursor:
//                                          the least any check of every row costs (the baseline)
//   verify/<rows>/check_in_process         CheckMap in this process: every page, the free list, every row decoded
//                                          by the store type (what the verifier runs, without a child)
//   verify/<rows>/verify_extracted_batch   VerifyExtractedBatch: the same checks in planb-verify, a program of its
//                                          own started per batch (posix_spawn, loading the map's plugins)
// The gap between the last two is the price of the child process, paid once per batch: at 1,000 rows it is most
// of the time, at 200,000 rows little of it. PLANB_BENCH_VERIFY_ROWS (default 200000) sets the larger size.
#include <benchmark/benchmark.h>
#include <lmdb.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/stream_writer.h"
#include "host/runtime.h"
#include "host/storage/lmdb_check.h"
#include "host/storage/lmdb_verifier.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

constexpr const char* kMap = "m";

struct Batch {
  std::string dir;  // <dir>/m/data.mdb
  size_t rows = 0;
};

// A finished stream of `rows` state rows (hashed scheme): the map directory a received batch unzips into.
Batch WriteBatch(Runtime* runtime, size_t rows) {
  StreamWriter writer(runtime->catalog(), runtime->home().writer() + "/verify-" + std::to_string(rows));
  Record record;
  record.has_key = record.has_value = true;
  for (size_t i = 0; i < rows; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const std::string value = "value-" + std::to_string(i * 7919) + std::string(16, 'v');
    record.key = Bytes(key);
    record.value = Bytes(value);
    CheckSetup(writer.Add(kMap, record));
  }
  CheckSetup(writer.Finish());
  return Batch{writer.dir(), rows};
}

int RawWalk(const std::string& map_dir, size_t* rows) {
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_maxdbs(env, 64);
  if (rc == 0) rc = mdb_env_open(env, map_dir.c_str(), MDB_RDONLY | MDB_NOLOCK, 0644);
  MDB_txn* txn = nullptr;
  if (rc == 0) rc = mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn);
  MDB_dbi main = 0;
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &main);
  std::vector<std::string> tables;
  MDB_cursor* cursor = nullptr;
  MDB_val k, v;
  if (rc == 0) rc = mdb_cursor_open(txn, main, &cursor);
  for (int got = rc == 0 ? mdb_cursor_get(cursor, &k, &v, MDB_FIRST) : rc; got == 0;
       got = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    tables.emplace_back(static_cast<const char*>(k.mv_data), k.mv_size);
  }
  if (cursor != nullptr) mdb_cursor_close(cursor);
  for (const std::string& table : tables) {
    MDB_dbi dbi = 0;
    if (rc == 0) rc = mdb_dbi_open(txn, table.c_str(), 0, &dbi);
    if (rc == 0) rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) break;
    for (int got = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); got == 0;
         got = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      benchmark::DoNotOptimize(v.mv_data);
      ++*rows;
    }
    mdb_cursor_close(cursor);
  }
  if (txn != nullptr) mdb_txn_abort(txn);
  mdb_env_close(env);
  return rc;
}

void RawCursorWalk(benchmark::State& state, const Batch* batch) {
  for (auto _ : state) {
    size_t rows = 0;
    const int rc = RawWalk(batch->dir + "/" + kMap, &rows);
    if (rc != 0 || rows < batch->rows) {
      state.SkipWithError(("raw walk: " + std::string(mdb_strerror(rc))).c_str());
      return;
    }
  }
}

void CheckInProcess(benchmark::State& state, Runtime* runtime, const Batch* batch) {
  std::shared_ptr<const MapPlugins> plugins;
  CheckSetup(runtime->catalog().Get(kMap, &plugins));
  for (auto _ : state) {
    const Status s = CheckMap(batch->dir + "/" + kMap, plugins);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
}

void VerifyBatch(benchmark::State& state, Runtime* runtime, const Batch* batch) {
  for (auto _ : state) {
    const Status s = VerifyExtractedBatch(runtime->catalog(), "bench.zip", batch->dir, {kMap});
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("verify-bench");
  std::unique_ptr<planb::Runtime> runtime =
      OpenBenchRuntime(root, std::string("[map.") + kMap + "]\ntype = state\nscheme = hashed\n");
  const char* large_text = std::getenv("PLANB_BENCH_VERIFY_ROWS");
  const size_t large = large_text != nullptr ? std::strtoull(large_text, nullptr, 10) : 200000;
  std::vector<std::unique_ptr<Batch>> batches;
  for (size_t rows : {size_t{1000}, large}) {
    std::fprintf(stderr, "verify_bench: writing a batch of %zu rows\n", rows);
    batches.push_back(std::make_unique<Batch>(WriteBatch(runtime.get(), rows)));
    const Batch* batch = batches.back().get();
    const std::string group = "verify/" + std::to_string(rows);
    benchmark::RegisterBenchmark((group + "/raw_cursor_walk").c_str(), RawCursorWalk, batch)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((group + "/check_in_process").c_str(), CheckInProcess, runtime.get(), batch)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((group + "/verify_extracted_batch").c_str(), VerifyBatch, runtime.get(), batch)
        ->Unit(benchmark::kMillisecond);
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  runtime.reset();
  return 0;  // the root is removed at exit
}
