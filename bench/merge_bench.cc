// Merge throughput: a batch of new keys merged into a large State shard (hashed and direct schemes) beside raw
// LMDB inserting the same rows into a table of the same rows, in the same run. Sizes come from
// PLANB_BENCH_SHARD_ROWS (default 10000000) and PLANB_BENCH_BATCH_ROWS (default 1000000); keys are "key-<hex>"
// (16 hex digits of a hash: RowKey) with 24-byte values. Every iteration merges a new batch whose keys land at
// random places among all the table's keys, so the merge touches pages all over the shard (as the raw inserts
// do); the shard grows by one batch per iteration, in all tables.
//
// Every table (the raw ones and each shard) takes two untimed batches before anything is timed, merged the same
// way as the timed ones: LMDB reuses the pages a commit frees only from the commit after next, and the first
// merge into a bulk-loaded table splits every (full) leaf page, so without it the first row timed on a table
// paid for growing it. Each row times its own table, so every table has taken as many batches as the others
// when timed: a merge's cost grows with the shard. Compare ratios of the same repetition; on a shared machine,
// run with --benchmark_enable_random_interleaving=true and several repetitions (a repetition's times swing 2-4x).
//
// Rows of group merge/shard_<rows>_batch_<rows>/:
//   raw_lmdb_cursor_put      the baseline: one write transaction of mdb_cursor_put of the batch rows, already in
//                            memory and sorted by key, and its commit (fsync).
//   lmdb_cursor_put_of_hashed_rows
//                            the same, of the same rows laid out as the hashed scheme writes them (10-byte hash +
//                            clash key; key length, key, type byte and value as the value), into a raw table of
//                            the shard's rows in that layout: the floor of any hashed merge, what the layout
//                            alone costs.
//   lmdb_cursor_put_of_lookup_table_rows
//                            the same for the lookup_table scheme's layout: per new key an index entry (hash +
//                            clash -> id + key), an id entry (id -> key) and the row (id -> type byte + value),
//                            each table written in one sorted cursor pass, the id counter once per batch.
//   state_hashed, _direct, _lookup_table
//                            end to end, as a node merges: MergeProcessor::MergePending on one staged batch zip
//                            (stored, not deflated: the single-node `planb load` path), which extracts the zip
//                            into merging/ (not synced: scratch), merges it in one write transaction, commits
//                            (fsync) and unstages the zip (durably). Writing the batch LMDB, zipping and staging
//                            it are setup.
//   merge_txn_state_*        the merge's write transaction alone, like for like with raw: MergeIntoShard (the
//                            store's Merge reading the batch's rows and writing them into the shard, the batch id
//                            recorded, the commit). The batch is extracted and open in setup; its rows are still
//                            read from its LMDB, which raw does not do. On shards of their own (state_txn,
//                            state_direct_txn, state_lookup_table_txn) built like the others.
// PLANB_BENCH_DIRECT=0 and PLANB_BENCH_LOOKUP_TABLE=0 leave out the direct and lookup_table rows.
//   unzip_only_hashed        UnzipBatch of a batch zip like the merged ones, as MergePending extracts: the share
//                            of the end-to-end merge that raw LMDB does not pay.
// Group merge/first_batch_<rows>/ times a map's first batch (a fresh shard built from the batch's rows) beside a
// raw bulk load (MDB_APPEND) of the same rows into a new LMDB, and (lmdb_bulk_load_of_lookup_table_rows) the same
// rows bulk-loaded in the lookup_table layout: its index, ids and data tables, the floor of that scheme's first
// batch.
//
// Measured: see docs/schemes.md "Measured speed" (the figures and the run that gave them).
#include <benchmark/benchmark.h>
#include <lmdb.h>
#include <xxhash.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/common/bulk_buffers.h"
#include "host/ingest/merge_map.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/common/iso_time.h"
#include "host/runtime.h"
#include "host/transfer/batch_zip.h"
#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/hashed_layout.h"
#include "support/env_count.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kValueSize = 24;

std::string g_root;  // removed at exit, also when a setup step exits early

void RemoveRoot() {
  if (g_root.empty()) return;
  std::error_code ec;
  fs::remove_all(g_root, ec);
}

struct Sizes {
  size_t shard_rows;
  size_t batch_rows;
};

