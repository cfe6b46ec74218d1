// Move-only RAII wrappers for LMDB handles, in lmdb++'s shape but returning Status/bool instead of throwing:
// Env, Txn (read-only with MDB_RDONLY, else a write transaction) and Cursor.
// Thread-safety: as LMDB's. A read Txn is used by one thread at a time; with MDB_NOTLS (the host opens every env
// with it) it may move between threads while reset. Cursors must be closed before their transaction ends.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <lmdb.h>

#include <string>
#include <string_view>
#include <utility>

#include "planb/bytes.h"
#include "planb/status.h"

namespace planb {

// The Status of a failed LMDB call, naming what was being done. Builds no string on success (hot paths).
inline Status LmdbStatus(int rc, std::string_view what) {
  if (rc == MDB_SUCCESS) return Status();
  Code code = Code::kIOError;
  switch (rc) {
    case MDB_NOTFOUND: code = Code::kNotFound; break;
    case MDB_CORRUPTED:
    case MDB_INVALID:
    case MDB_PAGE_NOTFOUND:
    case MDB_VERSION_MISMATCH:
    case MDB_BAD_VALSIZE:
    case MDB_INCOMPATIBLE: code = Code::kCorruption; break;
    case MDB_MAP_FULL:
    case MDB_TXN_FULL:
    case MDB_READERS_FULL:
    case MDB_DBS_FULL: code = Code::kFull; break;
    case MDB_BAD_TXN:
    case EINVAL: code = Code::kInvalidArgument; break;
    default: break;
  }
  return Status(code, std::string(what) + ": " + mdb_strerror(rc));
}

class Env {
 public:
  Env() = default;
  ~Env() { Close(); }
  Env(Env&& o) noexcept : env_(std::exchange(o.env_, nullptr)) {}
  Env& operator=(Env&& o) noexcept {
    if (this != &o) {
      Close();
      env_ = std::exchange(o.env_, nullptr);
    }
    return *this;
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  struct Options {
    size_t map_size = size_t{10} << 30;
    unsigned max_readers = 126;
    unsigned max_dbs = 4;
    unsigned flags = MDB_NOTLS;
  };

  // Opens the environment in directory `path` (which must exist).
  Status Open(const std::string& path, const Options& options) {
    Close();
    MDB_env* env = nullptr;
    int rc = mdb_env_create(&env);
    if (rc == MDB_SUCCESS) rc = mdb_env_set_mapsize(env, options.map_size);
    if (rc == MDB_SUCCESS) rc = mdb_env_set_maxreaders(env, options.max_readers);
    if (rc == MDB_SUCCESS) rc = mdb_env_set_maxdbs(env, options.max_dbs);
    if (rc == MDB_SUCCESS) rc = mdb_env_open(env, path.c_str(), options.flags, 0644);
    if (rc != MDB_SUCCESS) {
      if (env != nullptr) mdb_env_close(env);
      if (rc == MDB_INVALID) return Status::Corruption(path + "/data.mdb: not an LMDB file");
      return LmdbStatus(rc, "opening LMDB environment " + path);
    }
    env_ = env;
    return Status();
  }

  // Flushes data to disk even when the env was opened with MDB_NOSYNC.
  Status Sync() { return LmdbStatus(mdb_env_sync(env_, 1), "syncing LMDB environment"); }

  void Close() {
    if (env_ != nullptr) mdb_env_close(env_);
    env_ = nullptr;
  }
  MDB_env* get() const { return env_; }
  explicit operator bool() const { return env_ != nullptr; }

 private:
  MDB_env* env_ = nullptr;
};

// A transaction; aborted on destruction unless committed. ReadTxn and WriteTxn below fix the mode.
class Txn {
 public:
  Txn() = default;
  ~Txn() { Abort(); }
  Txn(Txn&& o) noexcept : txn_(std::exchange(o.txn_, nullptr)) {}
  Txn& operator=(Txn&& o) noexcept {
    if (this != &o) {
      Abort();
      txn_ = std::exchange(o.txn_, nullptr);
    }
    return *this;
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  Status Begin(MDB_env* env, unsigned flags) {
    Abort();
    return LmdbStatus(mdb_txn_begin(env, nullptr, flags, &txn_), "beginning LMDB transaction");
  }
  Status Commit() {
    MDB_txn* t = std::exchange(txn_, nullptr);  // a failed commit frees the txn too
    return LmdbStatus(mdb_txn_commit(t), "committing LMDB transaction");
  }
  void Abort() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = nullptr;
  }
  // Read-only transactions: release the snapshot but keep the reader slot, then take a fresh snapshot.
  void Reset() {
    if (txn_ != nullptr) mdb_txn_reset(txn_);
  }
  Status Renew() {
    if (txn_ == nullptr) return Status::Invalid("renewing a transaction that was never begun");
    return LmdbStatus(mdb_txn_renew(txn_), "renewing LMDB read transaction");
  }

