// Upload throughput over loopback: UploadBatch sending one file of PLANB_BENCH_UPLOAD_MB MiB (default 256) of
// incompressible bytes to an UploadReceiver on tcp://127.0.0.1:* in the same process, beside a plain copy of the
// same file (read + write + fsync in the same 1 MiB blocks) in the same run.
//
// What is timed: the whole UploadBatch call (begin, chunks under the default window, commit, status until
// staged). The receiver writes the chunks to receive/, checks size and XXH3 checksum, fsyncs and hands the file
// to a sink that moves it (durably) into accepted/; so both sides end with one fsynced copy of the bytes, and the
// ratio is what the protocol, ZeroMQ and the checksum add to a local copy. Deleting the copies is setup.
// upload_batch_curve does the same to a second receiver with CURVE on (its ZAP handler admitting the client's
// key; keys from libzmq's generator): the ratio between the two is what encryption and authentication cost.
// Both sides run in this process under the allocator policy `planb` sets for itself (host/common/bulk_buffers.h),
// as a loading `planb` and a serving one each do.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "host/common/bulk_buffers.h"
#include "host/common/file_util.h"
#include "host/receiver/upload_receiver.h"
#include "host/security/batch_namespace.h"
#include "host/security/curve_key.h"
#include "host/transfer/upload_client.h"
#include "support/env_count.h"
#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlock = size_t{1} << 20;  // the copy's block and the upload's chunk

std::string g_root;  // removed at exit, also when a setup step exits early

void RemoveRoot() {
  if (g_root.empty()) return;
  std::error_code ec;
  fs::remove_all(g_root, ec);
}

// A real sink, without the storage node's batch verification (the file is not a zip): moves each committed upload
// into `dir` as <sequence>.zip. Accept runs on the receiver's worker thread, the benchmark reads on its own.
class MoveSink : public BatchSink {
 public:
  explicit MoveSink(std::string dir) : dir_(std::move(dir)) {}

  Status Accept(const std::string& zip_path, const std::string& batch_id, const MapScope& scope,
                uint64_t* sequence, std::string* already_merged) override {
    (void)scope;  // plaintext: every map
    already_merged->clear();
    std::lock_guard<std::mutex> lock(mu_);
    *sequence = ++last_sequence_;
    const std::string path = dir_ + "/" + std::to_string(*sequence) + ".zip";
    PLANB_RETURN_IF_ERROR(DurableRename(zip_path, path).WithContext("accepting batch " + batch_id));
    last_path_ = path;
    return Status::Ok();
  }
  MergeState MergeStateOf(uint64_t, std::string*) override { return MergeState::kPending; }

  std::string last_path() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_path_;
  }

 private:
  const std::string dir_;
  std::mutex mu_;
  uint64_t last_sequence_ = 0;
  std::string last_path_;
};

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// `size` bytes from a PRNG, written in blocks: nothing for deflate (or anything else) to shrink.
void WriteRandomFile(const std::string& path, size_t size) {
  std::mt19937_64 rng(42);
  std::vector<uint64_t> block(kBlock / sizeof(uint64_t));
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) CheckSetup(Errno("creating " + path));
  for (size_t written = 0; written < size; written += kBlock) {
    for (uint64_t& word : block) word = rng();
    const size_t n = std::min(kBlock, size - written);
    if (std::fwrite(block.data(), 1, n, out) != n) CheckSetup(Errno("writing " + path));
  }
  if (std::fclose(out) != 0) CheckSetup(Errno("closing " + path));
}

Status CopyFile(const std::string& from, const std::string& to, std::vector<char>* buffer) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Errno("opening " + from);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return Errno("creating " + to);
  }
  Status s;
  for (;;) {
    const ssize_t n = ::read(in, buffer->data(), buffer->size());
    if (n < 0) {
      s = Errno("reading " + from);
      break;
    }
    if (n == 0) break;
    if (::write(out, buffer->data(), n) != n) {
      s = Errno("writing " + to);
      break;
    }
  }
  if (s.ok() && ::fsync(out) != 0) s = Errno("syncing " + to);
  ::close(in);
  if (::close(out) != 0 && s.ok()) s = Errno("closing " + to);
  return s;
}

struct Fixture {
  std::string source;
  size_t size = 0;
  std::string copy_path;
  zmq::context_t* context = nullptr;
  NodeAddress plain;  // the plaintext receiver
  NodeAddress curve;  // the CURVE receiver, with the client's keys
  MoveSink* sink = nullptr;
};

void CheckSize(benchmark::State& state, const std::string& path, size_t expected, const char* what) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size == expected) return;
  const std::string message = std::string(what) + " " + path + ": " +
                              (ec ? ec.message() : std::to_string(size) + " bytes") + ", expected " +
                              std::to_string(expected) + " bytes";
  state.SkipWithError(message.c_str());
}

void RawCopy(benchmark::State& state, Fixture* f) {
  std::vector<char> buffer(kBlock);
  for (auto _ : state) {
    Status s = CopyFile(f->source, f->copy_path, &buffer);
    state.PauseTiming();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    CheckSize(state, f->copy_path, f->size, "copy");
    fs::remove(f->copy_path);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->size));
}

