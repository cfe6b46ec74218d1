// A storage node's side of snapshots: makes consistent, zipped copies of its shards for readers (SNAPSHOT), in
// outgoing/. The copy is LMDB's copy (mdb_env_copyfd2; compacting when the shard has many free pages) of the shard's
// environment (the one the merges write, from the runtime's EnvCache) under its own read transaction, so merges go on
// meanwhile. It streams through a pipe into the zip, and the version offered is the one read just before it, kept
// only when no merge committed until the copy ended (so zip and version always agree); when merges did, it is
// streamed once more, then copied into a scratch file whose version is read from the copy itself. A map whose
// retention or condensation may trim the copy is always copied into a file (the trim works on it). The zip of a
// map is reused while the shard's version has not moved, so many readers asking at once cost one copy; a newer zip
// replaces (unlinks) the older one: readers still fetching it hold it open.
//
// outgoing/ holds, per map, <map>-<create_time_ms>-<n>.zip (a batch zip, batch_zip.h, of the one map, with the
// batch id "snapshot/<node>/<map>/<batches>") and, while a copy is made into a file, a scratch directory
// .<map>-<create_time_ms>-<n>/ (removed when done). Nothing in it outlives the serving process: Clear() empties it,
// so the zips are not synced to disk (a crash loses a cache, nothing else).
// Thread-safety: Prepare and Clear may be called from any thread; calls are serialised (in the node, Prepare runs
// on the receiver's snapshot worker, Clear before the receiver starts).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "host/receiver/snapshot_offer.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

// How a snapshot zip is made. The node takes them from its config (snapshot_compression); benches try each.
struct SnapshotMaking {
  // The zip's entries deflated (level 1: about a third of the bytes to send, at several times the making time)
  // or stored as they are (making costs about a file copy; more bytes on the wire).
  bool deflate = false;
  // LMDB's compacting copy (free pages left out, pages renumbered: it walks every B-tree, several times slower)
  // when free pages are at least this share of the shard's pages; else its plain copy of every page up to the last
  // used one. 0: always compacting; above 1: never.
  double compact_above_free_share = 0.10;
  // Tests only (a fault to inject): runs after each streamed copy, before the check that no merge committed
  // during it, so that a test can commit one there.
  std::function<void()> after_streamed_copy = {};
};

class SnapshotSource {
 public:
  // REQUIRES: `runtime` outlives the source.
  explicit SnapshotSource(Runtime& runtime)
      : SnapshotSource(runtime, SnapshotMaking{runtime.config().cluster.snapshot_deflate}) {}
  SnapshotSource(Runtime& runtime, const SnapshotMaking& making) : runtime_(runtime), making_(making) {}
  SnapshotSource(const SnapshotSource&) = delete;
  SnapshotSource& operator=(const SnapshotSource&) = delete;

  // Empties outgoing/ (zips of an earlier run) and forgets the zips made.
  Status Clear();
  // not_modified (with the shard's version) when the shard is at `have`; else the zip of a copy newer than
  // `have`: the map's latest zip while the shard's version still equals it, or a new one. kNotFound naming the
  // map when it is not configured here or has no shard yet ("nothing merged into MAP on this node yet").
  // kIOError/kFull for the local disk.
  Status Prepare(const std::string& map, const ContentVersion& have, PreparedSnapshot* out);

 private:
  // Copies the shard of `map` (canonical name) into a new zip in outgoing/.
  Status MakeZip(const std::string& map, const std::shared_ptr<const MapPlugins>& plugins,
                 const std::shared_ptr<MapEnv>& shard, PreparedSnapshot* out);

  Runtime& runtime_;
  const SnapshotMaking making_;
  std::mutex mutex_;                                // one Prepare at a time
  std::map<std::string, PreparedSnapshot> latest_;  // per map: the zip made last
  std::map<std::string, std::string> retired_;       // per map: the zip it replaced, unlinked at the next one
  uint64_t made_ = 0;                               // zips made: keeps names unique within a millisecond
};

}  // namespace planb
