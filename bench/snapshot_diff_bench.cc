// Snapshot diffs: a reader holding a snapshot of a 1M-row map refreshes it after 1% of the rows changed on the
// storage node (one batch overwriting 10,000 keys), by the diff (SNAPSHOT_SINCE: the batch since its snapshot,
// verified in a child process and merged into a copy of the snapshot held) beside the whole snapshot (SNAPSHOT:
// the node's copy downloaded, unzipped, verified in a child process), in the same run. Each timed refresh is what
// SnapshotManager::Refresh does, from asking the node to the new snapshot installed; a fresh reader home holding
// the old snapshot is set up (untimed) before each. The node serves in this process over tcp://127.0.0.1:*; its
// zips (whole and diff) are made by the first refresh and reused after, as for many readers.
//
//   snapshot_diff/refresh/raw_whole_snapshot   the baseline: the whole snapshot
//   snapshot_diff/refresh/diff                 the diff; counter bytes_share = its bytes / the whole zip's bytes
//   snapshot_diff/refresh/lmdb_copy_and_put_floor
//                                              what any diff applied to a copy costs at least, without Plan B: a
//                                              plain LMDB database of the same pairs (text keys) copied as the
//                                              diff's apply copies (copy_file_range), the changed pairs put into
//                                              the copy in key order in one transaction, committed, not synced
// PLANB_BENCH_SNAPSHOT_ROWS (default 1000000) rows in a state map (hashed scheme); 1% of them change.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "host/common/bulk_buffers.h"
#include "host/common/file_copy.h"
#include "host/snapshot/snapshot_manager.h"
#include "planb/lmdb.h"
#include "host/snapshot/snapshot_fetcher.h"
#include "support/bench_data.h"
#include "support/env_count.h"
#include "support/plain_lmdb.h"
#include "support/ratio_reporter.h"
#include "support/serving_node.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kMap[] = "city";
constexpr char kMapSection[] = "\n[map.city]\ntype = state\nscheme = hashed\n";

std::string g_root;  // MakeBenchRoot: removed at exit

struct Fixture {
  std::unique_ptr<Runtime> node_runtime;
  std::unique_ptr<ServingNode> node;
  std::string reader_config;
  std::string held_snapshot;  // a snapshot directory at the version before the change
  ContentVersion held_version;
  uint64_t whole_bytes = 0;
  uint64_t diff_bytes = 0;
  std::string plain;   // the plain LMDB database of the rows before the change
  KeyValues changed;   // the pairs the change put, in key order
};

// A reader home holding only the old snapshot, and its runtime and manager.
struct Reader {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<SnapshotManager> manager;
};

void OpenReader(Fixture* f, Reader* reader) {
  reader->manager.reset();
  reader->runtime.reset();
  const std::string home = g_root + "/reader-home";
  fs::remove_all(home);
  const std::string target = home + "/snapshots/" + kMap + "/1000000000000";
  fs::create_directories(target);
  fs::copy_file(f->held_snapshot + "/data.mdb", target + "/data.mdb");
  RuntimeOptions options;
  options.config_path = f->reader_config;
  options.home = home;
  CheckSetup(Runtime::Open(options, &reader->runtime));
  reader->manager = std::make_unique<SnapshotManager>(reader->runtime->home(), reader->runtime->config().cluster,
                                                      reader->runtime->catalog(), f->node->context());
}

// One refresh per iteration from the old snapshot: by the diff, or (accept_older, which never asks for a diff)
// by the whole snapshot.
void Refresh(benchmark::State& state, Fixture* f, bool whole) {
  Reader reader;
  for (auto _ : state) {
    state.PauseTiming();
    OpenReader(f, &reader);
    state.ResumeTiming();
    bool changed = false;
    const Status s = reader.manager->Refresh(kMap, &changed, /*accept_older=*/whole);
    if (!s.ok() || !changed) {
      state.SkipWithError(s.ok() ? "nothing new was installed" : s.message().c_str());
      break;
    }
  }
  if (!whole) state.counters["bytes_share"] = static_cast<double>(f->diff_bytes) / static_cast<double>(f->whole_bytes);
  state.counters["bytes"] = static_cast<double>(whole ? f->whole_bytes : f->diff_bytes);
}

