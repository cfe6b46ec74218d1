// A storage node's side of snapshots: makes consistent, zipped copies of its shards for readers (SNAPSHOT), in
// outgoing/. The copy is LMDB's compacting copy (mdb_env_copyfd2 with MDB_CP_COMPACT) under its own read
// transaction, so merges go on meanwhile; the version offered is read from the copy itself, so zip and version
// always agree. The zip of a map is reused while the shard's version has not moved, so many readers asking at
// once cost one copy; a newer zip replaces (unlinks) the older one: readers still fetching it hold it open.
// Thread-safety: Prepare may run on any thread, one call at a time (the receiver's snapshot worker).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

struct PreparedSnapshot {
  bool not_modified = false;  // the shard is at the requester's version: nothing else is filled but `version`
  ContentVersion version;
  std::string zip_path;  // in outgoing/; a batch zip (batch_zip.h) holding the one map
  uint64_t size = 0;
  uint64_t checksum = 0;  // XXH3-64 of the zip
  int64_t create_time_ms = 0;
};

class SnapshotSource {
 public:
  explicit SnapshotSource(Runtime& runtime) : runtime_(runtime) {}
  // Empties outgoing/ (zips of an earlier run).
  Status Clear();
  // kNotFound naming the map when it is not configured here or has no shard yet ("nothing merged into MAP on
  // this node yet"). kIOError/kFull for the local disk.
  Status Prepare(const std::string& map, const ContentVersion& have, PreparedSnapshot* out);

 private:
  Runtime& runtime_;
  std::map<std::string, PreparedSnapshot> latest_;  // per map: the zip made last
};

}  // namespace planb
