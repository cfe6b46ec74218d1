// Real `planb serve` child processes for multi-node tests, and waiting on conditions with a deadline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace planb::testing {

using namespace std::chrono_literals;

// Waits until `condition` holds, checking it again whenever something changes in one of `watched` (files or
// directories, through inotify; a path that does not exist yet is watched through its directory) or process
// `pid` ends (a pidfd). Returns the condition's value once it holds or `deadline` passes. No polling: the wait
// blocks on those events.
bool WaitUntil(const std::function<bool()>& condition, const std::vector<std::string>& watched,
               std::chrono::milliseconds deadline = 30s, pid_t pid = -1);

// One `planb --config CONFIG --home HOME serve --bind BIND --ready-file ...` process. Its stderr (the node's log)
// goes to a file. The destructor SIGKILLs a process still running.
class ServeProcess {
 public:
  ServeProcess() = default;
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // `env` adds "NAME=value" entries (e.g. PLANB_FAULT=merge.mid_batch) to the child's environment.
  void Start(const std::string& config, const std::string& home, const std::string& bind,
             const std::vector<std::string>& env = {});
  // Waits until the node serves; returns its bound endpoint, or "" when it exited or the deadline passed.
  std::string WaitReady(std::chrono::milliseconds deadline = 30s);
  // SIGTERM, then waits for the exit; returns the exit code (-1: killed by a signal or still running at deadline).
  int Stop(std::chrono::milliseconds deadline = 30s);
  // Waits for the process to end on its own; returns the signal that killed it, 0 for a normal exit, -1 when
  // it still runs at the deadline.
  int WaitForDeath(std::chrono::milliseconds deadline = 30s);
  void Kill();
  bool running();
  std::string log() const;
  const std::string& log_file() const { return log_file_; }
  const std::string& ready_file() const { return ready_file_; }
  pid_t pid() const { return pid_; }

 private:
  bool Reap(int options);
  // Waits until the process has ended (then reaps it) or the deadline passes.
  bool WaitForExit(std::chrono::milliseconds deadline);

  pid_t pid_ = -1;
  int status_ = 0;
  std::string ready_file_;
  std::string log_file_;
};

// Every row of every table of every shard under `home`/shards, as text ("map/table: hex(key) = hex(value)"),
// read with raw LMDB: two nodes hold identical shards exactly when their dumps are equal. Left out: the shard's
// content version (the `batches` table and meta content_version, host/storage/content_version.h), which depends
// on the batch ids a node merged (another load of the same files has other ids) and on merge times; see
// DumpBatchIds.
std::string DumpShards(const std::string& home);
// Per shard, the ids of the batches merged (keys of `batches`, without the merge times) and the content version:
// equal on nodes that merged the same uploads, however often or in whichever order they merged them.
std::string DumpBatchIds(const std::string& home);

}  // namespace planb::testing
