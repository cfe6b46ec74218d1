// Disk reclaim (docs/maintenance.md): LMDB reuses free pages but never shrinks its file, so a shard that was
// rewritten (reloads, merges leaving half-full pages, deletions) keeps its largest size. CompactShard rewrites it as
// a dense copy (dense_copy.h: every page full, where mdb_env_copy2 with MDB_CP_COMPACT would keep half-empty
// pages) and swaps the copy in with one atomic directory exchange.
//
// Crash safety: the copy is complete, synced and checked before the exchange, and the old shard is complete until
// it is deleted after it, so at any instant (kill -9 included) shards/<map> is the old or the new shard, with the
// same rows. What a crash leaves is shards/.<map>.compact (the copy, or the old shard after the exchange), which
// RemoveCompactionLeftovers deletes.
//
// Processes (and EnvCache entries) that opened the shard before the exchange keep reading the old, deleted files
// until they reopen it: MapEnv::Replaced() tells them, EnvCache::Get reopens by itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/common/disk_room.h"
#include "host/plugin_host/map_plugins.h"
#include "host/storage/env_cache.h"
#include "host/storage/home.h"
#include "planb/status.h"

namespace planb {

struct CompactionResult {
  uint64_t rows = 0;          // rows of the data table (equal before and after)
  uint64_t bytes_before = 0;  // size of data.mdb before
  uint64_t bytes_after = 0;   // and after
};

// shards/.<map>.compact: where the copy is built (a map name has no '.', so no map's shard has such a name).
std::string CompactionPath(const Home& home, const std::string& map);

// Exchanges two directories in one step (renameat2 RENAME_EXCHANGE; both on one filesystem): at any instant each
// path names one complete directory.
Status ExchangeDirectories(const std::string& a, const std::string& b);

// Puts the complete shard at `copy_path` (shards/.<map>.compact) in place of `shard_path` in one exchange, durably,
// then deletes the old one (now at `copy_path`); the fault points named are reached just before and after the
// exchange. REQUIRES: the merge lock; no environment of the copy open in this process.
Status SwapShardIn(const Home& home, const std::string& copy_path, const std::string& shard_path,
                   const char* before_fault, const char* after_fault);

// Rewrites the shard of `plugins`' map compactly and swaps it in (see above). `envs` opens the new shard at its
// next Get; holders of the old environment keep reading it until they let go. kNotFound when the map has no shard.
// kFull, writing nothing, when the copy (the shard's pages in use) would not leave max(`min_free_bytes`, 1% of the
// filesystem) free (disk_room.h). On any failure before the exchange the copy is removed and the shard is as it was.
// REQUIRES: the caller holds the home's merge lock (merging/.lock), so nothing writes the shard meanwhile (a write
// during the copy would be lost by the swap), and has run RemoveCompactionLeftovers since taking it.
Status CompactShard(const Home& home, EnvCache& envs, const std::shared_ptr<const MapPlugins>& plugins,
                    CompactionResult* out, uint64_t min_free_bytes = kDefaultMinFreeBytes);

// Deletes every shards/.<map>.compact left by a compaction that died; their names go to `removed` (may be null).
// REQUIRES: the merge lock (no compaction is under way).
Status RemoveCompactionLeftovers(const Home& home, std::vector<std::string>* removed);

}  // namespace planb
