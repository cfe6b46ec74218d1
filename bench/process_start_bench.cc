// `planb lookup` as a process beside the least a program can do to answer the same kind of question: each
// iteration starts a process (posix_spawn), which answers one key from a shard of 1,000 State rows (hashed
// scheme), and waits for it. Output goes to /dev/null; a non-zero exit is an error, not a fast result.
//   raw_minimal_c   bench/support/minimal_lmdb_get.c: opens the environment, reads a key by its LMDB bytes
//                   (the baseline)
//   minimal_cxx_floor  the same program built as C++ (bench/support/minimal_lmdb_get_cxx.cc): the floor of any
//                   program linked with libstdc++, as planb and its plugins are
//   planb_lookup    planb --config C lookup st KEY: reads the config, loads the plugins, opens the home and the
//                   shard, looks the key up through the store type and prints the answer
// The ratio is what a shell script or a cron job pays per `planb lookup` over a purpose-built C program.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <lmdb.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support/ratio_reporter.h"
#include "support/shard_setup.h"

extern char** environ;

namespace planb::bench {
namespace {

// Starts `argv` with stdout and stderr on /dev/null and returns its exit status (-1 if it could not start or was
// killed).
int RunQuietly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

void Spawn(benchmark::State& state, std::vector<std::string> argv) {
  for (auto _ : state) {
    const int exit_code = RunQuietly(argv);
    if (exit_code != 0) {
      state.SkipWithError((argv[0] + " exited " + std::to_string(exit_code)).c_str());
      return;
    }
  }
}

// The LMDB key of the shard's first data row, in hex.
std::string FirstKeyHex(const std::string& shard) {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_cursor* cursor = nullptr;
  MDB_val k, v;
  if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 16) != 0 || mdb_env_open(env, shard.c_str(), MDB_RDONLY, 0) != 0 ||
      mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != 0 || mdb_dbi_open(txn, "data", 0, &dbi) != 0 ||
      mdb_cursor_open(txn, dbi, &cursor) != 0 || mdb_cursor_get(cursor, &k, &v, MDB_FIRST) != 0) {
    std::fprintf(stderr, "process_start_bench: cannot read a key of %s\n", shard.c_str());
    std::exit(1);
  }
  std::string hex;
  char byte[3];
  for (size_t i = 0; i < k.mv_size; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", static_cast<const unsigned char*>(k.mv_data)[i]);
    hex += byte;
  }
  mdb_cursor_close(cursor);
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return hex;
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("process-start");
  const std::string planb = std::string(PLANB_BENCH_BIN_DIR) + "/planb";
  const std::string config = root + "/planb.ini";
  std::ofstream(config) << "home = " << root << "/home\n[map.st]\ntype = state\nscheme = hashed\n";
  {
    std::ofstream xml(root + "/st.xml");
    xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<referenceData xmlns=\"reference-data:2\">\n";
    for (int i = 0; i < 1000; ++i) {
      xml << "  <reference><map>st</map><key>key-" << i << "</key><value>value-" << i << "</value></reference>\n";
    }
    xml << "</referenceData>\n";
  }
  if (RunQuietly({planb, "--config", config, "load", root + "/st.xml"}) != 0) {
    std::fprintf(stderr, "process_start_bench: planb load failed\n");
    return 1;
  }
  const std::string shard = root + "/home/shards/st";
  const std::string key = FirstKeyHex(shard);
  benchmark::RegisterBenchmark("process_start/raw_minimal_c", Spawn,
                               std::vector<std::string>{PLANB_BENCH_MINIMAL_GET, shard, key})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("process_start/minimal_cxx_floor", Spawn,
                               std::vector<std::string>{PLANB_BENCH_MINIMAL_GET_CXX, shard, key})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("process_start/planb_lookup", Spawn,
                               std::vector<std::string>{planb, "--config", config, "lookup", "st", "key-500"})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
