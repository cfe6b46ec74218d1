// Merges of different maps side by side (config `merge_threads`): a node with several maps whose batches are
// staged together merges each map's batch on its own thread, one writer per map. Every iteration stages one batch
// of new keys per map (PLANB_BENCH_MAPS maps, default 4, each a State shard of PLANB_BENCH_SHARD_ROWS rows,
// default 1000000, hashed; PLANB_BENCH_BATCH_ROWS rows per batch, default 200000) and times MergePending on them
// all: unzip, merge, commit (fsync) and unstage, as a node merges.
//
// Rows of group parallel_merge/<maps>_maps_shard_<rows>_batch_<rows>/:
//   raw_lmdb_cursor_put_one_thread   the baseline: each map's batch rows (in memory, sorted) put into a raw LMDB
//                                    table of the shard's rows through one cursor and committed, map after map.
//   lmdb_cursor_put_threads_<n>      the same, the tables shared out over n threads: what the machine's cores and
//                                    disk allow raw LMDB, the floor of any parallel merge.
//   merge_threads_<n>                MergeProcessor::MergePending with n merge threads (1: one batch after
//                                    another, as before merge_threads).
// merge_threads_2 / merge_threads_1 is the speed-up the setting gives; set it beside the raw pair's. Counter
// cpus_busy: the process's CPU time over wall time in the timed parts (how much of the 2 cores a row used). Every row
// times tables of its own, built alike, warmed with two untimed rounds and taking the same batches; compare the
// rows of one repetition (run with --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true: a
// shared disk's fsyncs swing times 2x between repetitions).
// Measured: see docs/performance.md "Merges side by side".
#include <benchmark/benchmark.h>
#include <lmdb.h>
#include <sys/resource.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host/common/bulk_buffers.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/stream_writer.h"
#include "host/runtime.h"
#include "planb/lmdb.h"
#include "support/env_count.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

struct Sizes {
  size_t maps = 4;
  size_t shard_rows = 1000000;
  size_t batch_rows = 200000;
};

// "key-<16 hex digits>" from a hash of (row, batch): every batch's keys land at random places among the shard's.
std::string RowKey(size_t row, int batch) {
  const uint64_t ids[2] = {row, static_cast<uint64_t>(static_cast<int64_t>(batch))};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key-%016llx", static_cast<unsigned long long>(XXH3_64bits(ids, sizeof(ids))));
  return buf;
}

std::string RowValue(size_t row, int batch) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "v%010zu.%012d", row, batch + 1);
  return buf;
}

std::string MapName(size_t i) { return "state_" + std::to_string(i); }

using Rows = std::vector<std::pair<std::string, std::string>>;

Rows SortedRows(size_t count, int batch) {
  Rows rows;
  rows.reserve(count);
  for (size_t r = 0; r < count; ++r) rows.emplace_back(RowKey(r, batch), RowValue(r, batch));
  std::sort(rows.begin(), rows.end());
  return rows;
}

struct RawTable {
  Env env;
  MDB_dbi dbi = 0;
};

// Every row times tables of its own, built alike and taking the same batches, so that no row merges into
// shards another row has grown (a merge's cost grows with the shard). Index: threads - 1.
struct RawSide {
  std::vector<std::unique_ptr<RawTable>> tables;
  int batches = 0;
};

struct MergeSide {
  std::unique_ptr<Runtime> runtime;
  int batches = 0;
};

struct Fixture {
  Sizes sizes;
  std::string root;
  RawSide raw[2];
  MergeSide merge[2];
};

void BuildRaw(Fixture* f, RawSide* side, const std::string& name) {
  const Rows rows = SortedRows(f->sizes.shard_rows, -1);
  for (size_t m = 0; m < f->sizes.maps; ++m) {
    auto table = std::make_unique<RawTable>();
    const std::string dir = f->root + "/" + name + "-" + std::to_string(m);
    std::filesystem::create_directories(dir);
    CheckSetup(table->env.Open(dir, Env::Options()));
    Txn txn;
    CheckSetup(txn.Begin(table->env.get(), 0));
    CheckSetup(txn.OpenDbi("data", MDB_CREATE, &table->dbi));
    for (const auto& [key, value] : rows) CheckSetup(txn.Put(table->dbi, Bytes(key), Bytes(value), MDB_APPEND));
    CheckSetup(txn.Commit());
    side->tables.push_back(std::move(table));
  }
}

