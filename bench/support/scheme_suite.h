// Scheme suites: one data set of one store type loaded under every key scheme the plugin registry holds (with
// value_dedup off and, where the scheme declares it, on), through the real path (StreamWriter -> staging ->
// MergeProcessor), and the load and merge benchmarks every suite runs beside raw LMDB on the same rows.
// Setup allocates freely; the timed parts are said at each function. Not thread-safe.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/runtime.h"
#include "host/storage/map_reader.h"
#include "planb/lmdb.h"
#include "planb/store.h"

namespace planb::bench {

struct SchemeVariant {
  std::string scheme;        // the key-scheme plugin's name
  bool value_dedup = false;  // set only where the scheme declares the option
  std::string label;         // map name and benchmark row: "hashed", "hashed_dedup"
};

// Every registered key scheme (the plugins a Runtime loads) that can serve store type `type`,
// as listed by a runtime without maps opened in `dir`.
std::vector<SchemeVariant> SchemeVariants(const std::string& dir, const std::string& type);

// One data set as the suites write it. Row i is given as a Record (its views point into the caller's data, which
// must outlive every use) and as the raw baseline's LMDB key and value.
struct SuiteRows {
  std::string name;  // the fixture's part of benchmark names, e.g. "synthetic_100000"; must not contain "raw"
  std::string type;  // store type, e.g. "state"
  size_t count = 0;
  std::function<void(size_t i, Record* record)> record;
  std::function<void(size_t i, std::string* key, std::string* value)> raw;
};

// What a data set takes per row in an LMDB environment, two ways (-1: not measured):
//   disk: data.mdb's size over the rows, free pages included (a shard built by several merges keeps the pages
//         its earlier versions used until later writes reuse them);
//   tree: the branch, leaf and overflow pages of every table (and of the table of tables) over the rows: what
//         the layout itself occupies, whatever the history.
struct RowBytes {
  double disk = -1;
  double tree = -1;
};

// Both measures of `env` (open, no write transaction in progress), whose directory is `env_dir`, holding `rows`
// rows. Begins and ends a read transaction of its own (envs here are MDB_NOTLS).
RowBytes MeasureRowBytes(MDB_env* env, const std::string& env_dir, size_t rows);

// Sets the counters bytes_per_row (disk) and tree_bytes_per_row (tree) of a benchmark row, those measured.
void SetRowBytes(benchmark::State& state, const RowBytes& bytes);

// Every variant's shard of one data set, in one runtime, and a reader on each.
struct SchemeShards {
  std::string type;  // the store type
  std::unique_ptr<Runtime> runtime;
  std::vector<SchemeVariant> variants;                          // loaded, in registry order
  std::vector<std::unique_ptr<MapReader>> readers;              // one per loaded variant
  std::vector<RowBytes> row_bytes;                              // one per loaded variant
  std::vector<std::pair<SchemeVariant, std::string>> refused;  // variants whose scheme refused a row, and why
};

// Builds the shards in `dir`: the rows in two streams (even rows, then odd ones) so that keys are both written and
// merged. A variant whose scheme refuses a row (kInvalidArgument: a key too long for direct) goes to `refused`
// with the scheme's message; any other failure exits.
void BuildSchemeShards(const std::string& dir, const SuiteRows& rows, SchemeShards* out);

// The raw baseline's table: rows.raw of every row put into a new LMDB in `dir` (created), table "data", in one
// write transaction. `env` stays open for lookups.
void BuildRawTable(const std::string& dir, const SuiteRows& rows, Env* env, MDB_dbi* dbi);

// Seconds each lookup benchmark runs at least: $PLANB_BENCH_MIN_TIME, default 0.1 (enough for ~150 ns lookups;
// keeps a suite's default run near two minutes). Pass to Benchmark::MinTime.
double LookupMinTime();

// Registers, for `rows` (which must outlive the run):
//   load/<name>/raw_lmdb_put     puts of every row (rows.raw) into a new LMDB in one write transaction + commit.
//   load/<name>/<type>_<label>   StreamWriter::Add of every row to a new batch for the map + Finish (commit, sync):
//                                writing a batch, as `planb load` does before zipping it.
//   merge/<name>/raw_lmdb_put    one write transaction of mdb_cursor_put of a batch's rows, in memory and sorted
//                                by key (as a batch file holds them), into a table already holding the other rows
//                                (+ commit). That table is bulk-loaded in key order with MDB_APPEND, as the
//                                shard it is compared with is: a first batch merged into an empty shard is
//                                appended too, so both start with full pages.
//   merge/<name>/<type>_<label>  MergeProcessor::MergePending of that batch, staged as a zip, into a shard already
//                                holding the other rows (extract, merge, commit, unstage).
//   merge_txn/<name>/...         the same two, the Plan B side timing the merge's write transaction alone
//                                (MergeIntoShard on the batch extracted and open in setup): what the scheme and
//                                store cost, without the per-batch bookkeeping (extracting, attempts, unstaging).
//   merge_update_txn/<name>/...  as merge_txn, but each batch updates rows the shard holds (their keys, each
//                                value with "~~" appended; rows without a value are written again as they are):
//                                reference data refreshed, where a scheme's key tables gain nothing.
// The batches are rows i with i % 10 == 0, 1, 2 (three iterations, one batch each: 10% of the rows; updates:
// i % 10 == 3, 4, 5), the shard the other 70% (i % 10 >= 3); both are rebuilt untimed at each repetition. Times
// are manual (setup excluded). Variants in `shards.refused` are reported as skipped. Temporary files go under
// `root`.
void RegisterLoadAndMerge(const SuiteRows* rows, const SchemeShards* shards, const std::string& root);

// A floor beside those groups: merge_txn/<name>/<label> and merge_update_txn/<name>/<label>, raw's merges of the
// same rows written in another layout (`layout_rows`, the same rows as the groups' with `raw` giving a scheme's
// LMDB key and value; the value must end with the row's value, where updates append "~~"). What that layout
// alone costs a raw LMDB writer, so that a scheme's merge can be told from its layout's.
void RegisterRawMergeFloor(const SuiteRows* layout_rows, const std::string& label, const std::string& root);

// A layout written by hand into several tables of one environment, for floors that a single table of key and
// value cannot give (a scheme with tables of its own). Rows are given by their index in the SuiteRows.
struct LayoutWriter {
  std::vector<std::string> tables;  // created in this order; `dbis` below follow it
  // Writes the rows a shard holds (untimed), in a write transaction it commits itself.
  std::function<void(MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& rows)> build;
  // Puts a batch's rows in the order a batch file would give them (untimed).
  std::function<void(std::vector<size_t>* rows)> order;
  // Merges the batch (timed, with the commit that follows).
  std::function<void(MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& rows)> merge;
  // How many keys of `rows` do not read back with their last value through the layout's reader (the one whose
  // lookups are checked against a Plan B shard): asked after the build and after each merge, untimed, so that a
  // floor cannot be fast by writing something else.
  std::function<size_t(MDB_txn* txn, const std::vector<MDB_dbi>& dbis, const std::vector<size_t>& rows)> wrong_reads;
};

// For LayoutWriter::wrong_reads: how many keys of `rows` (of `suite`, State rows) `get(key, &value)` does not
// find with the value of their last row.
template <typename Get>
size_t WrongReads(const SuiteRows& suite, const std::vector<size_t>& rows, Get get) {
  std::unordered_map<std::string, std::string> last;
  Record record;
  for (const size_t i : rows) {
    suite.record(i, &record);
    last[std::string(record.key.view())] = std::string(record.value.view());
  }
  size_t wrong = 0;
  for (const auto& [key, value] : last) {
    Bytes got;
    if (!get(std::string_view(key), &got) || got.view() != value) {
      ++wrong;
    }
  }
  return wrong;
}

// merge_txn/<name>/<label>: `writer`'s merges of the new-key batches of the merge_txn group (the same rows, the
// same shard rows) into a fresh environment it built: the floor of a scheme whose layout spans tables.
void RegisterLayoutMergeFloor(const SuiteRows* rows, const std::string& label, const LayoutWriter* writer,
                              const std::string& root);

// Reports every refused variant of `shards` as skipped in the ratio table, for each of `groups`
// ("lookup_hit/<name>", ...).
void ReportRefused(const SchemeShards& shards, const std::vector<std::string>& groups);

}  // namespace planb::bench
