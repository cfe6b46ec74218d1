// Lookups on one map environment through its store type, reusing one read transaction and one cursor, so that
// a warm lookup allocates nothing. Not thread-safe: use one MapReader per thread.
// The reader sees the environment as of Open() or the last Refresh(); row views stay valid until the next
// Refresh() or the reader's destruction.
#pragma once

#include <memory>

#include "host/storage/map_env.h"
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

  // kOk fills `row`, kNotFound is a miss, anything else an error described in `error`.
  Code Lookup(const LookupKey& key, Row* row, ErrorBuffer* error) const {
    return env_->plugins().store()->Get(table_, key, row, error);
  }

  const Table& table() const { return table_; }
  const MapEnv& env() const { return *env_; }

 private:
  std::shared_ptr<MapEnv> env_;
  Txn txn_;
  Cursor cursor_;
  Table table_;
};

}  // namespace planb
