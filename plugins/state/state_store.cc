// The State store type: key -> value, the last write wins. Keys go through the map's key scheme.
//
// On-disk format (version 1; bump kVersion if it changes):
//   LMDB key   = scheme prefix (no suffix: one row per key)
//   LMDB value = scheme stored key + value type (1 byte) + value bytes
#include <cstring>

#include "planb/keyed_rows.h"
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
    const uint8_t type = static_cast<uint8_t>(record.value_type);
    return WriteRow(batch, resolved, record.key, Bytes(&type, 1), record.value, error);
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
      // The scheme's parts (prefix, stored key) are local to each LMDB file (clash numbers, ids), so the key is
      // resolved again in the shard; the payload (type byte and value) is copied as it is.
      Resolved resolved;
      code = scheme_->Resolve(shard, key, Intent::kWrite, &resolved, error);
      if (code != Code::kOk) return code;
      Bytes payload(static_cast<const uint8_t*>(v.mv_data) + stored_key_size, v.mv_size - stored_key_size);
      code = WriteRow(shard, resolved, key, payload, Bytes(), error);
      if (code != Code::kOk) return code;
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
    return DecodePayload(value, scheme_->StoredKeySize(resolved, lookup.key), row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, &row->key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    // As strict as Merge: a batch that decodes here must merge (the receiving node verifies with this).
    if (prefix_size != lmdb_key.size) {
      return Fail(error, Code::kCorruption, "State row key of %zu bytes has %zu bytes after its %u-byte prefix",
                  lmdb_key.size, lmdb_key.size - prefix_size, prefix_size);
    }
    return DecodePayload(value, stored_key_size, row, error);
  }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    range->has_lower = range->has_upper = false;
    if (!bounds.has_key) return Code::kOk;  // keys are hashed or length-ordered: only an exact key narrows
    Resolved resolved;
    Code code = scheme_->Resolve(table, bounds.key, Intent::kRead, &resolved, error);
    if (code != Code::kOk) return code;
    range->has_lower = range->has_upper = true;
    range->lower = resolved.prefix;
    range->upper = resolved.prefix;
    return Code::kOk;
  }

 private:
  static Code DecodePayload(Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) {
    if (value.size < stored_key_size + 1 || !IsKnownValueType(value.data[stored_key_size])) {
      return Fail(error, Code::kCorruption, "State row value of %zu bytes has no valid value type", value.size);
    }
    row->value_type = static_cast<ValueType>(value.data[stored_key_size]);
    row->value = Bytes(value.data + stored_key_size + 1, value.size - stored_key_size - 1);
    return Code::kOk;
  }

  Code WriteRow(const Table& table, const Resolved& resolved, Bytes key, Bytes head, Bytes tail,
                ErrorBuffer* error) const {
    return PutKeyedRow(table, *scheme_, resolved, key, resolved.prefix.view(), head, tail, "State row", error);
  }

  const KeyScheme* const scheme_;
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  return CreateKeyedStore<StateStore>(args, error, "State");
}

void Destroy(Store* store) noexcept { delete static_cast<StateStore*>(store); }

const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "state";
  d.version = kVersion;
  d.summary = "State: key -> value; the last write wins";
  d.uses_key_scheme = true;
  d.lookup_key = LookupKeyKind::kText;
  d.fields = kFields;
  d.field_count = 3;
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
