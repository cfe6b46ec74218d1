// When maintenance last condensed and last reclaimed a shard, kept in the shard's own meta table so that the
// marks travel with it (a compacted copy keeps them) and `planb stores` can show them.
// On-disk format (meta keys, text values: decimal ms since the epoch, UTC; absent = never):
//   "last_condensed"   written in the write transaction that condensed (or applied retention to) the rows
//   "last_reclaimed"   written into the compacted copy once it is the shard
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <optional>

#include "planb/status.h"

namespace planb {

inline constexpr const char* kLastCondensedKey = "last_condensed";
inline constexpr const char* kLastReclaimedKey = "last_reclaimed";

struct MaintenanceMarks {
  std::optional<int64_t> last_condensed_ms;
  std::optional<int64_t> last_reclaimed_ms;
};

// Reads both marks from `meta` in `txn`; kCorruption when one is present but not a decimal number.
Status ReadMaintenanceMarks(MDB_txn* txn, MDB_dbi meta, MaintenanceMarks* out);
// Writes one mark (`key` is kLastCondensedKey or kLastReclaimedKey) in write transaction `txn`.
Status WriteMaintenanceMark(MDB_txn* txn, MDB_dbi meta, const char* key, int64_t ms);

}  // namespace planb