// Keys "key-<16 hex digits>", the digits a hash of the row's number and batch (-1: the shard's first rows), so
// every batch's keys land at uniformly random places among all the keys a table holds by then, as new keys of real
// data do, and as hashed rows do whatever the keys. Structured keys do not: with "key-<i>-b<n>" after "key-<i>"
// for the same i in every batch, each merge grew the same few spots of the raw table and never touched the rest,
// so raw's cost stayed flat while a hashed shard's grew with its size, and "x raw" grew with the run's length.
std::string RowKey(size_t i, int batch) {
  const uint64_t ids[2] = {i, static_cast<uint64_t>(static_cast<int64_t>(batch))};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key-%016llx", static_cast<unsigned long long>(XXH3_64bits(ids, sizeof(ids))));
  return buf;
}

std::string ShardKey(size_t i) { return RowKey(i, -1); }

std::string Value(size_t i, int batch) {
  char buf[48];  // 24 characters for any i below 10^10
  std::snprintf(buf, sizeof(buf), "v%010zu.%012d", i, batch + 1);
  return std::string(buf, kValueSize);
}

// Rows in the data table of `env` (one row per key in both the raw table and a State shard).
size_t CountRows(MDB_env* env, MDB_dbi dbi) {
  Txn txn;
  CheckSetup(txn.Begin(env, MDB_RDONLY));
  MDB_stat stat;
  CheckSetup(LmdbStatus(mdb_stat(txn.get(), dbi, &stat), "counting rows"));
  return stat.ms_entries;
}

void CheckShardRows(benchmark::State& state, size_t rows, size_t expected, const char* what) {
  if (rows == expected) return;
  const std::string message = std::string(what) + ": " + std::to_string(rows) + " rows after the merges, expected " +
                              std::to_string(expected);
  state.SkipWithError(message.c_str());
}

// "state" and "state_txn" are hashed; "state_direct*" direct, "state_lookup_table*" lookup_table. The *_txn maps
// are timed by the merge_txn rows, on shards of their own, so that every table has taken the same batches when
// timed.
std::string SchemeOf(const std::string& map) {
  if (map.rfind("state_direct", 0) == 0) return "direct";
  if (map.rfind("state_lookup_table", 0) == 0) return "lookup_table";
  return "hashed";
}

// The row name of a map: "state_hashed" for "state", else the map's name.
std::string RowName(const std::string& map) { return map == "state" ? "state_hashed" : map; }

std::string TxnMap(const std::string& map) { return map + "_txn"; }

using Row = std::pair<std::string, std::string>;

constexpr char kTypeByte = 1;  // the State row's value type (its value is a string); one byte, as the store writes


std::string Be32(uint32_t n) {
  uint8_t bytes[4];
  PutU32(bytes, n);
  return std::string(reinterpret_cast<const char*>(bytes), sizeof(bytes));
}


// Rows of a raw table, in each of its LMDB tables: the data table and, for the lookup_table layout, the index
// and the ids.
struct LayoutRows {
  std::vector<Row> data;
  std::vector<Row> index;
  std::vector<Row> ids;

  void Sort() {
    for (std::vector<Row>* rows : {&data, &index, &ids}) std::sort(rows->begin(), rows->end());
  }
};

enum class Layout { kPlain, kHashed, kLookupTable };

// A raw LMDB table of the shard's rows: as they are (the baseline), or laid out as the hashed or the lookup_table
// scheme writes them (the layout floors).
struct RawTable {
  explicit RawTable(Layout l) : layout(l) {}

  const Layout layout;
  int batches = 0;       // batches inserted so far
  uint32_t next_id = 0;  // kLookupTable: the next id to hand out, as the scheme's counter
  Env env;
  MDB_dbi dbi = 0;
  MDB_dbi index_dbi = 0;  // kLookupTable only
  MDB_dbi ids_dbi = 0;

