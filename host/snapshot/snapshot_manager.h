// Local snapshots of shards for nodes that are not storage nodes (the design's "Querying"; docs/snapshots.md).
//
// On disk, per map: snapshots/<map>/<create_time>/data.mdb, <create_time> = the local time (ms since the epoch,
// 13+ digits) the snapshot was installed. Only complete, verified snapshots carry such a name: a fetch downloads to
// .fetch-<pid>-<n>.zip, unpacks and verifies into .fetch-<pid>-<n>/ and renames the map's directory into place;
// cleanup renames a superseded snapshot to .delete-<pid>-<n>/ before removing it (snapshot_dir.h). Also in
// snapshots/<map>/: .fetch.lock (processes take turns to fetch), .checked (touched when a node answered "not
// modified": the newest snapshot counts as that fresh), .failed (touched after a failed fetch: no retry before
// snapshot_retry_fetch_interval; removed by the next successful one).
// Each open snapshot holds a shared flock on its directory; cleanup deletes only directories it can lock
// exclusively, so a snapshot in use by any process is never deleted.
//
// Thread-safety: all methods may be called from any thread. Many threads wanting a fetch of the same map cause
// one fetch; processes on one home also take turns and re-check the disk, so they cause one fetch too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/plugin_host/map_catalog.h"
#include "host/storage/content_version.h"
#include "host/storage/home.h"
#include "host/storage/map_env.h"
#include "host/snapshot/snapshot_fetcher.h"

namespace planb {

// One snapshot directory, open for reading (MDB_RDONLY | MDB_NOLOCK: nobody writes a snapshot). While any
// holder keeps it, the environment stays open and the directory locked against cleanup.
class OpenSnapshot {
 public:
  ~OpenSnapshot();
  const std::shared_ptr<MapEnv>& env() const { return env_; }
  int64_t create_time_ms() const { return create_time_ms_; }
  const ContentVersion& version() const { return version_; }
  const std::string& path() const { return env_->path(); }

 private:
  friend class SnapshotManager;
  OpenSnapshot() = default;
  std::shared_ptr<MapEnv> env_;
  int64_t create_time_ms_ = 0;
  ContentVersion version_;
  int dir_fd_ = -1;  // holds the shared flock
};

// When a snapshot is older than min_time_to_keep_snapshots (and no fetch failed in the last
// snapshot_retry_fetch_interval): kFetchNow fetches a newer one before returning (one-shot CLI commands);
// kUseCurrent returns the one held (a background refresh, RefreshIfDue, takes care of it).
enum class StaleSnapshot { kFetchNow, kUseCurrent };

// What `planb stores` shows of a map's newest snapshot on a reader.
struct SnapshotInfo {
  std::string map;
  int64_t create_time_ms = 0;  // installed here (this machine's clock)
  ContentVersion version;
  std::string source_node;     // the storage node it came from ("" for a snapshot installed before this was kept)
  // Why it is ahead of every storage node ("" when it is not known to be): the last fetch found every node
  // behind it at one version (see Refresh's accept_older).
  std::string ahead_of_nodes;
};

struct CleanupReport {
  std::vector<std::string> deleted;  // snapshot directories (and abandoned partial fetches) removed
  std::vector<std::string> synced;   // snapshot directories a diff installed unsynced, synced now
  size_t envs_closed = 0;            // environments this manager let go of (idle past min_time_to_keep_env_open)
};

class SnapshotManager {
 public:
  // REQUIRES: all four outlive the manager. `progress` (may be empty) is called during downloads.
  SnapshotManager(const Home& home, const ClusterConfig& cluster, const MapCatalog& catalog,
                  zmq::context_t& context, FetchProgress progress = {});
  ~SnapshotManager();

  // The snapshot lookups of `map` should use now: the newest complete one on disk (opened once and shared
  // while it stays the newest), fetched first when there is none on disk. Errors: the map is not configured;
  // kNotFound when no snapshot exists and every node says nothing has been merged into the map; else the
  // fetch's error ("snapshot of MAP: ... node1 (...), node2 (...)").
  Status Current(std::string_view map, StaleSnapshot stale, std::shared_ptr<const OpenSnapshot>* out);

  // Fetches a newer snapshot of `map` now if the newest is older than min_time_to_keep_snapshots and the retry
  // interval has passed since a failed fetch (with none on disk: unless a fetch failed within that interval);
  // `*changed` when a new one was installed. A failed fetch is recorded (.failed) and returned; the old snapshot
  // keeps serving.
  Status RefreshIfDue(std::string_view map, bool* changed);

  // Fetches a newer snapshot of `map` now, whatever the age of the one held and whatever the retry interval
  // (the user asked for fresh data: `planb refresh`, Reader::Refresh, lookup --min-version). `*changed` when a
  // new one was installed; a node answering "not modified" is a success. Errors as Current's fetch; when every
  // node is behind the snapshot held at one version, the error says so and `planb stores` shows it until a fetch
  // succeeds. `accept_older` (`planb refresh --accept-older`): a node's copy is installed even when it has fewer
  // batches than the one held, which is how a reader moves off a snapshot whose version no node has.
  Status Refresh(std::string_view map, bool* changed, bool accept_older = false);

  // The newest snapshot on disk of every configured map that has one (opened to read its version), in map order.
  Status Describe(std::vector<SnapshotInfo>* out);

  // Lets go of environments not handed out by Current for min_time_to_keep_env_open, and deletes snapshot
  // directories that are not the newest of their map and that no process holds, and partial fetches of
  // processes that are gone. Maps not configured are left alone.
  Status Cleanup(CleanupReport* report);

  // Fetches this manager has started (each asks the storage nodes once; waiting for another thread's or
  // process's fetch does not count): what tests count to prove that many callers cause one fetch.
  uint64_t fetches_started() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace planb
