// Helpers for store types whose rows are keyed through a KeyScheme: what State, Temporal State and Session
// share. Header-only conveniences over the SDK interfaces; using them is optional and changes no ABI.
#pragma once

#include <cstring>
#include <new>

#include "planb/key_scheme.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/table.h"

namespace planb {

// The Code of a failed mdb_put: kFull when the map or the transaction is full (the user can raise
// max_store_size), kIOError otherwise.
inline Code PutFailureCode(int rc) {
  return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError;
}

// Writes `lmdb_key` -> the scheme's stored key for `key` + `head` + `tail`, reserved in place (MDB_RESERVE) so
// the value is assembled without a temporary buffer. `row_kind` names the row in messages ("State row").
inline Code PutKeyedRow(const Table& table, const KeyScheme& scheme, const Resolved& resolved, Bytes key,
                        Bytes lmdb_key, Bytes head, Bytes tail, const char* row_kind, ErrorBuffer* error) {
  const uint32_t stored = scheme.StoredKeySize(resolved, key);
  MDB_val k = lmdb_key.mdb();
  MDB_val v{stored + head.size + tail.size, nullptr};
  const int rc = mdb_put(table.txn, table.dbi, &k, &v, MDB_RESERVE);
  if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing %s: %s", row_kind, mdb_strerror(rc));
  auto* out = static_cast<uint8_t*>(v.mv_data);
  scheme.WriteStoredKey(resolved, key, out);
  if (head.size != 0) std::memcpy(out + stored, head.data, head.size);
  if (tail.size != 0) std::memcpy(out + stored + head.size, tail.data, tail.size);
  return Code::kOk;
}

// A PluginDescriptor::create_store for a store type `T(const KeyScheme*)` that needs the map's key scheme.
template <typename T>
Store* CreateKeyedStore(const PluginArgs* args, ErrorBuffer* error, const char* type_name) noexcept {
  if (args->scheme == nullptr) {
    Fail(error, Code::kInvalidArgument, "the %s store needs a key scheme", type_name);
    return nullptr;
  }
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new T(args->scheme);
    return Code::kOk;
  });
  return store;
}

}  // namespace planb