// The floor: the same change applied to a copy of a plain LMDB database, by hand. The copy is removed untimed.
void CopyAndPutFloor(benchmark::State& state, Fixture* f) {
  const std::string copy = g_root + "/plain-copy.mdb";
  for (auto _ : state) {
    CheckSetup(CopyFileTo(f->plain, copy));
    Env::Options options;
    options.flags = MDB_NOSUBDIR | MDB_NOSYNC;
    options.map_size = fs::file_size(f->plain) * 2;
    Env env;
    CheckSetup(env.Open(copy, options));
    Txn txn;
    CheckSetup(txn.Begin(env.get(), 0));
    MDB_dbi dbi = 0;
    CheckSetup(txn.OpenDbi(nullptr, 0, &dbi));
    for (const auto& [k, v] : f->changed) {
      MDB_val key{k.size(), const_cast<char*>(k.data())};
      MDB_val value{v.size(), const_cast<char*>(v.data())};
      const int rc = mdb_put(txn.get(), dbi, &key, &value, 0);
      if (rc != MDB_SUCCESS) CheckSetup(Status::IOError(copy + ": " + mdb_strerror(rc)));
    }
    CheckSetup(txn.Commit());
    state.PauseTiming();
    env = Env();
    fs::remove(copy);
    fs::remove(copy + "-lock");
    state.ResumeTiming();
  }
}

// The bytes a refresh downloads, each way (the node's zips are made here, and reused by the timed refreshes).
void MeasureBytes(Fixture* f) {
  for (const bool whole : {true, false}) {
    const std::string zip = g_root + (whole ? "/whole.zip" : "/diff.zip");
    FetchOutcome outcome;
    std::optional<SnapshotSince> since;
    if (!whole) since = SnapshotSince{f->held_version, std::nullopt};
    CheckSetup(FetchSnapshot(f->node->context(), f->node->client(), kMap, f->held_version, zip, &outcome, {}, {},
                             /*accept_older=*/whole, since));
    if (outcome.diff == whole) CheckSetup(Status::Internal(whole ? "a diff was offered" : "no diff was offered"));
    (whole ? f->whole_bytes : f->diff_bytes) = outcome.bytes;
    fs::remove(zip);
  }
}

void Setup(Fixture* f, size_t rows) {
  // A storage node of a node_list of one: it keeps merged batches (batch_retention), which diffs are made of.
  f->node_runtime = OpenBenchRuntime(
      g_root, "node_name = node1\nnode_list = ,node1\n\n[node.node1]\nendpoint = tcp://127.0.0.1:1\n" +
                  std::string(kMapSection));
  const KeyValues data = SyntheticKeyValues(rows);
  LoadKeyValues(f->node_runtime.get(), kMap, data);
  f->node = std::make_unique<ServingNode>(*f->node_runtime);
  f->reader_config = f->node->WriteClientConfig(g_root, kMapSection);
  // The reader's snapshot before the change: fetched once, kept as the template of every timed refresh.
  {
    Reader reader;
    RuntimeOptions options;
    options.config_path = f->reader_config;
    options.home = g_root + "/first-home";
    CheckSetup(Runtime::Open(options, &reader.runtime));
    reader.manager = std::make_unique<SnapshotManager>(reader.runtime->home(), reader.runtime->config().cluster,
                                                       reader.runtime->catalog(), f->node->context());
    std::shared_ptr<const OpenSnapshot> snapshot;
    CheckSetup(reader.manager->Current(kMap, StaleSnapshot::kFetchNow, &snapshot));
    f->held_snapshot = snapshot->path();
    f->held_version = snapshot->version();
  }
  // 1% of the keys get new values, in one batch.
  const size_t count = std::max<size_t>(1, rows / 100);
  KeyValues changed;
  for (size_t i = 0; i < count; ++i) {
    const auto& [key, value] = data[i * (rows / count)];
    changed.emplace_back(key, value + "-changed");
  }
  LoadKeyValues(f->node_runtime.get(), kMap, changed);
  MeasureBytes(f);
  f->plain = g_root + "/plain.mdb";
  WritePlainLmdb(f->plain, data);
  std::sort(changed.begin(), changed.end());
  f->changed = std::move(changed);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  // The allocator policy of the planb process whose path this times (host/common/bulk_buffers.h).
  planb::KeepBulkBuffersInProcess();
  benchmark::Initialize(&argc, argv);
  const size_t rows = EnvCount("PLANB_BENCH_SNAPSHOT_ROWS", 1000000);
  g_root = MakeBenchRoot("snapshot-diff-bench");
  Fixture f;
  Setup(&f, rows);
  std::printf("snapshot diff bench: %zu rows, 1%% changed; whole snapshot %.1f MB, diff %.2f MB (%.2f%%)\n", rows,
              static_cast<double>(f.whole_bytes) / 1e6, static_cast<double>(f.diff_bytes) / 1e6,
              100.0 * static_cast<double>(f.diff_bytes) / static_cast<double>(f.whole_bytes));
  benchmark::RegisterBenchmark("snapshot_diff/refresh/raw_whole_snapshot", Refresh, &f, true)->UseRealTime();
  benchmark::RegisterBenchmark("snapshot_diff/refresh/diff", Refresh, &f, false)->UseRealTime();
  benchmark::RegisterBenchmark("snapshot_diff/refresh/lmdb_copy_and_put_floor", CopyAndPutFloor, &f)->UseRealTime();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  f.node.reset();
  benchmark::Shutdown();
  return 0;
}
