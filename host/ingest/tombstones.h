// Tombstones: the deletions a shard has merged, kept with their time so that a deletion and the loads around it
// commute. A deletion at time T takes the rows it matches whose time is earlier than T (RowTimeMs); its tombstone
// then takes such rows from every batch merged after it, so a node that merges an older batch after the deletion
// ends with the rows of a node that merged them the other way round (docs/storage-nodes.md, "Order").
//
// On-disk format (part of the shard's layout; bump kShardFormat if it changes):
//   table "tombstones"  key: the deletion's batch id; value: i64 big-endian merge time (ms), then the delete
//                       entry's text (host/transfer/delete_entry.h: its time and what it matches).
// Written in the deletion's own write transaction, so a tombstone never disagrees with the rows it took; carried
// into a replacement's new shard and into snapshots (it is a table of the shard), pruned by maintenance with the
// records of merged batches (a batch it could shadow no longer comes after that).
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

struct Tombstone {
  std::string batch_id;
  int64_t merged_ms = 0;  // when this node merged the deletion (for pruning)
  DeleteEntry entry;
};

// A row's time as deletions (and maintenance) see it: its EffectiveTime, for a session (a type with an End
// field) its End. State and ranged rows report the time of their version, temporal rows the time they hold.
int64_t RowTimeMs(const PluginDescriptor& type, const Row& row);

// Opens the shard's "tombstones" table in the write transaction `txn`: created when `create`, else *found is
// false when the shard has none (no deletion merged yet).
Status OpenTombstones(MDB_txn* txn, bool create, MDB_dbi* dbi, bool* found);

// Records the deletion `batch_id` (merged at `merged_ms`) in `dbi`, in the write transaction `txn`.
Status RecordTombstone(MDB_txn* txn, MDB_dbi dbi, const std::string& batch_id, int64_t merged_ms,
                       const DeleteEntry& entry);

// Every tombstone of `dbi`, in batch id order. kCorruption naming the id for a value that does not parse.
Status ReadTombstones(MDB_txn* txn, MDB_dbi dbi, std::vector<Tombstone>* out);

// Copies every tombstone of `from` (read in `from_txn`) into `to` (write transaction `to_txn`): a replacement's
// new shard keeps shadowing what the old one did.
Status CarryTombstones(MDB_txn* from_txn, MDB_dbi from, MDB_txn* to_txn, MDB_dbi to);

// Deletes the tombstones merged before `before_ms` (in the write transaction `txn`); `*pruned` counts them.
Status PruneTombstones(MDB_txn* txn, MDB_dbi dbi, int64_t before_ms, uint64_t* pruned);

}  // namespace planb
