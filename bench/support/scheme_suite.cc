#include "support/scheme_suite.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/common/iso_time.h"
#include "host/ingest/merge_map.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/stream_writer.h"
#include "host/plugin_host/map_plugins.h"
#include "host/scheme_trial/trial_config.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kBatchModulus = 10;  // merge batches: rows with i % 10 == offset + iteration
constexpr int kMergeBatches = 3;      // the shard holds rows with i % 10 >= kMergeBatches
constexpr int kLoads = 3;

// What one merge group merges: into a shard of `shard`'s rows with i % kBatchModulus >= kMergeBatches, batch b
// (the b-th timed iteration) of `batch`'s rows with i % kBatchModulus == offset + b.
struct MergeCase {
  const SuiteRows* shard;
  const SuiteRows* batch;
  size_t offset;
};

bool InShard(size_t i) { return i % kBatchModulus >= kMergeBatches; }

// Whether row i is in batch `batch` of `merge`.
std::function<bool(size_t)> InBatch(const MergeCase& merge, size_t batch) {
  const size_t want = merge.offset + batch;
  return [want](size_t i) { return i % kBatchModulus == want; };
}

// What an update appends to each value. Two bytes, not one: LMDB keeps nodes at even sizes, so a value one byte
// longer grows its node by 0 or 2 bytes depending on the parity of the row's size, which differs between layouts
// (a bulk-loaded table's full pages then split under one layout and not under another: commit_authors, whose
// values share a parity, split every page of a hashed shard and none of a direct one). Two bytes grow every row
// of every layout alike (but value_dedup rows holding a reference, which do not grow).
constexpr std::string_view kUpdateSuffix = "~~";

// `rows` with every value changed ("~~" appended), for batches that update rows a shard holds. Rows without a
// value (sessions) stay as they are. State rows are also a millisecond newer (State keeps the latest effective
// time, so an update at the same time would replace only the rows whose new value hashes higher); temporal rows
// keep their time (it is part of their key). Each record's value is valid until the next call.
SuiteRows UpdatedRows(const SuiteRows* rows) {
  SuiteRows out = *rows;
  auto buffer = std::make_shared<std::string>();
  const bool newer = rows->type == "state";
  out.record = [rows, buffer, newer](size_t i, Record* record) {
    rows->record(i, record);
    if (!record->has_value) return;
    if (newer) ++record->time_ms;
    buffer->assign(reinterpret_cast<const char*>(record->value.data), record->value.size);
    buffer->append(kUpdateSuffix);
    record->value = Bytes(*buffer);
  };
  out.raw = [rows](size_t i, std::string* key, std::string* value) {
    rows->raw(i, key, value);
    if (!value->empty()) value->append(kUpdateSuffix);
  };
  return out;
}

std::string Section(const std::string& type, const SchemeVariant& v) {
  return "[map." + v.label + "]\ntype = " + type + "\nscheme = " + v.scheme + "\n" +
         (v.value_dedup ? "value_dedup = true\n" : "");
}

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A fresh, empty directory `path` (removed first when it exists).
void FreshDir(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  fs::create_directories(path, ec);
  if (ec) CheckSetup(Status::IOError("making " + path + ": " + ec.message()));
}

// Adds rows [0, count) with `take(i)` to `map` in a new stream of `runtime`: kInvalidArgument (the stream
// discarded) when the scheme refuses one.
Status WriteStream(Runtime* runtime, const std::string& map, const SuiteRows& rows,
                   const std::function<bool(size_t)>& take, std::unique_ptr<StreamWriter>* out) {
  auto writer = std::make_unique<StreamWriter>(runtime->catalog(),
                                               runtime->home().writer() + "/" + StreamWriter::NewStreamName());
  Record record;
  for (size_t i = 0; i < rows.count; ++i) {
    if (!take(i)) continue;
    rows.record(i, &record);
    Status s = writer->Add(map, record);
    if (!s.ok()) {
      writer->Discard();
      return s;
    }
  }
  PLANB_RETURN_IF_ERROR(writer->Finish());
  *out = std::move(writer);
  return Status::Ok();
}