  // Adds a new key's rows. The lookup_table scheme (plugins/schemes/id_index.h, lookup_table_key.cc, version 1):
  // index hash + clash -> id + key, ids id -> key, the row id -> type byte + value; ids in arrival order.
  void AddRow(const std::string& key, const std::string& value, LayoutRows* rows) {
    switch (layout) {
      case Layout::kPlain: rows->data.emplace_back(key, value); break;
      case Layout::kHashed:
        rows->data.emplace_back(HashedLayoutKey(key), HashedLayoutValue(key, kTypeByte, value));
        break;
      case Layout::kLookupTable: {
        const std::string id = Be32(next_id++);
        rows->index.emplace_back(HashedLayoutKey(key), id + key);  // the same hash + clash 0
        rows->ids.emplace_back(id, key);
        rows->data.emplace_back(id, kTypeByte + value);
        break;
      }
    }
  }
};

struct Fixture {
  Sizes sizes;
  bool compress = false;
  std::map<std::string, int> batches;  // batches merged so far into each map's shard (by any benchmark)
  std::unique_ptr<Runtime> runtime;
  RawTable raw{Layout::kPlain};
  RawTable raw_hashed_layout{Layout::kHashed};
  RawTable raw_lookup_table_layout{Layout::kLookupTable};

  std::vector<RawTable*> raw_tables() { return {&raw, &raw_hashed_layout, &raw_lookup_table_layout}; }
};

// The counter's key in the lookup_table layout's ids (its value: the next id, 8 bytes big-endian).
Status PutIdCounter(Txn* txn, const RawTable& table) {
  uint8_t next[8];
  PutU64(next, table.next_id);
  return txn->Put(table.ids_dbi, Bytes("n", 1), Bytes(next, sizeof(next)));
}

void BuildRaw(const std::string& dir, const Sizes& sizes, RawTable* table) {
  fs::create_directories(dir);
  CheckSetup(table->env.Open(dir, Env::Options()));  // room for the lookup_table layout's three tables
  LayoutRows rows;
  rows.data.reserve(sizes.shard_rows);
  for (size_t i = 0; i < sizes.shard_rows; ++i) table->AddRow(ShardKey(i), Value(i, -1), &rows);
  rows.Sort();
  Txn txn;
  CheckSetup(txn.Begin(table->env.get(), 0));
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, &table->dbi));
  if (table->layout == Layout::kLookupTable) {
    CheckSetup(txn.OpenDbi("index", MDB_CREATE, &table->index_dbi));
    CheckSetup(txn.OpenDbi("ids", MDB_CREATE, &table->ids_dbi));
  }
  // Sorted: append, as a bulk load would.
  const std::pair<const std::vector<Row>*, MDB_dbi> tables[] = {
      {&rows.data, table->dbi}, {&rows.index, table->index_dbi}, {&rows.ids, table->ids_dbi}};
  for (const auto& [sorted, dbi] : tables) {
    for (const Row& row : *sorted) CheckSetup(txn.Put(dbi, Bytes(row.first), Bytes(row.second), MDB_APPEND));
  }
  if (table->layout == Layout::kLookupTable) CheckSetup(PutIdCounter(&txn, *table));
  CheckSetup(txn.Commit());
}

void BuildPlanB(const std::string& dir, const std::vector<std::string>& maps, Fixture* f) {
  std::string sections;
  for (const std::string& map : maps) {
    sections += "[map." + map + "]\ntype = state\nscheme = " + SchemeOf(map) + "\n";
  }
  f->runtime = OpenBenchRuntime(dir, sections);
  LoadStream(f->runtime.get(), StreamWriter::NewStreamName(), [&](StreamWriter* writer) {
    Record record;
    record.has_key = record.has_value = true;
    for (size_t i = 0; i < f->sizes.shard_rows; ++i) {
      const std::string key = ShardKey(i);
      const std::string value = Value(i, -1);
      record.key = Bytes(key);
      record.value = Bytes(value);
      for (const std::string& map : maps) CheckSetup(writer->Add(map, record));
    }
  });
}

// Writes batch `batch` of `map` through the real StreamWriter and zips it; returns the zip's path.
std::string WriteBatchZip(Fixture* f, const std::string& map, int batch) {
  StreamWriter writer(f->runtime->catalog(), f->runtime->home().writer() + "/" + StreamWriter::NewStreamName());
  Record record;
  record.has_key = record.has_value = true;
  for (size_t j = 0; j < f->sizes.batch_rows; ++j) {
    const std::string key = RowKey(j, batch);
    const std::string value = Value(j, batch);
    record.key = Bytes(key);
    record.value = Bytes(value);
    CheckSetup(writer.Add(map, record));
  }
  CheckSetup(writer.Finish());
  const std::string zip = writer.dir() + ".zip";
  CheckSetup(ZipBatch(writer.dir(), zip, ZipOptions{f->compress, /*batch_id=*/"bench/" + zip}));
  writer.Discard();
  return zip;
}

