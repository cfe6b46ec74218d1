// Remote lookups (`planb lookup --remote`, protocol READ) over loopback, single keys and batches, beside the same
// lookup command run in this process on the node's runtime (what the node executes per request) in the same run.
//
// The node is a real StorageNode (its ExecuteRead runs the lookup command, exactly as `planb serve` does) behind a
// real UploadReceiver on tcp://127.0.0.1:*; the client is RemoteRead, as the CLI uses it. So the ratio is what
// ZeroMQ, the protocol, the read worker's hand-off and one fresh DEALER connection per request add to the command;
// `remote_curve` asks a second node over CURVE (one handshake per request, as each CLI call makes); the
// `*_kept_open` rows send the same READs through one RemoteReader, whose connection outlives the requests; the
// `reader_remote*` rows are planb::Reader in remote mode (its pool keeps the connection), as a program calls it.
// `zmq_echo_floor` is the transport alone (a ZeroMQ echo, no protocol, no lookup): what no READ can go below.
// The baseline is Redis, the peer a user would pick for remote lookups (support/redis_peer.h): a redis-server the
// bench starts on a free loopback port, holding the same key -> value pairs, asked with GET for one key and MGET
// for a batch over one hiredis connection kept open (as a Redis client does). Without redis-server, the in-process
// command is the baseline and the Redis rows are listed as skipped.
// PLANB_BENCH_REMOTE_KEYS (default 100000) keys in a state map (hashed scheme); batches of 1000 keys.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "host/commands/command_line.h"
#include "host/cli/commands.h"
#include "host/transfer/remote_read.h"
#include "planb/reader.h"
#include "support/bench_data.h"
#include "support/ratio_reporter.h"
#include "support/redis_peer.h"
#include "support/serving_node.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBatch = 1000;
std::string g_root;  // MakeBenchRoot: removed at exit

struct Fixture {
  std::unique_ptr<Runtime> runtime;  // the node's (a single node: it stores and serves its own shard)
  std::vector<std::string> keys;     // loaded keys, shuffled
  std::unique_ptr<ServingNode> node;
  std::unique_ptr<ServingNode> curve_node;  // the same runtime, served over CURVE
  std::unique_ptr<RedisPeer> redis;         // null when redis-server could not be started
};

// `lookup city KEY...` as tokens.
std::vector<std::string> LookupKeys(const std::vector<std::string>& keys, size_t first, size_t count) {
  std::vector<std::string> some;
  for (size_t i = 0; i < count; ++i) some.push_back(keys[(first + i) % keys.size()]);
  return some;
}

// The READ `planb lookup --remote` would send, but in text (the command's own output, checked line by line).
protocol::ReadRequest LookupRead(const std::vector<std::string>& keys, size_t first, size_t count) {
  protocol::ReadRequest request;
  request.kind = protocol::ReadKind::kLookup;
  request.map = "city";
  request.format = protocol::ReadFormat::kText;
  request.keys = LookupKeys(keys, first, count);
  return request;
}

// Checks a command's answer: exit 0 and one line per key.
void CheckAnswer(benchmark::State& state, int exit_code, const std::string& out, const std::string& err,
                 size_t keys) {
  size_t lines = 0;
  for (char c : out) lines += c == '\n';
  if (exit_code != 0 || lines != keys) {
    state.SkipWithError(("lookup failed: exit " + std::to_string(exit_code) + ", " + std::to_string(lines) +
                         " lines for " + std::to_string(keys) + " keys: " + err)
                            .c_str());
  }
}