void RawPuts(Env* env, const SuiteRows& rows, const std::function<bool(size_t)>& take, MDB_dbi* dbi) {
  Txn txn;
  CheckSetup(txn.Begin(env->get(), 0));
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, dbi));
  std::string key;
  std::string value;
  for (size_t i = 0; i < rows.count; ++i) {
    if (!take(i)) continue;
    rows.raw(i, &key, &value);
    CheckSetup(txn.Put(*dbi, Bytes(key), Bytes(value)));
  }
  CheckSetup(txn.Commit());
}

// The raw key and value of rows [0, count) with `take(i)`, sorted by key (as a batch file holds them).
std::vector<std::pair<std::string, std::string>> SortedRawRows(const SuiteRows& rows,
                                                               const std::function<bool(size_t)>& take) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (size_t i = 0; i < rows.count; ++i) {
    if (!take(i)) continue;
    sorted.emplace_back();
    rows.raw(i, &sorted.back().first, &sorted.back().second);
  }
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// As RawPuts, in key order with MDB_APPEND: the table a batch merged into an empty shard leaves (full pages).
// Of rows with the same key, the one RawPuts would leave (the last taken) is kept.
void RawSortedAppends(Env* env, const SuiteRows& rows, const std::function<bool(size_t)>& take, MDB_dbi* dbi) {
  std::vector<std::pair<std::string, std::string>> all;
  for (size_t i = 0; i < rows.count; ++i) {
    if (!take(i)) continue;
    all.emplace_back();
    rows.raw(i, &all.back().first, &all.back().second);
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Txn txn;
  CheckSetup(txn.Begin(env->get(), 0));
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, dbi));
  for (size_t i = 0; i < all.size(); ++i) {
    if (i + 1 < all.size() && all[i + 1].first == all[i].first) continue;  // a later row has this key
    CheckSetup(txn.Put(*dbi, Bytes(all[i].first), Bytes(all[i].second), MDB_APPEND));
  }
  CheckSetup(txn.Commit());
}

