// Orphan shards (docs/maintenance.md): a directory in shards/ named like a map the config no longer has. It is
// deleted once `delete_orphans_after` has passed since it was first seen orphaned; until then a config that names
// the map again simply adopts it.
//
// When each orphan was first seen is recorded in shards/.orphans, so restarts do not reset the clock.
// On-disk format (no version: a record that does not parse is rebuilt): one line per orphan,
// "<map> <first_seen_ms>\n", decimal milliseconds since the epoch (may be negative), written whole (temp file,
// fsync, rename). A record that does not parse (or is over 1 MiB) is reported and rebuilt with "now" as every
// orphan's first-seen time: nothing is deleted on the word of a bad record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/storage/env_cache.h"
#include "host/storage/home.h"
#include "planb/status.h"

namespace planb {

inline constexpr const char* kOrphanRecordName = ".orphans";

struct OrphanShard {
  std::string map;
  int64_t first_seen_ms = 0;
};

struct OrphanReport {
  std::vector<OrphanShard> waiting;  // orphans kept for now (with when they were first seen)
  std::vector<OrphanShard> deleted;  // deleted now (dry run: would be)
  std::vector<std::string> adopted;  // in the record, configured again: dropped from it
  std::string record_problem;        // non-empty when the record did not parse and was rebuilt
};

// One sweep at `now_ms`: records newly seen orphans, drops adopted maps and vanished shards from the record,
// deletes the shards whose time has come (renamed to shards/.<map>.deleting first, so that a crash never leaves a
// half-deleted directory under a map's name; such leftovers are removed by the next sweep) and forgets them in
// `envs` (may be null). Names in shards/ that are no map name (dot files, leftovers) are not shards.
// `dry_run`: reports the same, changes nothing on disk.
// REQUIRES: the caller holds the merge lock (merging/.lock): no merge creates or compacts a shard meanwhile.
Status SweepOrphanShards(const Home& home, const Config& config, EnvCache* envs, int64_t now_ms, bool dry_run,
                         OrphanReport* report);

}  // namespace planb
