// MDB_MAP_FULL said so that a user can act on it. Every LMDB file of a map (the batches a load writes, the shard a
// merge writes into, a filtered copy of a batch) is opened with the map's max_store_size as its LMDB map size, so
// a write past it fails with LMDB's bare "MDB_MAP_FULL: Environment mapsize limit reached". The description
// names the map, the file and the limit, and says to raise max_store_size for the map.
#pragma once

#include <cstdint>
#include <string>

#include "host/config/config.h"
#include "planb/status.h"

namespace planb {

// Whether `s` is LMDB's MDB_MAP_FULL (kFull whose message carries mdb_strerror's text, as LmdbStatus and the
// SDK's row writers give it; not MDB_TXN_FULL, a transaction with too many dirty pages).
bool IsMapFull(const Status& s);

// `bytes` as the config takes it back: "64KiB" when a whole number of KiB/MiB/GiB/TiB, else "N bytes".
std::string ByteSizeText(uint64_t bytes);

// `s` unchanged unless IsMapFull(s); then kFull "map M: WHAT FILE is full: it reached max_store_size = SIZE (the
// LMDB map size of the map's files) in this node's config; raise max_store_size in [map.M] (LMDB: ...)".
// `what` says which file it is ("the batch being written", "the shard").
Status DescribeMapFull(const Status& s, const MapConfig& map, const std::string& what, const std::string& file);

}  // namespace planb
