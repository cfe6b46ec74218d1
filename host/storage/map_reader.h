// Lookups on one map environment through its store type, reusing one read transaction and one cursor, so that
// a warm lookup allocates nothing. Not thread-safe: use one MapReader per thread.
// The reader sees the environment as of Open() or the last Refresh(); row views stay valid until the next
// Refresh() or the reader's destruction. It reads the environment it was opened on: after a compaction swapped the
// shard (env().Replaced()), that is the old file; open a new reader on EnvCache::Get's environment to see the new.
#pragma once

#include <memory>

#include "host/common/read_budget.h"
#include "host/storage/map_env.h"
#include "host/storage/own_fields.h"
#include "planb/lmdb.h"
#include "planb/store.h"

namespace planb {

class MapReader {
 public:
  MapReader() = default;
  ~MapReader();
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  Status Open(std::shared_ptr<MapEnv> env);
  // Takes a fresh snapshot of the environment (reset + renew: no allocation).
  Status Refresh();

  // kOk fills `row`, kNotFound is a miss, anything else an error described in `error`. The row's own fields
  // (Row::own_fields) are this reader's array: valid until the next Lookup or HasAnyRowOf on it.
  Code Lookup(const LookupKey& key, Row* row, ErrorBuffer* error) const {
    own_.Attach(row);
    return env_->plugins().store()->Get(table_, key, row, error);
  }

  // Whether any row of the map holds `key` (a session map: a session of it at any time), read with this reader's
  // transaction and cursor: one seek in the range the store derives from the key (Store::ScanRange), no
  // allocation. Errors (a row that does not decode, LMDB) are returned; `budget` (a remote READ's, else
  // nullptr) is charged per row examined. REQUIRES: the map's keys are text and its store narrows by an exact key
  // (kInvalidArgument otherwise).
  Status HasAnyRowOf(Bytes key, bool* any, ReadBudget* budget) const;

  const Table& table() const { return table_; }
  const MapEnv& env() const { return *env_; }

 private:
  std::shared_ptr<MapEnv> env_;
  Txn txn_;
  Cursor cursor_;
  Table table_;
  SnapshotMemo memo_;  // emptied by Refresh(): it belongs to the snapshot
  mutable OwnFieldValues own_;  // Row::own_fields of every lookup (sized in Open)
};

}  // namespace planb
