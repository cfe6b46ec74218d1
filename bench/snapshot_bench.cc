// Snapshot transfer: FetchSnapshot pulling a shard's snapshot zip from a storage node serving in this process
// (tcp://127.0.0.1:*), beside a plain copy of the shard's data.mdb (read + write + fsync in 1 MiB blocks), in the
// same run. Throughput is reported against the shard's data.mdb size (bytes/s in the output), so the ratio is what
// the snapshot path costs per byte of state compared with copying the file.
//
//   snapshot/transfer/fetch          the node's zip already made (it is reused while the shard is unchanged, as
//                                    for many readers): SNAPSHOT, FETCH chunks, checksum, fsync of the zip
//   snapshot/prepare/copy_and_zip    the node's side alone, as it makes snapshots by default: LMDB's plain copy
//                                    of the shard (compacting only when a tenth of its pages are free) streamed
//                                    through a pipe into a zip of stored entries (not synced: a cache), its version
//   snapshot/prepare/copy_and_zip_deflate             the same with snapshot_compression = deflate
//   snapshot/prepare/compacting_copy_and_zip(_deflate) LMDB's compacting copy whatever the free pages
//   snapshot/*/raw_file_copy         the baseline
// PLANB_BENCH_SNAPSHOT_ROWS (default 1000000) rows in a state map (hashed scheme).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "host/common/bulk_buffers.h"
#include "host/serve/snapshot_source.h"
#include "host/snapshot/snapshot_fetcher.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/serving_node.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

std::string g_root;  // MakeBenchRoot: removed at exit

struct Fixture {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<ServingNode> node;
  std::string shard_file;
  uint64_t shard_bytes = 0;
};

// read + write + fsync in 1 MiB blocks: what copying the state by hand costs.
void CopyFile(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) CheckSetup(Status::IOError("opening " + from + " or " + to));
  std::vector<char> block(size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(in, block.data(), block.size());
    if (n < 0) CheckSetup(Status::IOError("reading " + from));
    if (n == 0) break;
    if (::write(out, block.data(), static_cast<size_t>(n)) != n) CheckSetup(Status::IOError("writing " + to));
  }
  if (::fsync(out) != 0) CheckSetup(Status::IOError("syncing " + to));
  ::close(in);
  ::close(out);
}

void RawFileCopy(benchmark::State& state, Fixture* f) {
  const std::string to = g_root + "/copy.mdb";
  for (auto _ : state) {
    CopyFile(f->shard_file, to);
    state.PauseTiming();
    fs::remove(to);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->shard_bytes));
}

void Fetch(benchmark::State& state, Fixture* f) {
  const std::string zip = g_root + "/fetched.zip";
  for (auto _ : state) {
    FetchOutcome outcome;
    Status s = FetchSnapshot(f->node->context(), f->node->client(), "city", ContentVersion(), zip, &outcome);
    if (!s.ok() || outcome.not_modified || outcome.bytes == 0) {
      state.SkipWithError(s.ok() ? "the node offered nothing" : s.message().c_str());
      break;
    }
    state.PauseTiming();
    fs::remove(zip);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->shard_bytes));
}

struct PrepareArgs {
  Fixture* fixture;
  SnapshotMaking making;
};

void Prepare(benchmark::State& state, PrepareArgs args) {
  Fixture* f = args.fixture;
  uint64_t zip_bytes = 0;
  for (auto _ : state) {
    SnapshotSource source(*f->runtime, args.making);  // a fresh one each time: no zip to reuse
    PreparedSnapshot prepared;
    Status s = source.Prepare("city", ContentVersion(), &prepared);
    if (!s.ok() || prepared.not_modified) {
      state.SkipWithError(s.ok() ? "not modified" : s.message().c_str());
      break;
    }
    state.PauseTiming();
    zip_bytes = prepared.size;
    fs::remove(prepared.zip_path);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->shard_bytes));
  // What a reader then downloads, as a share of the shard file.
  state.counters["zip_share"] = static_cast<double>(zip_bytes) / static_cast<double>(f->shard_bytes);
}

void Setup(Fixture* f, size_t rows) {
  const KeyValues data = SyntheticKeyValues(rows);
  f->runtime = LoadStateMap(g_root, "city", data);
  f->shard_file = f->runtime->home().ShardPath("city") + "/data.mdb";
  f->shard_bytes = fs::file_size(f->shard_file);
  f->node = std::make_unique<ServingNode>(*f->runtime);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  // The allocator policy of the planb process whose path this times (host/common/bulk_buffers.h).
  planb::KeepBulkBuffersInProcess();
  benchmark::Initialize(&argc, argv);
  const char* env_rows = std::getenv("PLANB_BENCH_SNAPSHOT_ROWS");
  const size_t rows = env_rows != nullptr ? std::strtoull(env_rows, nullptr, 10) : 1000000;
  g_root = MakeBenchRoot("snapshot-bench");
  Fixture f;
  Setup(&f, rows);
  std::printf("snapshot bench: %zu rows, shard data.mdb %.1f MB\n", rows, static_cast<double>(f.shard_bytes) / 1e6);
  for (const char* group : {"snapshot/transfer/", "snapshot/prepare/"}) {
    benchmark::RegisterBenchmark((std::string(group) + "raw_file_copy").c_str(), RawFileCopy, &f)->UseRealTime();
  }
  benchmark::RegisterBenchmark("snapshot/transfer/fetch", Fetch, &f)->UseRealTime();
  const std::pair<const char*, planb::SnapshotMaking> makings[] = {
      {"snapshot/prepare/copy_and_zip", {}},  // the node's default
      {"snapshot/prepare/copy_and_zip_deflate", {true}},
      {"snapshot/prepare/compacting_copy_and_zip", {false, 0.0}},
      {"snapshot/prepare/compacting_copy_and_zip_deflate", {true, 0.0}},
  };
  for (const auto& [name, making] : makings) {
    benchmark::RegisterBenchmark(name, Prepare, PrepareArgs{&f, making})->UseRealTime();
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  f.node.reset();
  benchmark::Shutdown();
  return 0;
}
