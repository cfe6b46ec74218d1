// Merging a replacement batch (`planb load --replace`): after it, the map holds exactly the batch's rows. The new
// shard is built beside the old one (shards/.<map>.compact, under the merge lock, as a compaction builds its copy)
// and exchanged with it in one step, so a lookup at any instant reads the old content or the new, never a mix and
// never an empty map. The new shard carries the old one's record of merged batches and its content version
// (CarryMergedBatches), then records the replacement like any batch: a replacement delivered again is recognised,
// and the version moves by one on every node, so readers fetch the new content as they would after a load.
//
// Crash safety: before the exchange the old shard is untouched (a leftover copy is removed by the next attempt or
// by maintenance); after it, the new shard records the batch, so merging the still-staged batch again changes
// nothing. Processes holding the old environment keep reading the old files until they reopen
// (MapEnv::Replaced, EnvCache::Get).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "host/ingest/merge_map.h"
#include "host/plugin_host/map_plugins.h"
#include "host/storage/env_cache.h"
#include "host/storage/home.h"
#include "host/storage/map_env.h"
#include "planb/status.h"

namespace planb {

// Replaces the content of the existing shard `shard` (of `plugins`' map, at home.ShardPath) by the rows of
// `batch` (read in `batch_txn`) and records `batch_id`. A batch the shard records already changes nothing
// (result->already_merged). On failure the old shard is as it was and the copy is removed; result->batch_at_fault
// says whether the batch's rows are to blame (MergeIntoShard's rules).
// REQUIRES: the caller holds the home's merge lock and `envs` is the cache `shard` came from.
Status ReplaceShard(const Home& home, EnvCache& envs, const std::shared_ptr<const MapPlugins>& plugins,
                    std::shared_ptr<MapEnv> shard, const MapEnv& batch, MDB_txn* batch_txn,
                    const std::string& batch_id, int64_t now_ms, MapMergeResult* result);

}  // namespace planb
