// One LMDB environment holding one map's rows: a shard, a batch being written or merged, or a snapshot.
// Tables: "data" (the store type's rows) and "meta" (see shard_meta.h), checked against the config at open; in a
// shard also "batches" (content_version.h), made by the first merge that records a batch, and "tombstones"
// (host/ingest/tombstones.h), made by the first deletion merged.
// Thread-safety: the handle may be shared between threads (each with its own transactions).
// LMDB forbids opening one environment twice in a process: share MapEnvs through EnvCache.
#pragma once

#include <lmdb.h>

#include <memory>
#include <string>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "planb/lmdb.h"
#include "planb/status.h"

namespace planb {

class MapEnv {
 public:
  enum class Mode {
    kCreate,        // make the directory, the tables and the meta (a new batch)
    kOpenExisting,  // NotFound when there is no data.mdb; refuses a meta that does not match `plugins`.
                    // Works on read-only environments too (env_flags with MDB_RDONLY, e.g. kSnapshotFlags);
                    // with MDB_RDONLY on a directory whose lock.mdb this process may not write (another user's
                    // home, a read-only mount), opens with MDB_NOLOCK added.
  };
  // Batches are written without fsync per commit and synced once when finished.
  static constexpr unsigned kBatchFlags = MDB_NOTLS | MDB_NOSYNC | MDB_NOMETASYNC;
  static constexpr unsigned kShardFlags = MDB_NOTLS;
  // A copy nobody writes (a snapshot, or a shard copy being checked): no lock file, no reader slots.
  static constexpr unsigned kSnapshotFlags = MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS;

  // Either mode refuses (kCorruption, naming the file and both sizes) a data.mdb shorter than its meta page's last
  // page: LMDB would fault with SIGBUS reading past the end of the file.
  static Status Open(const std::string& path, std::shared_ptr<const MapPlugins> plugins, Mode mode,
                     unsigned env_flags, std::shared_ptr<MapEnv>* out);

  MDB_env* env() const { return env_.get(); }
  MDB_dbi data() const { return data_; }
  MDB_dbi meta() const { return meta_; }
  // Opens, creating it when missing, the "batches" table in `write_txn` (a write transaction of this env); the
  // handle stays valid once that transaction commits. REQUIRES: no other transaction of this env opens a table
  // meanwhile (LMDB's rule for mdb_dbi_open; merges of a shard run one at a time).
  Status OpenBatchesTable(MDB_txn* write_txn, MDB_dbi* out) const;
  // The "batches" table as it was when this environment was opened (kOpenExisting), for readers beside a merge;
  // 0 when the shard had none then (no batch recorded yet, or one the merge that made it recorded since: a reader
  // then sees "not recorded", which only costs a merge that changes nothing).
  MDB_dbi batches() const { return batches_; }
  // What plugins are handed: the data table and the plugins' own tables, in `txn`, moved with `cursor`.
  Table MakeTable(MDB_txn* txn, MDB_cursor* cursor) const {
    Table table;
    table.txn = txn;
    table.dbi = data_;
    table.cursor = cursor;
    if (!store_tables_.empty()) table.store_tables = store_tables_.data();
    if (!scheme_tables_.empty()) table.scheme_tables = scheme_tables_.data();
    return table;
  }
  const std::string& path() const { return path_; }
  const MapPlugins& plugins() const { return *plugins_; }
  Status Sync() { return env_.Sync().WithContext(path_); }
  // Whether <path>/data.mdb is no longer the file this environment has open (a compaction swapped the shard in,
  // shard_compaction.h, or the shard was deleted): one stat and one fstat, comparing device and inode; a path that
  // cannot be looked at for another reason (EACCES) counts as not replaced. Whoever wants the current shard opens
  // the path again (EnvCache::Get does).
  bool Replaced() const;

 private:
  MapEnv() = default;

  std::string path_;
  std::shared_ptr<const MapPlugins> plugins_;
  Status OpenTables(Txn* txn, unsigned create_flag);

  Env env_;
  MDB_dbi data_ = 0;
  MDB_dbi meta_ = 0;
  MDB_dbi batches_ = 0;
  std::vector<MDB_dbi> store_tables_;
  std::vector<MDB_dbi> scheme_tables_;
};

}  // namespace planb
