// The State store type: key -> value, the last write wins. Keys go through the map's key scheme.
//
// On-disk format (version 1; bump kVersion if it changes):
//   LMDB key   = scheme prefix (no suffix: one row per key)
//   LMDB value = scheme stored key + value type (1 byte) + value bytes
#include <cstring>

#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;

class StateStore final : public Store {
 public:
  explicit StateStore(const KeyScheme* scheme) : scheme_(scheme) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    if (record.kind != RecordKind::kReference) {
      return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a State map");
    }
    if (record.has_range) {
      return Fail(error, Code::kInvalidArgument, "State maps take a <key>, not a <range>/<from>/<to>");
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<reference> has no <key>");
    if (!record.has_value) return Fail(error, Code::kInvalidArgument, "<reference> has no <value>");
    Resolved resolved;
    Code code = scheme_->Resolve(batch, record.key, Intent::kWrite, &resolved, error);
    if (code != Code::kOk) return code;
    return WriteRow(batch, resolved.prefix.view(), record.key, record.value_type, record.value, error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    MDB_val k;
    MDB_val v;
    for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
         rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
      ++stats->rows_read;
      Bytes key;
      uint32_t prefix_size = 0;
      uint32_t stored_key_size = 0;
      Code code = scheme_->DecodeRow(batch, Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, error);
      if (code != Code::kOk) return code;
      if (prefix_size != k.mv_size || v.mv_size < stored_key_size + 1) {
        return Fail(error, Code::kCorruption, "batch row is not a State row (%zu-byte key, %zu-byte value)",
                    k.mv_size, v.mv_size);
      }
      // Clash numbers are local to each LMDB file, so the shard's prefix is resolved again; the value bytes
      // (stored key, type, value) are copied as they are.
      Resolved resolved;
      code = scheme_->Resolve(shard, key, Intent::kWrite, &resolved, error);
      if (code != Code::kOk) return code;
      MDB_val target_key = resolved.prefix.view().mdb();
      int put = mdb_put(shard.txn, shard.dbi, &target_key, &v, 0);
      if (put != MDB_SUCCESS) return Fail(error, PutCode(put), "writing shard row: %s", mdb_strerror(put));
      ++stats->rows_written;
    }
    return Code::kOk;
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    Resolved resolved;
    Code code = scheme_->Resolve(shard, lookup.key, Intent::kRead, &resolved, error);
    if (code != Code::kOk) return code;
    Bytes value = resolved.first_value;
    if (value.data == nullptr) {
      MDB_val k = resolved.prefix.view().mdb();
      MDB_val v;
      int rc = mdb_get(shard.txn, shard.dbi, &k, &v);
      if (rc == MDB_NOTFOUND) return Code::kNotFound;
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading State row: %s", mdb_strerror(rc));
      value = Bytes(v);
    }
    row->key = lookup.key;
    return DecodePayload(value, scheme_->StoredKeySize(lookup.key), row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, &row->key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    return DecodePayload(value, stored_key_size, row, error);
  }

 private:
  static Code PutCode(int rc) { return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError; }

  static Code DecodePayload(Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) {
    if (value.size < stored_key_size + 1 || !IsKnownValueType(value.data[stored_key_size])) {
      return Fail(error, Code::kCorruption, "State row value of %zu bytes has no valid value type", value.size);
    }
    row->value_type = static_cast<ValueType>(value.data[stored_key_size]);
    row->value = Bytes(value.data + stored_key_size + 1, value.size - stored_key_size - 1);
    return Code::kOk;
  }

  // Reserves the row in place (MDB_RESERVE) so the value is assembled without a temporary buffer.
  Code WriteRow(const Table& table, Bytes lmdb_key, Bytes key, ValueType type, Bytes value,
                ErrorBuffer* error) const {
    uint32_t stored = scheme_->StoredKeySize(key);
    MDB_val k = lmdb_key.mdb();
    MDB_val v{stored + 1 + value.size, nullptr};
    int rc = mdb_put(table.txn, table.dbi, &k, &v, MDB_RESERVE);
    if (rc != MDB_SUCCESS) return Fail(error, PutCode(rc), "writing State row: %s", mdb_strerror(rc));
    auto* out = static_cast<uint8_t*>(v.mv_data);
    scheme_->WriteStoredKey(key, out);
    out[stored] = static_cast<uint8_t>(type);
    if (value.size != 0) std::memcpy(out + stored + 1, value.data, value.size);
    return Code::kOk;
  }

  const KeyScheme* const scheme_;
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  if (args->scheme == nullptr) {
    Fail(error, Code::kInvalidArgument, "the State store needs a key scheme");
    return nullptr;
  }
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new StateStore(args->scheme);
    return Code::kOk;
  });
  return store;
}

void Destroy(Store* store) noexcept { delete static_cast<StateStore*>(store); }

const PluginDescriptor kDescriptor = {
    kAbiVersion, PluginKind::kStoreType, "state", kVersion, "State: key -> value; the last write wins",
    nullptr, 0, true, 0, 0, &Create, &Destroy, nullptr, nullptr,
};

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
