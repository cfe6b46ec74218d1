// What a map's shard costs on disk: the file, its rows, and the key scheme's own tables.
#pragma once

#include <cstdint>
#include <optional>

#include "host/storage/map_env.h"

namespace planb {

struct ShardSizes {
  uint64_t rows = 0;        // entries of the data table
  uint64_t file_bytes = 0;  // data.mdb, free pages included (what the disk holds)
  // Pages (branch, leaf, overflow) x page size of the scheme's key tables (e.g. lookup_table's index and ids)
  // and value tables (value_dedup's); absent when the scheme keeps none.
  std::optional<uint64_t> key_table_bytes;
  std::optional<uint64_t> value_table_bytes;
};

// Measures `env` in a read transaction. Of the scheme's tables in use, the first `key_tables` are key tables and
// the rest value tables (a table an option adds goes after those every instance uses: planb/key_scheme.h).
Status MeasureShard(const MapEnv& env, uint32_t key_tables, ShardSizes* out);

}  // namespace planb
