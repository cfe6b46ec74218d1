// The State store type: key -> value, the last write wins. Keys go through the map's key scheme.
//
// On-disk format (version 1; bump kVersion if it changes):
//   LMDB key   = scheme prefix (no suffix: one row per key)
//   LMDB value = scheme stored key + value type (1 byte) + stored value (the scheme's EncodeValue of the value)
#include <cstring>

#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;

class StateStore final : public Store {
 public:
  explicit StateStore(const KeyScheme* scheme)
      : scheme_(scheme), form_(scheme->LookupForm()), values_as_given_(scheme->StoresValuesAsGiven()) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    if (record.kind != RecordKind::kReference) {
      return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a State map");
    }
    if (record.has_range) {
      return Fail(error, Code::kInvalidArgument, "State maps take a <key>, not a <range>/<from>/<to>");
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<reference> has no <key>");
    if (!record.has_value) return Fail(error, Code::kInvalidArgument, "<reference> has no <value>");
    const uint8_t type = static_cast<uint8_t>(record.value_type);
    KeyedRowWriter writer(batch, *scheme_, true, "State row");
    return writer.Put(record.key, Bytes(), Bytes(&type, 1), record.value, error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    KeyedRowWriter writer(shard, *scheme_, true, "State row", /*append=*/true);
    Code planned = writer.PlanMerge(batch, error);
    if (planned != Code::kOk) return planned;
    MDB_val k;
    MDB_val v;
    for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
         rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
      ++stats->rows_read;
      Bytes key;
      uint32_t prefix_size = 0;
      uint32_t stored_key_size = 0;
      Code code = writer.DecodeBatchRow(batch, Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, error);
      if (code != Code::kOk) return code;
      if (prefix_size != k.mv_size || v.mv_size < uint64_t{stored_key_size} + 1) {  // 64 bits: no wrap round
        return Fail(error, Code::kCorruption, "batch row is not a State row (%zu-byte key, %zu-byte value)",
                    k.mv_size, v.mv_size);
      }
      // The scheme's parts (prefix, stored key, stored value) are local to each LMDB file (clash numbers, ids),
      // so the key is placed again in the shard and the value again in its value table; the type byte is copied.
      const auto* data = static_cast<const uint8_t*>(v.mv_data);
      code = writer.PutBatchRow(key, Bytes(), Bytes(data + stored_key_size, 1),
                                Bytes(data + stored_key_size + 1, v.mv_size - stored_key_size - 1), error);
      if (code != Code::kOk) return code;
      ++stats->rows_written;
    }
    return writer.FinishMerge(error);
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    // One cursor descent: the row at the key's first candidate prefix, whose stored key proves it the key's.
    KeySearch search;
    Code code = FindKeyedRow(shard, *scheme_, form_, lookup.key, Bytes(), Seek::kExact, Intent::kRead, &search, error);
    if (code != Code::kOk) return code;
    row->key = lookup.key;
    return DecodePayload(shard, Bytes(search.row_value), StoredKeySizeOf(*scheme_, search, lookup.key), row, error);
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
    return DecodePayload(table, value, stored_key_size, row, error);
  }

  // State rows have no time: nothing to condense or retain (the descriptor declares no maintenance).
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer*) noexcept override {
    return Code::kOk;
  }

  Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) noexcept override {
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, 1, true, "State row", error);
  }

  Code FinishDeletes(const Table&, ErrorBuffer*) noexcept override { return Code::kOk; }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    range->has_lower = range->has_upper = false;
    if (!bounds.has_key) return Code::kOk;  // keys are hashed or length-ordered: only an exact key narrows
    KeyPrefix prefix;
    Code code = ResolveKey(table, *scheme_, bounds.key, 0, Intent::kRead, &prefix, error);
    if (code != Code::kOk) return code;
    range->has_lower = range->has_upper = true;
    range->lower = prefix;
    range->upper = prefix;
    return Code::kOk;
  }

 private:
  Code DecodePayload(const Table& table, Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) const {
    return DecodeTypedValue(*scheme_, values_as_given_, table, value, stored_key_size, "State row", row, error);
  }

  const KeyScheme* const scheme_;
  const KeyForm form_;  // the scheme's LookupForm, asked once: lookups on its forms make no scheme call
  const bool values_as_given_;  // the scheme's StoresValuesAsGiven, asked once
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
