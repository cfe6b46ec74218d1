// What a plugin reads and writes through: one LMDB table inside a transaction the host opened.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <lmdb.h>

#include <cstdint>

namespace planb {

// LMDB's compile-time key limit in Debian's liblmdb (mdb_env_get_maxkeysize()).
inline constexpr uint32_t kMaxLmdbKeySize = 511;
// LMDB's limit on one value (MAXDATASIZE in mdb.c): a row's stored key, head and value together.
// Since SDK 7.5.
inline constexpr uint64_t kMaxLmdbValueSize = 0xFFFFFFFFu;

// What a store type read once from a read transaction's snapshot and may reuse until the host takes another
// snapshot (its own stats, e.g. the Session store's longest session): the host empties it (`filled = false`)
// whenever it renews the transaction. The store type alone decides what the words mean.
struct SnapshotMemo {
  bool filled = false;
  uint64_t words[4] = {};
};

// REQUIRES: `cursor` is open on (`txn`, `dbi`). The caller owns everything here; a plugin may move the cursor
// but must not close it (the hot path reuses it between lookups so that no lookup allocates).
struct Table {
  uint32_t size = sizeof(Table);  // first: lets the struct grow (plugin.h)
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;  // the store type's data table
  MDB_cursor* cursor = nullptr;
  // Handles of the plugins' own tables (PluginDescriptor::tables), in declared order, open in the same
  // environment: e.g. a lookup-table scheme's key -> id table. Null when the plugin declared none.
  const MDB_dbi* store_tables = nullptr;
  const MDB_dbi* scheme_tables = nullptr;
  // Null unless the host keeps one per read transaction (its lookup readers); writes and one-off reads have
  // none, so a store type reads afresh.
  SnapshotMemo* memo = nullptr;
};

}  // namespace planb