void RawLoad(benchmark::State& state, const SuiteRows* rows, std::string dir) {
  for (auto _ : state) {
    FreshDir(dir);
    Env env;
    CheckSetup(env.Open(dir, Env::Options()));
    MDB_dbi dbi = 0;
    const Clock::time_point start = Clock::now();
    RawPuts(&env, *rows, [](size_t) { return true; }, &dbi);
    state.SetIterationTime(Seconds(start));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Closes `env` and removes its directory `dir`, after a timed group.
void CloseAndRemove(Env* env, const std::string& dir) {
  env->Close();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

void RawMerge(benchmark::State& state, const MergeCase* merge, std::string dir) {
  FreshDir(dir);
  Env env;
  CheckSetup(env.Open(dir, Env::Options()));
  MDB_dbi dbi = 0;
  RawSortedAppends(&env, *merge->shard, InShard, &dbi);
  size_t batch = 0;
  for (auto _ : state) {
    // The batch's rows in memory and sorted, as a batch file holds them: raw's best (mdb_cursor_put in key order
    // keeps LMDB on the page it just wrote when the next key lands there), untimed.
    const auto sorted = SortedRawRows(*merge->batch, InBatch(*merge, batch));
    const Clock::time_point start = Clock::now();
    Txn txn;
    CheckSetup(txn.Begin(env.get(), 0));
    Cursor cursor;
    CheckSetup(cursor.Open(txn.get(), dbi));
    for (const auto& [key, value] : sorted) {
      MDB_val k = Bytes(key).mdb();
      MDB_val v = Bytes(value).mdb();
      CheckSetup(LmdbStatus(mdb_cursor_put(cursor.get(), &k, &v, 0), "raw mdb_cursor_put"));
    }
    cursor.Close();  // before the commit, as LMDB requires of write cursors
    CheckSetup(txn.Commit());
    state.SetIterationTime(Seconds(start));
    ++batch;
  }
  CloseAndRemove(&env, dir);
}

// Exits unless every key of `rows` reads back through `writer`'s reader.
void CheckReadsBack(const Env& env, const LayoutWriter& writer, const std::vector<MDB_dbi>& dbis,
                    const std::vector<size_t>& rows) {
  Txn txn;
  CheckSetup(txn.Begin(env.get(), MDB_RDONLY));
  const size_t wrong = writer.wrong_reads(txn.get(), dbis, rows);
  if (wrong != 0) {
    CheckSetup(Status::Internal("a hand-written layout reads " + std::to_string(wrong) + " keys of " +
                                std::to_string(rows.size()) + " rows back wrongly"));
  }
}

void LayoutMerge(benchmark::State& state, const MergeCase* merge, const LayoutWriter* writer, std::string dir) {
  FreshDir(dir);
  Env env;
  Env::Options options;
  options.max_dbs = static_cast<unsigned>(writer->tables.size());
  CheckSetup(env.Open(dir, options));
  std::vector<MDB_dbi> dbis(writer->tables.size());
  {
    Txn txn;
    CheckSetup(txn.Begin(env.get(), 0));
    for (size_t t = 0; t < dbis.size(); ++t) CheckSetup(txn.OpenDbi(writer->tables[t].c_str(), MDB_CREATE, &dbis[t]));
    CheckSetup(txn.Commit());
  }
  std::vector<size_t> kept;
  for (size_t i = 0; i < merge->shard->count; ++i) {
    if (InShard(i)) kept.push_back(i);
  }
  {
    Txn txn;
    CheckSetup(txn.Begin(env.get(), 0));
    writer->build(txn.get(), dbis, kept);
    CheckSetup(txn.Commit());
  }
  CheckReadsBack(env, *writer, dbis, kept);
  size_t batch = 0;
  for (auto _ : state) {
    std::vector<size_t> rows;
    const auto in_batch = InBatch(*merge, batch);
    for (size_t i = 0; i < merge->batch->count; ++i) {
      if (in_batch(i)) rows.push_back(i);
    }
    writer->order(&rows);
    const Clock::time_point start = Clock::now();
    Txn txn;
    CheckSetup(txn.Begin(env.get(), 0));
    writer->merge(txn.get(), dbis, rows);
    CheckSetup(txn.Commit());
    state.SetIterationTime(Seconds(start));
    CheckReadsBack(env, *writer, dbis, rows);
    ++batch;
  }
  CloseAndRemove(&env, dir);
}

void PlanBLoad(benchmark::State& state, const SuiteRows* rows, const SchemeVariant* v, std::string dir) {
  FreshDir(dir);
  std::unique_ptr<Runtime> runtime = OpenBenchRuntime(dir, Section(rows->type, *v));
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    std::unique_ptr<StreamWriter> writer;
    Status s = WriteStream(runtime.get(), v->label, *rows, [](size_t) { return true; }, &writer);
    state.SetIterationTime(Seconds(start));
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    writer->Discard();
  }
  runtime.reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// A runtime in `dir` (made afresh) whose shard of `v` holds every row but the merge batches' (70%), merged.
std::unique_ptr<Runtime> RuntimeWithMergedShard(const SuiteRows* rows, const SchemeVariant& v, const std::string& dir) {
  FreshDir(dir);
  std::unique_ptr<Runtime> runtime = OpenBenchRuntime(dir, Section(rows->type, v));
  std::unique_ptr<StreamWriter> writer;
  CheckSetup(WriteStream(runtime.get(), v.label, *rows, InShard, &writer));
  CheckSetup(StageAndMerge(runtime.get(), writer.get()));
  return runtime;
}

// Batch `batch` of `merge` as a finished stream of map `map`.
void WriteMergeBatch(Runtime* runtime, const std::string& map, const MergeCase& merge, size_t batch,
                     std::unique_ptr<StreamWriter>* writer) {
  CheckSetup(WriteStream(runtime, map, *merge.batch, InBatch(merge, batch), writer));
}

void PlanBMerge(benchmark::State& state, const MergeCase* merge, const SchemeVariant* v, std::string dir) {
  std::unique_ptr<Runtime> runtime = RuntimeWithMergedShard(merge->shard, *v, dir);
  std::unique_ptr<StreamWriter> writer;
  size_t batch = 0;
  for (auto _ : state) {
    WriteMergeBatch(runtime.get(), v->label, *merge, batch, &writer);
    CheckSetup(StageBatch(runtime.get(), writer.get()));
    const Clock::time_point start = Clock::now();
    MergeReport report;
    const Status s = MergeProcessor(*runtime).MergePending(&report);
    state.SetIterationTime(Seconds(start));
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    ++batch;
  }
  runtime.reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// The merge's write transaction alone (MergeIntoShard: the store's Merge reading the batch's rows and writing them
// into the shard, the batch id recorded, the commit), like for like with raw's transaction: the batch is zipped
// and extracted as a node does, and open, in setup. What PlanBMerge adds to this is the per-batch bookkeeping.
void PlanBMergeTxn(benchmark::State& state, const MergeCase* merge, const SchemeVariant* v, std::string dir) {
  std::unique_ptr<Runtime> runtime = RuntimeWithMergedShard(merge->shard, *v, dir);
  std::unique_ptr<StreamWriter> writer;
  std::shared_ptr<const MapPlugins> plugins;
  CheckSetup(runtime->catalog().Get(v->label, &plugins));
  std::shared_ptr<MapEnv> shard;
  CheckSetup(runtime->OpenShard(v->label, &shard));
  size_t batch = 0;
  for (auto _ : state) {
    WriteMergeBatch(runtime.get(), v->label, *merge, batch, &writer);
    const std::string zip = writer->dir() + ".zip";
    const std::string id = "bench/txn-" + std::to_string(batch);
    CheckSetup(ZipBatch(writer->dir(), zip, ZipOptions{/*compress=*/false, id}));
    writer->Discard();
    const std::string extracted = dir + "/batch-" + std::to_string(batch);
    UnzipLimits scratch;
    scratch.sync = false;  // as MergePending extracts into merging/
    std::vector<std::string> maps;
    CheckSetup(UnzipBatch(zip, extracted, scratch, &maps));
    fs::remove(zip);
    std::shared_ptr<MapEnv> batch_env;
    CheckSetup(MapEnv::Open(extracted + "/" + v->label, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags,
                            &batch_env));
    Txn batch_txn;
    CheckSetup(batch_txn.Begin(batch_env->env(), MDB_RDONLY));

    const Clock::time_point start = Clock::now();
    MapMergeResult result;
    const Status s = MergeIntoShard(*plugins, *batch_env, batch_txn.get(), *shard, id, CurrentTimeMs(), &result);
    state.SetIterationTime(Seconds(start));

    batch_txn.Abort();
    batch_env.reset();
    fs::remove_all(extracted);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    ++batch;
  }
  shard.reset();
  runtime.reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

std::vector<SchemeVariant> SchemeVariants(const std::string& dir, const std::string& type) {
  FreshDir(dir);
  std::unique_ptr<Runtime> runtime = OpenBenchRuntime(dir, "");
  const PluginRegistry& registry = runtime->registry();
  std::vector<SchemeVariant> out;
  // value_dedup only where rows carry a value (not sessions: their rows are the bounds alone).
  bool has_values = false;
  if (const LoadedPlugin* t = registry.Find(PluginKind::kStoreType, type)) {
    for (uint32_t i = 0; i < t->descriptor->field_count; ++i) {
      has_values |= t->descriptor->fields[i].field == RowField::kValue;
    }
  }
  for (const LoadedPlugin& p : registry.plugins()) {
    const PluginDescriptor& d = *p.descriptor;
    if (d.kind != PluginKind::kKeyScheme) continue;
    for (bool dedup : {false, true}) {
      if (dedup && (!has_values || !DeclaresOption(d, "value_dedup"))) continue;
      SchemeVariant v{d.name, dedup, std::string(d.name) + (dedup ? "_dedup" : "")};
      MapConfig map;
      map.name = v.label;
      map.type = type;
      map.scheme = v.scheme;
      if (dedup) map.plugin_options.emplace_back("value_dedup", "true");
      std::unique_ptr<MapPlugins> plugins;
      if (MapPlugins::Create(map, registry, &plugins).ok()) out.push_back(std::move(v));
    }
  }
  return out;
}

void BuildRawTable(const std::string& dir, const SuiteRows& rows, Env* env, MDB_dbi* dbi) {
  FreshDir(dir);
  CheckSetup(env->Open(dir, Env::Options()));
  RawPuts(env, rows, [](size_t) { return true; }, dbi);
}

double LookupMinTime() {
  const char* text = std::getenv("PLANB_BENCH_MIN_TIME");
  return text != nullptr && *text != '\0' ? std::stod(text) : 0.1;
}

namespace {
uint64_t DataFileBytes(const std::string& env_dir) {
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(env_dir + "/data.mdb", ec);
  return ec ? 0 : static_cast<uint64_t>(bytes);
}

uint64_t TreePages(const MDB_stat& stat) { return stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages; }

// Pages of every B-tree of `env`: the table of tables and each table named in it.
uint64_t TreeBytes(MDB_env* env) {
  Txn txn;
  CheckSetup(txn.Begin(env, MDB_RDONLY));
  MDB_dbi main = 0;
  CheckSetup(txn.OpenDbi(nullptr, 0, &main));
  MDB_stat stat;
  CheckSetup(LmdbStatus(mdb_stat(txn.get(), main, &stat), "reading the table of tables' statistics"));
  const uint64_t page_size = stat.ms_psize;
  uint64_t pages = TreePages(stat);
  Cursor cursor;
  CheckSetup(cursor.Open(txn.get(), main));
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    const std::string name(static_cast<const char*>(k.mv_data), k.mv_size);
    MDB_dbi dbi = 0;
    if (!txn.OpenDbi(name.c_str(), 0, &dbi).ok()) continue;  // a plain key of the main table, not a table
    CheckSetup(LmdbStatus(mdb_stat(txn.get(), dbi, &stat), "reading table statistics"));
    pages += TreePages(stat);
  }
  return pages * page_size;
}
}  // namespace

RowBytes MeasureRowBytes(MDB_env* env, const std::string& env_dir, size_t rows) {
  const double n = static_cast<double>(rows);
  return RowBytes{static_cast<double>(DataFileBytes(env_dir)) / n, static_cast<double>(TreeBytes(env)) / n};
}

void SetRowBytes(benchmark::State& state, const RowBytes& bytes) {
  if (bytes.disk >= 0) state.counters["bytes_per_row"] = bytes.disk;
  if (bytes.tree >= 0) state.counters["tree_bytes_per_row"] = bytes.tree;
}

void BuildSchemeShards(const std::string& dir, const SuiteRows& rows, SchemeShards* out) {
  fs::create_directories(dir);
  out->type = rows.type;
  std::vector<SchemeVariant> all = SchemeVariants(dir + "/list", rows.type);
  std::string sections;
  for (const SchemeVariant& v : all) sections += Section(rows.type, v);
  out->runtime = OpenBenchRuntime(dir, sections);
  for (const SchemeVariant& v : all) {
    Status s;
    for (size_t stream = 0; stream < 2 && s.ok(); ++stream) {
      std::unique_ptr<StreamWriter> writer;
      s = WriteStream(out->runtime.get(), v.label, rows, [stream](size_t i) { return i % 2 == stream; }, &writer);
      if (s.ok()) s = StageAndMerge(out->runtime.get(), writer.get());
    }
    if (!s.ok() && s.code() != Code::kInvalidArgument) CheckSetup(s);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s_%s skipped: %s\n", rows.name.c_str(), rows.type.c_str(), v.label.c_str(),
                   s.message().c_str());
      out->refused.emplace_back(v, s.message());
      continue;
    }
    out->variants.push_back(v);
    out->readers.push_back(std::make_unique<MapReader>());
    OpenReader(out->runtime.get(), v.label, out->readers.back().get());
    std::shared_ptr<MapEnv> env;
    CheckSetup(out->runtime->OpenShard(v.label, &env));
    out->row_bytes.push_back(MeasureRowBytes(env->env(), env->path(), rows.count));
  }
}

namespace {
struct MergeCases {
  const MergeCase* new_keys;
  const MergeCase* updates;
};

// The merge groups' two cases of `rows`: batches of new keys, and batches updating the shard's rows. They (and
// the updated rows) live as long as the registered benchmarks: the whole run.
MergeCases KeepMergeCases(const SuiteRows* rows) {
  static std::vector<std::unique_ptr<SuiteRows>> updated_rows;
  static std::vector<std::unique_ptr<MergeCase>> cases;
  updated_rows.push_back(std::make_unique<SuiteRows>(UpdatedRows(rows)));
  cases.push_back(std::make_unique<MergeCase>(MergeCase{rows, rows, 0}));
  const MergeCase* new_keys = cases.back().get();
  cases.push_back(std::make_unique<MergeCase>(MergeCase{rows, updated_rows.back().get(), kMergeBatches}));
  return MergeCases{new_keys, cases.back().get()};
}
}  // namespace

void RegisterLoadAndMerge(const SuiteRows* rows, const SchemeShards* shards, const std::string& root) {
  const auto [new_keys, updates] = KeepMergeCases(rows);

  const std::string dir = root + "/" + rows->name + "-timed";
  // One group: raw's row, then a row per variant, each `iterations` timed batches in a directory of its own.
  // `arg` is what the rows' functions take after the state: the SuiteRows (loads) or a MergeCase (merges).
  auto group = [&](const std::string& name, int iterations, auto raw, auto planb, const auto* arg) {
    const std::string prefix = name + "/" + rows->name + "/";
    benchmark::RegisterBenchmark((prefix + "raw_lmdb_put").c_str(), raw, arg, dir + "/" + name + "-raw")
        ->Iterations(iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    for (const SchemeVariant& v : shards->variants) {
      benchmark::RegisterBenchmark((prefix + rows->type + "_" + v.label).c_str(), planb, arg, &v,
                                   dir + "/" + name + "-" + v.label)
          ->Iterations(iterations)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  };
  group("load", kLoads, RawLoad, PlanBLoad, rows);
  group("merge", kMergeBatches, RawMerge, PlanBMerge, new_keys);
  group("merge_txn", kMergeBatches, RawMerge, PlanBMergeTxn, new_keys);
  group("merge_update_txn", kMergeBatches, RawMerge, PlanBMergeTxn, updates);
  ReportRefused(*shards, {"load/" + rows->name, "merge/" + rows->name, "merge_txn/" + rows->name,
                          "merge_update_txn/" + rows->name});
}

void RegisterRawMergeFloor(const SuiteRows* layout_rows, const std::string& label, const std::string& root) {
  const auto [new_keys, updates] = KeepMergeCases(layout_rows);
  const std::string dir = root + "/" + layout_rows->name + "-timed";
  for (const auto& [group, merge] : {std::pair{"merge_txn", new_keys}, std::pair{"merge_update_txn", updates}}) {
    const std::string name = std::string(group) + "/" + layout_rows->name + "/" + label;
    benchmark::RegisterBenchmark(name.c_str(), RawMerge, merge, dir + "/" + group + "-" + label)
        ->Iterations(kMergeBatches)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

void ReportRefused(const SchemeShards& shards, const std::vector<std::string>& groups) {
  for (const auto& [v, reason] : shards.refused) {
    for (const std::string& group : groups) NoteSkipped(group + "/" + shards.type + "_" + v.label, reason);
  }
}

void RegisterLayoutMergeFloor(const SuiteRows* rows, const std::string& label, const LayoutWriter* writer,
                              const std::string& root) {
  const MergeCase* new_keys = KeepMergeCases(rows).new_keys;
  const std::string name = "merge_txn/" + rows->name + "/" + label;
  benchmark::RegisterBenchmark(name.c_str(), LayoutMerge, new_keys, writer,
                               root + "/" + rows->name + "-timed/merge_txn-" + label)
      ->Iterations(kMergeBatches)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace planb::bench
