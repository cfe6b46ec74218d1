// What a plugin reads and writes through: one LMDB table inside a transaction the host opened.
#pragma once

#include <lmdb.h>

#include <cstdint>

namespace planb {

// LMDB's compile-time key limit in Debian's liblmdb (mdb_env_get_maxkeysize()).
inline constexpr uint32_t kMaxLmdbKeySize = 511;

// REQUIRES: `cursor` is open on (`txn`, `dbi`). The caller owns everything here; a plugin may move the cursor
// but must not close it (the hot path reuses it between lookups so that no lookup allocates).
struct Table {
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;  // the store type's data table
  MDB_cursor* cursor = nullptr;
  // Handles of the plugins' own tables (PluginDescriptor::tables), in declared order, open in the same
  // environment: e.g. a lookup-table scheme's key -> id table. Null when the plugin declared none.
  const MDB_dbi* store_tables = nullptr;
  const MDB_dbi* scheme_tables = nullptr;
};

}  // namespace planb