// Every upload of the run gets its own batch id. Google Benchmark calls Upload again for each repetition, and a
// receiver that is handed an id it already holds (same size and checksum) rejoins that upload and sends nothing.
// Under CURVE the id starts with the client key's namespace, as `planb load`'s do (a node refuses others).
int g_next_batch = 0;

void Upload(benchmark::State& state, Fixture* f, const NodeAddress* node) {
  const std::string prefix = node->keys ? BatchNamespace(node->keys->own.public_key) : std::string();
  UploadSettings settings;
  settings.chunk_size = kBlock;
  for (auto _ : state) {
    UploadOutcome outcome;
    Status s = UploadBatch(*f->context, *node, f->source, prefix + "bench/upload-" + std::to_string(g_next_batch++), settings,
                           &outcome);
    state.PauseTiming();
    if (s.ok() && (outcome.bytes_sent != f->size || outcome.attempts != 1)) {
      s = Status::Internal("sent " + std::to_string(outcome.bytes_sent) + " of " + std::to_string(f->size) +
                           " bytes in " + std::to_string(outcome.attempts) + " attempts");
    }
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    const std::string accepted = f->sink->last_path();
    CheckSize(state, accepted, f->size, "accepted upload");
    fs::remove(accepted);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f->size));
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  planb::KeepBulkBuffersInProcess();
  const size_t mb = EnvCount("PLANB_BENCH_UPLOAD_MB", 256);
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/planb-upload-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    return 1;
  }
  g_root = pattern;
  std::atexit(RemoveRoot);

  Fixture fixture;
  fixture.size = static_cast<size_t>(mb) << 20;
  fixture.source = g_root + "/batch.zip";
  fixture.copy_path = g_root + "/copy.zip";
  std::printf("upload bench: %zu MiB of random bytes, 1 MiB blocks/chunks, loopback tcp\n", mb);
  std::fflush(stdout);
  WriteRandomFile(fixture.source, fixture.size);
  CheckSetup(planb::MakeDirectories(g_root + "/accepted"));

  zmq::context_t context;
  zmq::context_t curve_context;  // one ZAP handler per context: the CURVE receiver has its own
  MoveSink sink(g_root + "/accepted");
  std::mutex log_mu;
  std::vector<std::string> log;
  planb::ReceiverSettings settings;
  settings.receive_dir = g_root + "/receive";
  settings.chunk_size = kBlock;
  planb::CurveKeyPair server_keys;
  planb::CurveKeyPair client_keys;
  CheckSetup(planb::GenerateKeyPair(&server_keys));
  CheckSetup(planb::GenerateKeyPair(&client_keys));
  planb::ReceiverSettings curve_settings = settings;
  curve_settings.receive_dir = g_root + "/receive-curve";
  curve_settings.access.server_key = server_keys;
  planb::ClientConfig client;
  client.name = "bench";
  client.public_keys = {client_keys.public_key};
  client.rights = static_cast<uint32_t>(planb::Right::kUpload);
  curve_settings.access.clients.emplace(client.name, client);
  planb::Status run_status;
  planb::Status curve_run_status;
  {
    auto log_line = [&](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu);
      log.push_back(line);
    };
    planb::UploadReceiver receiver(context, settings, sink, log_line);
    planb::UploadReceiver curve_receiver(curve_context, curve_settings, sink, log_line);
    fixture.plain.node_name = "bench";
    fixture.curve = {"bench-curve", "", planb::CurveClientKeys{server_keys.public_key, client_keys}};
    CheckSetup(receiver.Bind("tcp://127.0.0.1:*", &fixture.plain.endpoint));
    CheckSetup(curve_receiver.Bind("tcp://127.0.0.1:*", &fixture.curve.endpoint));
    std::atomic<bool> stop{false};
    std::thread runner([&] { run_status = receiver.Run(stop); });
    std::thread curve_runner([&] { curve_run_status = curve_receiver.Run(stop); });
    fixture.context = &context;
    fixture.sink = &sink;

    const std::string group = "upload_" + std::to_string(mb) + "MiB/";
    for (auto* b : {benchmark::RegisterBenchmark((group + "raw_file_copy").c_str(), RawCopy, &fixture),
                    benchmark::RegisterBenchmark((group + "upload_batch_loopback").c_str(), Upload, &fixture,
                                                 &fixture.plain),
                    benchmark::RegisterBenchmark((group + "upload_batch_curve").c_str(), Upload, &fixture,
                                                 &fixture.curve)}) {
      b->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    stop = true;
    runner.join();
    curve_runner.join();
  }
  if (!run_status.ok() || !curve_run_status.ok()) {
    std::fprintf(stderr, "receiver failed: %s%s\n", run_status.message().c_str(), curve_run_status.message().c_str());
    for (const std::string& line : log) std::fprintf(stderr, "  %s\n", line.c_str());
    return 1;
  }
  return 0;  // RemoveRoot runs at exit
}
