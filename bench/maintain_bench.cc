// Condensation throughput and bytes saved, beside the raw baseline a user would write without Plan B: read every
// row of a raw LMDB table and write the rows that are not repeated confirmations into a fresh table
// (MDB_APPEND), the design's "create a new condensed instance". Rows of group condense/<data>/:
//   raw_lmdb_rewrite     the baseline: cursor walk of the raw table + appends of the kept rows into a new file
//   temporal_<scheme>    planb's condensation of a Temporal State shard (host/maintain: Store::Maintain in one
//                        write transaction, the scheme's sweep, the commit), built through the real ingest path
//   temporal_<scheme>_then_reclaim   the same, then the dense copy that reclaim swaps in (the file a user's disk
//                        then holds): like for like with the raw rewrite, which also ends with a new file
// Every iteration starts from a fresh copy of the uncondensed table (copied outside the timing). Items per
// second are rows examined. Counters: rows_kept and kept_share (rows after / before), and bytes_saved_share:
// the share of file bytes the new file saves against the table before (raw, _then_reclaim), or for condensation
// alone the share of the shard's used pages it freed (the file shrinks at the next reclaim). Both the raw table
// and the shard start dense (written in key order with MDB_APPEND), so the shares compare.
//
// Data: tzdata transitions from ../shared/data (or synthetic rows when absent, with a note) as a feed would
// deliver them: every zone's state confirmed at the start of each year since its first transition (the same
// value again unless the zone changed), beside the real transitions. Those yearly confirmations are what
// condensation removes. PLANB_BENCH_YEARS (default 57: 1970-2026) sets how many yearly confirmations.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "host/common/iso_time.h"
#include "host/maintain/shard_rows_maintenance.h"
#include "host/storage/dense_copy.h"
#include "host/storage/map_env.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"
#include "support/temporal_data.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kYearMs = int64_t{365} * 24 * 3600 * 1000 + int64_t{6} * 3600 * 1000;  // 365.25 days
const char* const kSchemes[] = {"hashed", "direct"};

struct Fixture {
  std::string root;
  std::string name;
  std::vector<TemporalRow> rows;  // sorted by key, then time
  std::unique_ptr<Runtime> runtime;
  std::string raw_template;       // directory holding the raw table's data.mdb
};

// Every zone's value in effect at the start of each year (from 1970), added beside its transitions.
std::vector<TemporalRow> WithYearlyConfirmations(const std::vector<TemporalRow>& transitions, int years) {
  std::vector<TemporalRow> out;
  std::map<std::string, std::vector<const TemporalRow*>> by_key;
  for (const TemporalRow& row : transitions) by_key[row.key].push_back(&row);
  for (const auto& [key, versions] : by_key) {
    std::map<int64_t, std::string> timeline;
    for (const TemporalRow* v : versions) timeline[v->time_ms] = v->value;
    for (int y = 0; y < years; ++y) {
      const int64_t t = y * kYearMs;
      auto at = timeline.upper_bound(t);
      if (at == timeline.begin()) continue;  // the zone did not exist yet
      --at;
      timeline.emplace(t, at->second);  // a confirmation (kept as it is when a transition falls exactly there)
    }
    for (const auto& [time, value] : timeline) out.push_back({key, time, value});
  }
  return out;
}

// key + NUL + time: a key's rows are contiguous and in time order (zone names hold no NUL), so the rows, sorted
// by key then time, go in with MDB_APPEND: a dense table, as Plan B's first batch makes its shard.
std::string RawKey(const TemporalRow& row) {
  std::string key = row.key;
  key.resize(row.key.size() + 9);
  PutOrderedI64(reinterpret_cast<uint8_t*>(key.data() + row.key.size() + 1), row.time_ms);
  return key;
}

void BuildRaw(Fixture* f) {
  f->raw_template = f->root + "/raw";
  fs::create_directories(f->raw_template);
  Env env;
  Env::Options options;
  CheckSetup(env.Open(f->raw_template, options));
  Txn txn;
  CheckSetup(txn.Begin(env.get(), 0));
  MDB_dbi dbi = 0;
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, &dbi));
  for (const TemporalRow& row : f->rows) {
    CheckSetup(txn.Put(dbi, Bytes(RawKey(row)), Bytes(row.value), MDB_APPEND));
  }
  CheckSetup(txn.Commit());
}

