// How much of a shard's file its rows use and how much is free (docs/maintenance.md, "Disk reclaim"): the number
// maintenance compares with a map's reclaim_free_share before rewriting the shard compactly (shard_compaction.h).
#pragma once

#include <cstdint>

#include "host/storage/map_env.h"
#include "planb/status.h"

namespace planb {

struct ShardSpace {
  uint64_t rows = 0;        // entries of the "data" table
  uint64_t file_bytes = 0;  // size of data.mdb
  uint64_t page_size = 0;
  uint64_t file_pages = 0;         // file_bytes / page_size (at least last_page + 1)
  uint64_t last_page = 0;          // LMDB's me_last_pgno: the highest page number written
  uint64_t used_pages = 0;         // the 2 meta pages and every page of every tree (free list, main, named tables)
  uint64_t listed_free_pages = 0;  // pages LMDB's free list holds for reuse
  // (file_pages - used_pages) / file_pages: the free list and the file's tail past last_page. 0 for an empty file.
  double free_share = 0;
};

// Measures `env` in one read transaction (the share of a consistent state; writers may go on meanwhile).
// Reads the free list and the named tables' records as LMDB's mdb_stat tool does (free list = dbi 0), opening no
// table handle, so it is safe beside any other transaction of the env. Assumes, as MapEnv lays a shard out, that
// every record of the main table is a named table. For a table opened with MDB_DUPSORT (no built-in plugin uses
// it) LMDB's page counts may leave out the duplicates' subtrees: the share would read high, which only makes
// compaction come sooner.
Status MeasureShard(const MapEnv& env, ShardSpace* out);

}  // namespace planb
