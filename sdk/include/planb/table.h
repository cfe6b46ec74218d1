// What a plugin reads and writes through: one LMDB table inside a transaction the host opened.
#pragma once

#include <lmdb.h>

#include <cstdint>

namespace planb {

// LMDB's compile-time key limit in Debian's liblmdb (mdb_env_get_maxkeysize()).
inline constexpr uint32_t kMaxLmdbKeySize = 511;

// REQUIRES: `cursor` is open on (`txn`, `dbi`). The caller owns all three; a plugin may move the cursor
// but must not close it (the hot path reuses it between lookups so that no lookup allocates).
struct Table {
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  MDB_cursor* cursor = nullptr;
};

}  // namespace planb