  // Opens (or with MDB_CREATE creates) the named table `name`; nullptr opens the environment's main table (the
  // one that lists the named tables).
  // Since SDK 7.0; nullptr since SDK 7.3.
  Status OpenDbi(const char* name, unsigned flags, MDB_dbi* dbi) {
    if (txn_ == nullptr) return Status::Invalid("opening a table outside a transaction");
    const int rc = mdb_dbi_open(txn_, name, flags, dbi);
    if (rc == MDB_SUCCESS) return Status();
    const std::string table = name == nullptr ? std::string("the main table") : "table '" + std::string(name) + "'";
    if (rc == MDB_NOTFOUND) return Status::NotFound("no " + table);
    if (rc == MDB_INCOMPATIBLE || rc == MDB_INVALID) return Status::Corruption(table + " is not a Plan B table");
    return LmdbStatus(rc, "opening " + table);
  }

  // Returns false on a miss; `value` points into the map until the transaction ends or resets.
  bool Get(MDB_dbi dbi, Bytes key, Bytes* value, int* rc_out = nullptr) const {
    MDB_val k = key.mdb();
    MDB_val v;
    int rc = mdb_get(txn_, dbi, &k, &v);
    if (rc_out != nullptr) *rc_out = rc;
    if (rc != MDB_SUCCESS) return false;
    *value = Bytes(v);
    return true;
  }
  Status Put(MDB_dbi dbi, Bytes key, Bytes value, unsigned flags = 0) {
    MDB_val k = key.mdb();
    MDB_val v = value.mdb();
    return LmdbStatus(mdb_put(txn_, dbi, &k, &v, flags), "writing LMDB row");
  }

  MDB_txn* get() const { return txn_; }
  explicit operator bool() const { return txn_ != nullptr; }

 private:
  MDB_txn* txn_ = nullptr;
};

class Cursor {
 public:
  Cursor() = default;
  ~Cursor() { Close(); }
  Cursor(Cursor&& o) noexcept : cursor_(std::exchange(o.cursor_, nullptr)) {}
  Cursor& operator=(Cursor&& o) noexcept {
    if (this != &o) {
      Close();
      cursor_ = std::exchange(o.cursor_, nullptr);
    }
    return *this;
  }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  Status Open(MDB_txn* txn, MDB_dbi dbi) {
    Close();
    return LmdbStatus(mdb_cursor_open(txn, dbi, &cursor_), "opening LMDB cursor");
  }
  // Moves the cursor; false when there is no such row. Views are valid until the transaction ends.
  bool Get(MDB_cursor_op op, Bytes* key, Bytes* value) {
    MDB_val k = key->mdb();
    MDB_val v{};
    if (mdb_cursor_get(cursor_, &k, &v, op) != MDB_SUCCESS) return false;
    *key = Bytes(k);
    *value = Bytes(v);
    return true;
  }
  void Close() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    cursor_ = nullptr;
  }
  MDB_cursor* get() const { return cursor_; }

 private:
  MDB_cursor* cursor_ = nullptr;
};

}  // namespace planb