void BuildShards(Fixture* f) {
  std::string sections;
  for (const char* scheme : kSchemes) {
    sections += std::string("[map.temporal_") + scheme + "]\ntype = temporal\nscheme = " + scheme +
                "\ncondense = true\n";
  }
  fs::create_directories(f->root + "/planb");
  f->runtime = OpenBenchRuntime(f->root + "/planb", sections);
  LoadStream(f->runtime.get(), "tzdata", [&](StreamWriter* writer) {
    for (const char* scheme : kSchemes) {
      for (const TemporalRow& row : f->rows) {
        Record record;
        record.has_key = true;
        record.key = Bytes(row.key);
        record.time_given = true;
        record.time_ms = row.time_ms;
        record.has_value = true;
        record.value = Bytes(row.value);
        CheckSetup(writer->Add(std::string("temporal_") + scheme, record));
      }
    }
  });
}

// A fresh copy of `from`/data.mdb in `to` (replacing what was there).
void FreshCopy(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::create_directories(to);
  fs::copy_file(from + "/data.mdb", to + "/data.mdb", ec);
  if (ec) CheckSetup(Status::IOError("copying " + from + ": " + ec.message()));
}

size_t UsedPages(MDB_env* env, MDB_txn* txn, MDB_dbi dbi) {
  MDB_stat stat;
  mdb_stat(txn, dbi, &stat);
  (void)env;
  return stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
}

void RawRewrite(benchmark::State& state, Fixture* f) {
  const std::string work = f->root + "/raw-work";
  const std::string out_dir = f->root + "/raw-out";
  size_t kept = 0;
  double saved = 0;
  for (auto _ : state) {
    state.PauseTiming();
    FreshCopy(f->raw_template, work);
    std::error_code ec;
    fs::remove_all(out_dir, ec);
    fs::create_directories(out_dir);
    state.ResumeTiming();
    Env in;
    Env out;
    Env::Options options;
    CheckSetup(in.Open(work, options));
    CheckSetup(out.Open(out_dir, options));
    Txn read;
    CheckSetup(read.Begin(in.get(), MDB_RDONLY));
    MDB_dbi in_dbi = 0;
    CheckSetup(read.OpenDbi("data", 0, &in_dbi));
    Txn write;
    CheckSetup(write.Begin(out.get(), 0));
    MDB_dbi out_dbi = 0;
    CheckSetup(write.OpenDbi("data", MDB_CREATE, &out_dbi));
    Cursor cursor;
    CheckSetup(cursor.Open(read.get(), in_dbi));
    MDB_val k;
    MDB_val v;
    std::string previous_key;
    std::string previous_value;
    const int64_t cutoff = CurrentTimeMs();
    kept = 0;
    for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
      const std::string_view key(static_cast<const char*>(k.mv_data), k.mv_size - 9);
      const std::string_view value(static_cast<const char*>(v.mv_data), v.mv_size);
      const int64_t time = GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + k.mv_size - 8);
      // A repeated confirmation, before the cut as Plan B's condensation (condense_after = 0: now).
      if (time < cutoff && key == previous_key && value == previous_value) continue;
      previous_key.assign(key);
      previous_value.assign(value);
      CheckSetup(LmdbStatus(mdb_put(write.get(), out_dbi, &k, &v, MDB_APPEND), "appending"));
      ++kept;
    }
    CheckSetup(write.Commit());
    cursor.Close();
    read.Abort();
    state.PauseTiming();
    saved = 1.0 - static_cast<double>(fs::file_size(out_dir + "/data.mdb")) /
                      static_cast<double>(fs::file_size(work + "/data.mdb"));
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->rows.size()));
  state.counters["rows_kept"] = static_cast<double>(kept);
  state.counters["kept_share"] = static_cast<double>(kept) / static_cast<double>(f->rows.size());
  state.counters["bytes_saved_share"] = saved;
}