double MiB(const std::string& path) { return static_cast<double>(fs::file_size(path)) / (1 << 20); }

// The rows of batch `batch` for `table`, sorted by LMDB key, as a raw LMDB writer would hold them.
LayoutRows SortedBatchRows(const Sizes& sizes, RawTable* table, int batch) {
  LayoutRows rows;
  rows.data.reserve(sizes.batch_rows);
  for (size_t j = 0; j < sizes.batch_rows; ++j) table->AddRow(RowKey(j, batch), Value(j, batch), &rows);
  rows.Sort();
  return rows;
}

// Puts `rows` through one cursor on `dbi`.
Status PutThroughCursor(MDB_txn* txn, MDB_dbi dbi, const std::vector<Row>& rows) {
  Cursor cursor;
  Status s = cursor.Open(txn, dbi);
  for (size_t r = 0; s.ok() && r < rows.size(); ++r) {
    MDB_val k{rows[r].first.size(), const_cast<char*>(rows[r].first.data())};
    MDB_val v{rows[r].second.size(), const_cast<char*>(rows[r].second.data())};
    s = LmdbStatus(mdb_cursor_put(cursor.get(), &k, &v, 0), "raw mdb_cursor_put");
  }
  cursor.Close();  // before the commit, as LMDB requires of write cursors
  return s;
}

// One raw write transaction: each table's rows put through one cursor (the lookup_table layout's counter once),
// then the commit (fsync).
Status RawInsertRows(RawTable* table, const LayoutRows& rows) {
  Txn txn;
  Status s = txn.Begin(table->env.get(), 0);
  if (s.ok()) s = PutThroughCursor(txn.get(), table->dbi, rows.data);
  if (s.ok() && table->layout == Layout::kLookupTable) {
    s = PutThroughCursor(txn.get(), table->index_dbi, rows.index);
    if (s.ok()) s = PutThroughCursor(txn.get(), table->ids_dbi, rows.ids);
    if (s.ok()) s = PutIdCounter(&txn, *table);
  }
  if (s.ok()) s = txn.Commit();
  return s;
}