void InProcess(benchmark::State& state, Fixture* f, size_t batch) {
  size_t next = 0;
  for (auto _ : state) {
    std::vector<std::string> args = LookupKeys(f->keys, next, batch);
    args.insert(args.begin(), {"lookup", "city"});
    CommandLine cli;
    CheckSetup(ParseCommandLine(args, &cli));
    std::ostringstream out, err;
    const int exit_code = RunLookupCommand(*f->runtime, cli, out, err);
    CheckAnswer(state, exit_code, out.str(), err.str(), batch);
    next += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}

// READs as `planb lookup --remote` sends them: with `kept_open`, through one RemoteReader for the whole run (its
// connection, and CURVE handshake, made by the first request and kept, as a Redis client keeps its own); else
// through RemoteRead, a new connection per call, as one CLI call makes.
void Remote(benchmark::State& state, Fixture* f, size_t batch, bool curve, bool kept_open) {
  ServingNode& serving = curve ? *f->curve_node : *f->node;
  RemoteReader kept(serving.context(), serving.client());
  size_t next = 0;
  for (auto _ : state) {
    int exit_code = 2;
    std::string out, err, node;
    const protocol::ReadRequest request = LookupRead(f->keys, next, batch);
    const Status s = kept_open ? kept.Read(request, &exit_code, &out, &err, &node)
                               : RemoteRead(serving.context(), serving.client(), request, &exit_code, &out, &err,
                                            &node);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    CheckAnswer(state, exit_code, out, err, batch);
    next += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}

// planb::Reader in remote mode (ReaderOptions::remote): what an event processor calls. Its pool's connection is
// made by Prepare, before the timing; each Lookup or LookupMany is then one READ (format answers) and its
// decoding into results.
void ReaderRemote(benchmark::State& state, Fixture* f, size_t batch, bool curve) {
  ServingNode& serving = curve ? *f->curve_node : *f->node;
  ReaderOptions options;
  options.config_path = serving.WriteClientConfig(g_root, "[map.city]\ntype = state\nscheme = hashed\n");
  options.home = g_root + "/reader-home";
  options.maintenance_interval_ms = 0;
  options.remote = true;
  std::unique_ptr<Reader> reader;
  CheckSetup(Reader::Open(options, &reader));
  CheckSetup(reader->Prepare("city"));
  std::vector<ReaderKey> keys(batch);
  std::vector<LookupResult> results(batch);
  size_t next = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < batch; ++i) keys[i].key = f->keys[(next + i) % f->keys.size()];
    const Code code = batch == 1 ? (results[0] = reader->Lookup("city", keys[0].key)).code
                                 : reader->LookupMany("city", keys.data(), batch, results.data());
    if (code != Code::kOk || results[batch - 1].code != Code::kOk) {
      state.SkipWithError(("Reader lookup failed: " + std::string(results[batch - 1].error)).c_str());
      break;
    }
    next += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  state.counters["connections"] = static_cast<double>(reader->Stats().remote_connections);
}

// The transport's floor: a ZeroMQ DEALER asking a ROUTER that echoes on a thread of its own, over TCP loopback,
// one message each way of a READ's size and nothing else (no protocol, no lookup). What any READ costs at least;
// each way crosses two ZeroMQ I/O threads, where a Redis client and server read and write their sockets
// directly.
void ZmqEchoFloor(benchmark::State& state, size_t batch) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::thread echo([&router] {
    for (;;) {
      zmq::message_t id, body;
      if (!router.recv(id) || !router.recv(body)) return;
      if (body.size() == 0) return;  // the end
      router.send(id, zmq::send_flags::sndmore);
      router.send(body, zmq::send_flags::none);
    }
  });
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.connect(endpoint);
  const std::string request(batch == 1 ? 40 : 40 * batch, 'k');  // about a READ of `batch` keys
  for (auto _ : state) {
    dealer.send(zmq::buffer(request), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer.recv(reply) || reply.size() != request.size()) {
      state.SkipWithError("the echo did not come back");
      break;
    }
  }
  dealer.send(zmq::message_t(), zmq::send_flags::none);
  echo.join();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}

void Redis(benchmark::State& state, Fixture* f, size_t batch) {
  size_t next = 0;
  for (auto _ : state) {
    const bool ok = batch == 1 ? f->redis->Get(f->keys[next % f->keys.size()]) : f->redis->MGet(f->keys, next, batch);
    if (!ok) {
      state.SkipWithError("redis-server did not answer every key with a value");
      break;
    }
    next += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}

void Setup(Fixture* f, size_t count) {
  const KeyValues data = SyntheticKeyValues(count);
  auto redis = std::make_unique<RedisPeer>();
  std::string why;
  if (redis->Start(g_root, &why) && redis->Load(data, &why)) {
    f->redis = std::move(redis);
  } else {
    NoteSkipped("remote_lookup/*/raw_redis_*", why);
  }
  f->runtime = LoadStateMap(g_root, "city", data);
  for (const auto& kv : data) f->keys.push_back(kv.first);
  std::shuffle(f->keys.begin(), f->keys.end(), std::mt19937_64(42));

  f->node = std::make_unique<ServingNode>(*f->runtime);
  f->curve_node = std::make_unique<ServingNode>(*f->runtime, true);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const char* env_keys = std::getenv("PLANB_BENCH_REMOTE_KEYS");
  const size_t count = env_keys != nullptr ? std::strtoull(env_keys, nullptr, 10) : 100000;
  g_root = MakeBenchRoot("remote-bench");
  std::printf("remote lookup bench: %zu keys in a state map (hashed), batches of %zu\n", count, kBatch);
  Fixture f;
  Setup(&f, count);
  // Redis is the baseline ("raw") when it runs; else the in-process command is.
  const std::string in_process = f.redis != nullptr ? "in_process_command" : "raw_in_process_command";
  for (const auto& [group, batch] : {std::pair{"single", size_t{1}}, std::pair{"batch_1000", kBatch}}) {
    const std::string prefix = std::string("remote_lookup/") + group + "/";
    if (f.redis != nullptr) {
      benchmark::RegisterBenchmark((prefix + (batch == 1 ? "raw_redis_get" : "raw_redis_mget")).c_str(), Redis, &f,
                                   batch)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark((prefix + in_process).c_str(), InProcess, &f, batch)->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "zmq_echo_floor").c_str(), ZmqEchoFloor, batch)->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "remote").c_str(), Remote, &f, batch, false, false)->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "remote_curve").c_str(), Remote, &f, batch, true, false)->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "remote_kept_open").c_str(), Remote, &f, batch, false, true)
        ->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "remote_curve_kept_open").c_str(), Remote, &f, batch, true, true)
        ->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "reader_remote").c_str(), ReaderRemote, &f, batch, false)->UseRealTime();
    benchmark::RegisterBenchmark((prefix + "reader_remote_curve").c_str(), ReaderRemote, &f, batch, true)
        ->UseRealTime();
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  f.curve_node.reset();
  f.node.reset();
  f.redis.reset();
  benchmark::Shutdown();
  return 0;
}