// `reclaim`: the timed work also makes the compact copy that reclaim swaps in (CompactCopy), and
// bytes_saved_share compares file sizes (what a user's disk sees); without it, the share of used pages the
// condensation freed inside the file.
// The dense copy reclaim swaps in (host/storage/dense_copy.h), made in `dir`.
void CompactCopy(const MapEnv& env, const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  DenseCopyStats stats;
  CheckSetup(DenseCopy(env.env(), dir, &stats));
}

void PlanBCondense(benchmark::State& state, Fixture* f, std::string map, bool reclaim) {
  std::shared_ptr<MapEnv> shard;
  CheckSetup(f->runtime->OpenShard(map, &shard));
  const std::string from = shard->path();
  shard.reset();
  const std::string work = f->root + "/work-" + map;
  std::shared_ptr<const MapPlugins> plugins;
  CheckSetup(f->runtime->catalog().Get(map, &plugins));
  RowsMaintenance done;
  double saved = 0;
  for (auto _ : state) {
    state.PauseTiming();
    FreshCopy(from, work);
    std::shared_ptr<MapEnv> env;
    CheckSetup(MapEnv::Open(work, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env));
    size_t pages_before = 0;
    {
      Txn txn;
      CheckSetup(txn.Begin(env->env(), MDB_RDONLY));
      pages_before = UsedPages(env->env(), txn.get(), env->data());
    }
    done = RowsMaintenance();
    state.ResumeTiming();
    CheckSetup(MaintainShardRows(*env, CurrentTimeMs(), false, nullptr, kMergedBatchesKeepMs, &done));
    if (reclaim) CompactCopy(*env, work + "/compact");
    state.PauseTiming();
    if (reclaim) {
      saved = 1.0 - static_cast<double>(fs::file_size(work + "/compact/data.mdb")) /
                        static_cast<double>(fs::file_size(from + "/data.mdb"));
    } else {
      Txn txn;
      CheckSetup(txn.Begin(env->env(), MDB_RDONLY));
      saved = 1.0 - static_cast<double>(UsedPages(env->env(), txn.get(), env->data())) /
                        static_cast<double>(pages_before);
    }
    env.reset();
    state.ResumeTiming();
  }
  const uint64_t kept = done.stats.rows_examined - done.stats.rows_condensed;
  if (done.stats.rows_examined != f->rows.size()) {
    state.SkipWithError(("examined " + std::to_string(done.stats.rows_examined) + " rows, expected " +
                         std::to_string(f->rows.size()))
                            .c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->rows.size()));
  state.counters["rows_kept"] = static_cast<double>(kept);
  state.counters["kept_share"] = static_cast<double>(kept) / static_cast<double>(f->rows.size());
  state.counters["bytes_saved_share"] = saved;
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  Fixture f;
  f.root = MakeBenchRoot("maintain");
  const char* years_text = std::getenv("PLANB_BENCH_YEARS");
  const int years = years_text != nullptr ? std::max(1, std::atoi(years_text)) : 57;
  std::string why_missing;
  std::vector<TemporalRow> transitions = TzdataTransitions(&why_missing);
  f.name = "tzdata";
  if (transitions.empty()) {
    std::fprintf(stderr, "note: %s; using synthetic temporal rows\n", why_missing.c_str());
    transitions = SyntheticTemporalRows(20000);
    f.name = "synthetic";
  }
  f.rows = WithYearlyConfirmations(transitions, years);
  std::fprintf(stderr, "condense bench: %zu rows (%zu transitions + yearly confirmations over %d years)\n",
               f.rows.size(), transitions.size(), years);
  BuildRaw(&f);
  BuildShards(&f);
  const std::string group = "condense/" + f.name + "/";
  auto configure = [](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kMillisecond)->Iterations(5); };
  configure(benchmark::RegisterBenchmark((group + "raw_lmdb_rewrite").c_str(), RawRewrite, &f));
  for (const char* scheme : kSchemes) {
    const std::string map = std::string("temporal_") + scheme;
    configure(benchmark::RegisterBenchmark((group + map).c_str(), PlanBCondense, &f, map, false));
    configure(benchmark::RegisterBenchmark((group + map + "_then_reclaim").c_str(), PlanBCondense, &f, map, true));
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  f.runtime.reset();
  return 0;
}
