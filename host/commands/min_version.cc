// lookup --min-version N: wait for data at least that new (docs/snapshots.md, "Fresh data after a load").
#include <chrono>
#include <thread>

#include "host/commands/read_commands.h"
#include "host/snapshot/snapshot_manager.h"
#include "planb/lmdb.h"

namespace planb {

Status ReadServedVersion(Runtime& runtime, const std::string& map, ContentVersion* version) {
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(runtime.OpenForReading(map, StaleSnapshot::kUseCurrent, &env));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env->env(), MDB_RDONLY).WithContext(env->path()));
  return ReadContentVersion(txn.get(), env->meta(), version).WithContext(env->path());
}

bool WaitForMinVersion(Runtime& runtime, const std::string& map, uint64_t min_batches, std::ostream& err) {
  const ClusterConfig& cluster = runtime.config().cluster;
  const int64_t wait_ms = 10 * cluster.request_timeout_ms;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  // A storage node's merge, or the nodes' merges behind a snapshot, arrive on their own time: look again after a
  // short pause that grows, so a wait costs little and a merge that lands is seen soon.
  auto pause = std::chrono::milliseconds(20);
  ContentVersion seen;
  std::string last_error;
  for (;;) {
    Status s = ReadServedVersion(runtime, map, &seen);
    if (s.ok() && seen.batches >= min_batches) return true;
    if (!s.ok() && s.code() != Code::kNotFound) last_error = s.message();
    if (std::chrono::steady_clock::now() >= deadline) break;
    if (!cluster.IsStorageNode()) {
      bool changed = false;
      Status fetched = runtime.snapshots()->Refresh(map, &changed);
      if (!fetched.ok() && fetched.code() != Code::kNotFound) last_error = fetched.message();
      if (changed) continue;  // read the new one at once
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        pause, std::max<std::chrono::steady_clock::duration>(deadline - std::chrono::steady_clock::now(),
                                                             std::chrono::milliseconds(0))));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  err << "planb: " << map << ": content version " << min_batches << " did not arrive within " << wait_ms
      << " ms (10 x request_timeout); " << (cluster.IsStorageNode() ? "this node's shard" : "the newest snapshot")
      << " is at " << seen.batches;
  if (!last_error.empty()) err << "; last error: " << last_error;
  err << "\n";
  return false;
}

}  // namespace planb
