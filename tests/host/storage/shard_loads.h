// Helpers for the disk reclaim tests: loads merged into a runtime's shards through the real merge path, and
// compaction run in a forked child (a real process, so that a fault point's SIGKILL ends only it).
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/merge_processor.h"
#include "host/runtime.h"
#include "host/storage/shard_compaction.h"
#include "host/storage/shard_space.h"
#include "support/map_fixture.h"

namespace planb::testing {

using Rows = std::vector<std::pair<std::string, std::string>>;

// `count` rows "key-<i>" = `value_prefix` + i.
inline Rows NumberedRows(int count, const std::string& value_prefix) {
  Rows rows;
  for (int i = 0; i < count; ++i) rows.emplace_back("key-" + std::to_string(i), value_prefix + std::to_string(i));
  return rows;
}

// The lines of a DumpShards / DumpBatchIds text that belong to shard `map` (leaving out e.g. a leftover copy).
inline std::string LinesOf(const std::string& dump, const std::string& map) {
  std::string out;
  size_t at = 0;
  while (at < dump.size()) {
    size_t end = dump.find('\n', at);
    if (end == std::string::npos) end = dump.size();
    if (dump.compare(at, map.size() + 1, map + "/") == 0) out += dump.substr(at, end + 1 - at);
    at = end + 1;
  }
  return out;
}

// Stages `rows` of `map` as one batch and merges everything staged.
inline Status LoadAndMerge(Runtime& runtime, const std::string& map, const Rows& rows) {
  PLANB_RETURN_IF_ERROR(StageRows(runtime, map, rows));
  MergeReport report;
  return MergeProcessor(runtime).MergePending(&report);
}

inline Status MeasureMap(Runtime& runtime, const std::string& map, ShardSpace* space) {
  std::shared_ptr<MapEnv> env;
  PLANB_RETURN_IF_ERROR(runtime.OpenShard(map, &env));
  return MeasureShard(*env, space);
}

// What the maintenance runner does for one map: takes the merge lock, clears leftovers, compacts.
inline Status CompactUnderLock(Runtime& runtime, const std::string& map, CompactionResult* result) {
  FileLock lock;
  PLANB_RETURN_IF_ERROR(lock.Acquire(runtime.home().merging() + "/.lock"));
  PLANB_RETURN_IF_ERROR(RemoveCompactionLeftovers(runtime.home(), nullptr));
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(runtime.catalog().Get(map, &plugins));
  return CompactShard(runtime.home(), runtime.envs(), plugins, result);
}

// In a forked child with PLANB_FAULT=`fault`: opens a runtime on `dir` (OpenTestRuntime's layout) and compacts
// `map`. Returns the child's wait status. REQUIRES: the calling process runs no other thread.
inline int CompactInChild(const std::string& dir, const std::string& config, const std::string& map,
                          const std::string& fault) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::setenv("PLANB_FAULT", fault.c_str(), 1);
    std::unique_ptr<Runtime> runtime;
    CompactionResult result;
    const bool ok = OpenTestRuntime(dir, config, &runtime).ok() && CompactUnderLock(*runtime, map, &result).ok();
    ::_exit(ok ? 0 : 1);
  }
  int wstatus = 0;
  if (child < 0 || ::waitpid(child, &wstatus, 0) != child) return -1;
  return wstatus;
}

}  // namespace planb::testing
