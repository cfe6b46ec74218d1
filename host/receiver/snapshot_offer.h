// What a storage node offers for one SNAPSHOT request (docs/protocol.md): either "not modified", or a zip of a
// consistent copy of the shard with its size, checksum and content version. Shared by the BatchSink interface
// (upload_receiver.h), which the receiver asks, and the SnapshotSource (host/serve/snapshot_source.h), which
// makes the zips.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/storage/content_version.h"

namespace planb {

// What a requester that can take a diff holds (SNAPSHOT_SINCE): its snapshot's version and maintenance mark.
struct SnapshotSince {
  ContentVersion have;
  std::optional<int64_t> last_condensed_ms;  // the snapshot's "last_condensed" (maintenance_marks.h); none: never
};

struct PreparedSnapshot {
  bool not_modified = false;  // the shard is at the requester's version: nothing else is filled but `version`
  // The zip is a diff (host/transfer/snapshot_diff_file.h) from the requester's version to `version`, not a copy.
  bool diff = false;
  std::string map;            // the map's name as configured (requests may spell it in another case)
  ContentVersion version;     // read from the copy itself (or, when not modified, from the shard)
  std::string zip_path;       // a batch zip (batch_zip.h) holding the one map; it may be unlinked once opened
  uint64_t size = 0;
  uint64_t checksum = 0;  // XXH3-64 of the whole zip
  int64_t create_time_ms = 0;
};

}  // namespace planb