void BuildShards(Fixture* f, MergeSide* side, const std::string& name) {
  std::string sections;
  for (size_t m = 0; m < f->sizes.maps; ++m) sections += "[map." + MapName(m) + "]\ntype = state\nscheme = hashed\n";
  const std::string dir = f->root + "/" + name;
  std::filesystem::create_directories(dir);
  side->runtime = OpenBenchRuntime(dir, sections);
  LoadStream(side->runtime.get(), StreamWriter::NewStreamName(), [&](StreamWriter* writer) {
    Record record;
    record.has_key = record.has_value = true;
    for (size_t r = 0; r < f->sizes.shard_rows; ++r) {
      const std::string key = RowKey(r, -1);
      const std::string value = RowValue(r, -1);
      record.key = Bytes(key);
      record.value = Bytes(value);
      for (size_t m = 0; m < f->sizes.maps; ++m) CheckSetup(writer->Add(MapName(m), record));
    }
  });
}

Status InsertRaw(RawTable* table, const Rows& rows) {
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(table->env.get(), 0));
  Cursor cursor;
  Status s = cursor.Open(txn.get(), table->dbi);
  for (size_t r = 0; s.ok() && r < rows.size(); ++r) {
    MDB_val k{rows[r].first.size(), const_cast<char*>(rows[r].first.data())};
    MDB_val v{rows[r].second.size(), const_cast<char*>(rows[r].second.data())};
    s = LmdbStatus(mdb_cursor_put(cursor.get(), &k, &v, 0), "raw mdb_cursor_put");
  }
  cursor.Close();
  return s.ok() ? txn.Commit() : s;
}

// The process's CPU time (user + system, all threads) over wall time, of the timed parts only: how busy the two
// cores were. One thread that waits on the disk for part of a merge shows under 1; what a second thread can add
// is bounded by what the first leaves idle, of the cores and of the disk.
class CpuShare {
 public:
  void Start() {
    cpu_start_ = CpuSeconds();
    wall_start_ = std::chrono::steady_clock::now();
  }
  void Stop() {
    cpu_ += CpuSeconds() - cpu_start_;
    wall_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  }
  void Report(benchmark::State& state) const { state.counters["cpus_busy"] = wall_ > 0 ? cpu_ / wall_ : 0; }

 private:
  static double CpuSeconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  double cpu_start_ = 0;
  double cpu_ = 0;
  double wall_ = 0;
  std::chrono::steady_clock::time_point wall_start_;
};

// Table m goes to thread m % threads, each thread inserting its tables one after another.
void RawInserts(benchmark::State& state, Fixture* f, int threads) {
  RawSide& side = f->raw[threads - 1];
  CpuShare busy;
  for (auto _ : state) {
    state.PauseTiming();
    const Rows rows = SortedRows(f->sizes.batch_rows, side.batches++);
    state.ResumeTiming();
    busy.Start();
    std::vector<Status> results(f->sizes.maps);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (size_t m = t; m < f->sizes.maps; m += threads) results[m] = InsertRaw(side.tables[m].get(), rows);
      });
    }
    for (std::thread& worker : workers) worker.join();
    busy.Stop();
    for (const Status& s : results) {
      if (!s.ok()) return state.SkipWithError(s.message().c_str());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.maps * f->sizes.batch_rows));
  busy.Report(state);
}

// One batch per map, each through the real StreamWriter, zipped and staged.
void StageOneBatchPerMap(const Fixture& f, Runtime* runtime, int batch) {
  for (size_t m = 0; m < f.sizes.maps; ++m) {
    StreamWriter writer(runtime->catalog(), runtime->home().writer() + "/" + StreamWriter::NewStreamName());
    Record record;
    record.has_key = record.has_value = true;
    for (size_t r = 0; r < f.sizes.batch_rows; ++r) {
      const std::string key = RowKey(r, batch);
      const std::string value = RowValue(r, batch);
      record.key = Bytes(key);
      record.value = Bytes(value);
      CheckSetup(writer.Add(MapName(m), record));
    }
    CheckSetup(writer.Finish());
    CheckSetup(StageBatch(runtime, &writer));
  }
}

