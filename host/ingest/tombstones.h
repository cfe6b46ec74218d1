// Tombstones: the deletions and replacements a shard has merged, kept with their time so that they commute with
// the loads around them. A deletion at time T takes the rows it matches whose time is earlier than T (RowTimeMs);
// its tombstone then takes such rows out of every batch merged after it (before that batch's rows reach the
// shard), so a node that merges an older batch after the deletion ends with the rows of a node that merged them
// the other way round (docs/storage-nodes.md, "Order"). A replacement whose newest row is at L leaves a tombstone
// of every row at or before L (time L + 1), which its own rows are not subject to.
//
// On-disk format (part of the shard's layout; bump kShardFormat if it changes):
//   table "tombstones"  key: the batch id; value: i64 big-endian merge time (ms), one byte 'd' (a deletion) or
//                       'r' (a replacement), then a delete entry's text (host/transfer/delete_entry.h: the time
//                       and what it matches; a replacement's is "all").
// Written in the deletion's own write transaction, so a tombstone never disagrees with the rows it took; carried
// into snapshots and compacted copies (it is a table of the shard), pruned by maintenance with the records of
// merged batches (a batch it could shadow no longer comes after that) while no batch is staged or quarantined.
// Thread-safety: plain functions; the caller's transaction decides what they see.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "host/transfer/delete_entry.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

inline constexpr const char* kTombstonesTableName = "tombstones";
// Identity tombstones (on-disk format as above): key: XXH3-128 of a row's identity (deletion_fields.h RowIdentity);
// value: the version of the row taken, i64 big-endian time and u64 big-endian tie hash (RowTieHash), then i64
// big-endian merge time (ms). Rows of that identity whose (time, tie hash) is at most that version are shadowed.
// Left by deletions whose expression names a value, for each row they take (deletion_fields.h says why).
inline constexpr const char* kShadowedTableName = "shadowed";

struct Tombstone {
  std::string batch_id;
  int64_t merged_ms = 0;     // when this node merged the deletion (for pruning)
  bool replacement = false;  // left by `load --replace`: its own rows are exempt, a later replacement outranks it
  DeleteEntry entry;
};

// A row's time as deletions (and maintenance) see it: its EffectiveTime, for a session (a type with an End
// field) its End. State and ranged rows report the time of their version, temporal rows the time they hold.
int64_t RowTimeMs(const PluginDescriptor& type, const Row& row);

// Opens the shard's "tombstones" table in the write transaction `txn`: created when `create`, else *found is
// false when the shard has none (no deletion merged yet).
Status OpenTombstones(MDB_txn* txn, bool create, MDB_dbi* dbi, bool* found);

// Whether the replacement tombstone `a` outranks a replacement whose tombstone time is `time_ms` and whose batch
// id is `batch_id`: a later time, or the same with a higher batch id (a total order, so every node picks the same
// winner). Only replacements rank; a deletion's tombstone outranks nothing.
bool OutranksReplacement(const Tombstone& a, int64_t time_ms, const std::string& batch_id);

// A replacement's tombstone time: its newest row's time + 1 (saturating), so that it shadows rows at or before
// the newest and its own rows are not among them.
int64_t ReplacementTombstoneTime(int64_t latest_row_ms);

// Records `tombstone` in `dbi`, in the write transaction `txn`.
Status RecordTombstone(MDB_txn* txn, MDB_dbi dbi, const Tombstone& tombstone);

// Reads the tombstones of `shard` in a read transaction of its own; none when it has no table yet.
Status ReadShardTombstones(MDB_env* shard, std::vector<Tombstone>* out);

// Every tombstone of `dbi`, in batch id order. kCorruption naming the id for a value that does not parse.
Status ReadTombstones(MDB_txn* txn, MDB_dbi dbi, std::vector<Tombstone>* out);

// Deletes the tombstones merged before `before_ms` (in the write transaction `txn`); `*pruned` counts them.
Status PruneTombstones(MDB_txn* txn, MDB_dbi dbi, int64_t before_ms, uint64_t* pruned);

// A row's version as identity tombstones compare it.
struct RowVersion {
  int64_t time_ms = 0;
  uint64_t tie = 0;
  bool operator<=(const RowVersion& o) const { return time_ms < o.time_ms || (time_ms == o.time_ms && tie <= o.tie); }
};

// The "shadowed" table: opened like OpenTombstones; an identity's version recorded (the higher of the old and
// the new), looked up (*found false when none), pruned by merge time, and (a replacement) dropped where a
// replacement tombstone of time `time_ms` shadows at least as much.
Status OpenShadowed(MDB_txn* txn, bool create, MDB_dbi* dbi, bool* found);
Status RecordShadowed(MDB_txn* txn, MDB_dbi dbi, const std::string& identity, RowVersion version, int64_t merged_ms);
Status ShadowedVersion(MDB_txn* txn, MDB_dbi dbi, const std::string& identity, RowVersion* version, bool* found);
Status PruneShadowed(MDB_txn* txn, MDB_dbi dbi, int64_t before_ms, uint64_t* pruned);
Status DropShadowedBefore(MDB_txn* txn, MDB_dbi dbi, int64_t time_ms);

}  // namespace planb