void RawInsert(benchmark::State& state, Fixture* f, RawTable* table) {
  for (auto _ : state) {
    state.PauseTiming();
    LayoutRows rows = SortedBatchRows(f->sizes, table, table->batches++);
    state.ResumeTiming();

    Status s = RawInsertRows(table, rows);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
  CheckShardRows(state, CountRows(table->env.get(), table->dbi),
                 f->sizes.shard_rows + table->batches * f->sizes.batch_rows, "raw table");
}

// Stages batch `batch` of `map` and merges it as a node does (MergePending), checking what it reports.
Status StageAndMergeBatch(Fixture* f, const std::string& map, int batch, double* zip_mib,
                          benchmark::State* state) {
  if (state != nullptr) state->PauseTiming();
  const std::string zip = WriteBatchZip(f, map, batch);
  *zip_mib = MiB(zip);
  uint64_t sequence = 0;
  CheckSetup(StagingStore(f->runtime->home()).Stage(zip, &sequence));
  if (state != nullptr) state->ResumeTiming();

  MergeReport report;
  Status s = MergeProcessor(*f->runtime).MergePending(&report);
  if (s.ok() && (report.batches != 1 || report.rows_merged[map] != f->sizes.batch_rows)) {
    s = Status::Internal("merged " + std::to_string(report.batches) + " batches, " +
                         std::to_string(report.rows_merged[map]) + " rows of " + map + "; expected 1 batch of " +
                         std::to_string(f->sizes.batch_rows));
  }
  return s;
}

// Two batches merged into every table before anything is timed, the same way as the timed ones: LMDB reuses the
// pages a commit frees only from the commit after next, so the first two merges into a table grow its file (and
// the page cache) where a long-lived shard's merges reuse freed pages. Without this, whichever benchmark ran
// first on a table paid for that growth.
void WarmUp(Fixture* f, const std::vector<std::string>& maps) {
  for (int i = 0; i < 2; ++i) {
    for (RawTable* table : f->raw_tables()) {
      CheckSetup(RawInsertRows(table, SortedBatchRows(f->sizes, table, table->batches++)));
    }
    for (const std::string& map : maps) {
      double zip_mib = 0;
      CheckSetup(StageAndMergeBatch(f, map, f->batches[map]++, &zip_mib, nullptr));
    }
  }
}

void StateMerge(benchmark::State& state, Fixture* f, std::string map) {
  int& batch = f->batches[map];
  double zip_mib = 0;
  for (auto _ : state) {
    Status s = StageAndMergeBatch(f, map, batch++, &zip_mib, &state);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
  state.counters["zip_MiB"] = zip_mib;
  std::shared_ptr<MapEnv> shard;
  CheckSetup(f->runtime->OpenShard(map, &shard));
  CheckShardRows(state, CountRows(shard->env(), shard->data()), f->sizes.shard_rows + batch * f->sizes.batch_rows,
                 map.c_str());
}

// The merge's write transaction alone (MergeIntoShard: the store's Merge reading the batch's rows and writing them
// into the shard, the batch id recorded, the commit with its fsync), like for like with the raw baseline: the
// batch is already extracted and open (setup), as raw's rows are already in memory. It still reads the rows from
// the batch's LMDB, which raw does not.
void StateMergeTxn(benchmark::State& state, Fixture* f, std::string map) {
  int& batch = f->batches[map];
  std::shared_ptr<const MapPlugins> plugins;
  CheckSetup(f->runtime->catalog().Get(map, &plugins));
  std::shared_ptr<MapEnv> shard;
  CheckSetup(f->runtime->OpenShard(map, &shard));
  for (auto _ : state) {
    state.PauseTiming();
    const int number = batch++;
    const std::string zip = WriteBatchZip(f, map, number);
    const std::string dir = g_root + "/txn-" + map + "-" + std::to_string(number);
    std::vector<std::string> maps;
    std::string batch_id;
    CheckSetup(UnzipBatch(zip, dir, UnzipLimits(), &maps, &batch_id));
    fs::remove(zip);
    std::shared_ptr<MapEnv> batch_env;
    CheckSetup(MapEnv::Open(dir + "/" + map, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kSnapshotFlags,
                            &batch_env));
    Txn batch_txn;
    CheckSetup(batch_txn.Begin(batch_env->env(), MDB_RDONLY));
    state.ResumeTiming();

    MapMergeResult result;
    Status s = MergeIntoShard(*plugins, *batch_env, batch_txn.get(), *shard, batch_id, CurrentTimeMs(), &result);

    state.PauseTiming();
    batch_txn.Abort();
    batch_env.reset();
    fs::remove_all(dir);
    state.ResumeTiming();
    if (s.ok() && result.rows_read != f->sizes.batch_rows) {
      s = Status::Internal("merged " + std::to_string(result.rows_read) + " rows of " + map + ", expected " +
                           std::to_string(f->sizes.batch_rows));
    }
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
  CheckShardRows(state, CountRows(shard->env(), shard->data()), f->sizes.shard_rows + batch * f->sizes.batch_rows,
                 map.c_str());
}

// A map's first batch: since issue 11 the node never adopts an uploaded file as the shard, it copies the batch's
// rows into a fresh shard (built in merging/, moved into place). Each iteration merges a batch of batch_rows into
// a new home whose map has no shard yet. The raw baseline builds a new LMDB from the same rows, sorted, with
// MDB_APPEND in one transaction: a bulk load as a user would write it.
void FirstBatchMerge(benchmark::State& state, Fixture* f, std::string map) {
  int batch = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string dir = g_root + "/first-" + std::to_string(batch);
    const std::string scheme = SchemeOf(map);
    fs::create_directories(dir);
    std::unique_ptr<Runtime> runtime =
        OpenBenchRuntime(dir, "[map." + map + "]\ntype = state\nscheme = " + scheme + "\n");
    std::swap(runtime, f->runtime);  // WriteBatchZip writes through the fixture's runtime
    const std::string zip = WriteBatchZip(f, map, batch++);
    std::swap(runtime, f->runtime);
    uint64_t sequence = 0;
    CheckSetup(StagingStore(runtime->home()).Stage(zip, &sequence));
    state.ResumeTiming();

    MergeReport report;
    Status s = MergeProcessor(*runtime).MergePending(&report);

    state.PauseTiming();
    if (s.ok() && report.rows_merged[map] != f->sizes.batch_rows) {
      s = Status::Internal("merged " + std::to_string(report.rows_merged[map]) + " rows of " + map + ", expected " +
                           std::to_string(f->sizes.batch_rows));
    }
    runtime.reset();
    fs::remove_all(dir);
    state.ResumeTiming();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
}

// `layout`: kPlain is the baseline; kLookupTable the floor of a lookup_table map's first batch (its three tables
// each bulk-loaded, the counter once).
void RawBulkLoad(benchmark::State& state, Fixture* f, Layout layout) {
  int batch = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RawTable fresh(layout);  // ids from 0, as in a new shard
    const LayoutRows rows = SortedBatchRows(f->sizes, &fresh, batch);
    const std::string dir = g_root + "/raw-first-" + std::to_string(batch++);
    fs::create_directories(dir);
    state.ResumeTiming();

    Status s = fresh.env.Open(dir, Env::Options());
    Txn txn;
    if (s.ok()) s = txn.Begin(fresh.env.get(), 0);
    if (s.ok()) s = txn.OpenDbi("data", MDB_CREATE, &fresh.dbi);
    if (s.ok() && layout == Layout::kLookupTable) s = txn.OpenDbi("index", MDB_CREATE, &fresh.index_dbi);
    if (s.ok() && layout == Layout::kLookupTable) s = txn.OpenDbi("ids", MDB_CREATE, &fresh.ids_dbi);
    const std::pair<const std::vector<Row>*, MDB_dbi> tables[] = {
        {&rows.data, fresh.dbi}, {&rows.index, fresh.index_dbi}, {&rows.ids, fresh.ids_dbi}};
    for (const auto& [sorted, dbi] : tables) {
      for (size_t r = 0; s.ok() && r < sorted->size(); ++r) {
        s = txn.Put(dbi, Bytes((*sorted)[r].first), Bytes((*sorted)[r].second), MDB_APPEND);
      }
    }
    if (s.ok() && layout == Layout::kLookupTable) s = PutIdCounter(&txn, fresh);
    if (s.ok()) s = txn.Commit();

    state.PauseTiming();
    fresh.env.Close();
    fs::remove_all(dir);
    state.ResumeTiming();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
}

// The extraction MergePending starts with, alone, on a batch zip of `map` like the merged ones.
void UnzipOnly(benchmark::State& state, Fixture* f, std::string map) {
  int batch = 0;
  double zip_mib = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // The same batches as the merges (this one is never merged), so the same zip sizes.
    const std::string zip = WriteBatchZip(f, map, batch);
    zip_mib = MiB(zip);
    const std::string dest = g_root + "/unzip-" + std::to_string(batch++);
    state.ResumeTiming();

    std::vector<std::string> maps;
    UnzipLimits scratch;
    scratch.sync = false;  // as MergePending extracts into merging/
    Status s = UnzipBatch(zip, dest, scratch, &maps);

    state.PauseTiming();
    fs::remove(zip);
    fs::remove_all(dest);
    state.ResumeTiming();
    if (!s.ok() || maps != std::vector<std::string>{map}) {
      state.SkipWithError(s.ok() ? "unzipped batch does not hold exactly the one map" : s.message().c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f->sizes.batch_rows));
  state.counters["zip_MiB"] = zip_mib;
}

void Register(Fixture* f, const std::vector<std::string>& maps) {
  const std::string group = "merge/shard_" + std::to_string(f->sizes.shard_rows) + "_batch_" +
                            std::to_string(f->sizes.batch_rows) + "/";
  auto configure = [](benchmark::internal::Benchmark* b) {
    b->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  configure(benchmark::RegisterBenchmark((group + "raw_lmdb_cursor_put").c_str(), RawInsert, f, &f->raw));
  configure(benchmark::RegisterBenchmark((group + "lmdb_cursor_put_of_hashed_rows").c_str(), RawInsert, f,
                                         &f->raw_hashed_layout));
  if (std::find(maps.begin(), maps.end(), "state_lookup_table") != maps.end()) {
    configure(benchmark::RegisterBenchmark((group + "lmdb_cursor_put_of_lookup_table_rows").c_str(), RawInsert, f,
                                           &f->raw_lookup_table_layout));
  }
  for (const std::string& map : maps) {
    configure(benchmark::RegisterBenchmark((group + RowName(map)).c_str(), StateMerge, f, map));
  }
  for (const std::string& map : maps) {
    configure(
        benchmark::RegisterBenchmark((group + "merge_txn_" + RowName(map)).c_str(), StateMergeTxn, f, TxnMap(map)));
  }
  configure(benchmark::RegisterBenchmark((group + "unzip_only_hashed").c_str(), UnzipOnly, f, maps.front()));

  const std::string first = "merge/first_batch_" + std::to_string(f->sizes.batch_rows) + "/";
  configure(benchmark::RegisterBenchmark((first + "raw_lmdb_bulk_load").c_str(), RawBulkLoad, f, Layout::kPlain));
  if (std::find(maps.begin(), maps.end(), "state_lookup_table") != maps.end()) {
    configure(benchmark::RegisterBenchmark((first + "lmdb_bulk_load_of_lookup_table_rows").c_str(), RawBulkLoad, f,
                                           Layout::kLookupTable));
  }
  for (const std::string& map : maps) {
    configure(benchmark::RegisterBenchmark((first + RowName(map)).c_str(), FirstBatchMerge, f, map));
  }
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  // The allocator policy of the planb process whose path this times (host/common/bulk_buffers.h).
  planb::KeepBulkBuffersInProcess();
  benchmark::Initialize(&argc, argv);
  Fixture fixture;
  fixture.sizes.shard_rows = EnvCount("PLANB_BENCH_SHARD_ROWS", 10000000);
  fixture.sizes.batch_rows = EnvCount("PLANB_BENCH_BATCH_ROWS", 1000000);
  if (fixture.sizes.batch_rows > fixture.sizes.shard_rows) {
    std::fprintf(stderr, "PLANB_BENCH_BATCH_ROWS (%zu) must not exceed PLANB_BENCH_SHARD_ROWS (%zu)\n",
                 fixture.sizes.batch_rows, fixture.sizes.shard_rows);
    return 2;
  }
  const char* compress = std::getenv("PLANB_BENCH_COMPRESS");
  fixture.compress = compress != nullptr && std::string(compress) == "1";
  const char* direct = std::getenv("PLANB_BENCH_DIRECT");
  std::vector<std::string> maps{"state"};
  if (direct == nullptr || std::string(direct) != "0") maps.push_back("state_direct");
  const char* lookup_table = std::getenv("PLANB_BENCH_LOOKUP_TABLE");
  if (lookup_table == nullptr || std::string(lookup_table) != "0") maps.push_back("state_lookup_table");

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/planb-merge-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    return 1;
  }
  g_root = pattern;
  std::atexit(RemoveRoot);

  std::printf("merge bench: shard %zu rows, batch %zu rows, %zu-byte values, batch zips %s, maps:",
              fixture.sizes.shard_rows, fixture.sizes.batch_rows, kValueSize,
              fixture.compress ? "deflated" : "stored");
  for (const std::string& map : maps) std::printf(" %s", map.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "building the raw table and the shards...\n");
  BuildRaw(g_root + "/raw", fixture.sizes, &fixture.raw);
  BuildRaw(g_root + "/raw-hashed-layout", fixture.sizes, &fixture.raw_hashed_layout);
  BuildRaw(g_root + "/raw-lookup-table-layout", fixture.sizes, &fixture.raw_lookup_table_layout);
  std::vector<std::string> all_maps = maps;
  for (const std::string& map : maps) all_maps.push_back(TxnMap(map));
  BuildPlanB(g_root, all_maps, &fixture);
  WarmUp(&fixture, all_maps);

  Register(&fixture, maps);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixture.runtime.reset();
  fixture.raw.env.Close();
  fixture.raw_hashed_layout.env.Close();
  fixture.raw_lookup_table_layout.env.Close();
  return 0;  // RemoveRoot runs at exit
}