void Merges(benchmark::State& state, Fixture* f, int threads) {
  MergeSide& side = f->merge[threads - 1];
  CpuShare busy;
  for (auto _ : state) {
    state.PauseTiming();
    StageOneBatchPerMap(*f, side.runtime.get(), side.batches++);
    state.ResumeTiming();
    MergeReport report;
    busy.Start();
    Status s = MergeProcessor(*side.runtime, UnzipLimits{}, threads).MergePending(&report);
    busy.Stop();
    if (s.ok() && report.batches != f->sizes.maps) {
      s = Status::Internal("merged " + std::to_string(report.batches) + " batches, expected " +
                           std::to_string(f->sizes.maps));
    }
    for (size_t m = 0; s.ok() && m < f->sizes.maps; ++m) {
      if (report.rows_merged[MapName(m)] != f->sizes.batch_rows) {
        s = Status::Internal(MapName(m) + ": merged " + std::to_string(report.rows_merged[MapName(m)]) +
                             " rows, expected " + std::to_string(f->sizes.batch_rows));
      }
    }
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.maps * f->sizes.batch_rows));
  busy.Report(state);
}

// Two rounds of everything before anything is timed: LMDB reuses the pages a commit frees only from the commit
// after next, so the first merges into a table grow its file where a long-lived shard's reuse freed pages.
void WarmUp(Fixture* f) {
  for (int round = 0; round < 2; ++round) {
    for (RawSide& side : f->raw) {
      const Rows rows = SortedRows(f->sizes.batch_rows, side.batches++);
      for (const auto& table : side.tables) CheckSetup(InsertRaw(table.get(), rows));
    }
    for (MergeSide& side : f->merge) {
      StageOneBatchPerMap(*f, side.runtime.get(), side.batches++);
      MergeReport report;
      CheckSetup(MergeProcessor(*side.runtime).MergePending(&report));
    }
  }
}

void Register(Fixture* f) {
  const std::string group = "parallel_merge/" + std::to_string(f->sizes.maps) + "_maps_shard_" +
                            std::to_string(f->sizes.shard_rows) + "_batch_" + std::to_string(f->sizes.batch_rows) +
                            "/";
  auto configure = [](benchmark::internal::Benchmark* b) {
    b->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  configure(benchmark::RegisterBenchmark((group + "raw_lmdb_cursor_put_one_thread").c_str(), RawInserts, f, 1));
  configure(benchmark::RegisterBenchmark((group + "lmdb_cursor_put_threads_2").c_str(), RawInserts, f, 2));
  configure(benchmark::RegisterBenchmark((group + "merge_threads_1").c_str(), Merges, f, 1));
  configure(benchmark::RegisterBenchmark((group + "merge_threads_2").c_str(), Merges, f, 2));
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  // The allocator policy of the planb process whose path this times (host/common/bulk_buffers.h).
  planb::KeepBulkBuffersInProcess();
  benchmark::Initialize(&argc, argv);
  Fixture fixture;
  fixture.sizes.maps = EnvCount("PLANB_BENCH_MAPS", 4);
  fixture.sizes.shard_rows = EnvCount("PLANB_BENCH_SHARD_ROWS", 1000000);
  fixture.sizes.batch_rows = EnvCount("PLANB_BENCH_BATCH_ROWS", 200000);
  fixture.root = MakeBenchRoot("parallel-merge-bench");
  std::printf("parallel merge bench: %zu maps, shard %zu rows, batch %zu rows per map\n", fixture.sizes.maps,
              fixture.sizes.shard_rows, fixture.sizes.batch_rows);
  std::fflush(stdout);
  std::fprintf(stderr, "building the raw tables and the shards...\n");
  for (int t = 0; t < 2; ++t) {
    BuildRaw(&fixture, &fixture.raw[t], "raw-threads-" + std::to_string(t + 1));
    BuildShards(&fixture, &fixture.merge[t], "merge-threads-" + std::to_string(t + 1));
  }
  WarmUp(&fixture);
  Register(&fixture);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  for (int t = 0; t < 2; ++t) {
    fixture.merge[t].runtime.reset();
    fixture.raw[t].tables.clear();
  }
  return 0;
}
