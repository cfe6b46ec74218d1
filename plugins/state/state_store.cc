// The State store type: key -> value; the value with the latest effective time wins (ties: the higher hash of
// the value), whatever order batches merge in, so storage nodes that merged the same batches hold the same rows.
// Keys go through the map's key scheme.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 had no version in the head, and its shards
// are refused with a hint to reload):
//   LMDB key   = scheme prefix (no suffix: one row per key)
//   LMDB value = scheme stored key + head + stored value (the scheme's EncodeValue of the value), where
//   head       = effective time (8 bytes big-endian, sign bit flipped: byte order is time order)
//                + XXH3-64 of the value, seeded with the value type byte (8 bytes big-endian: the tie-break)
//                + value type (1 byte)
// The first 16 bytes are the row's version; KeyedRowWriter::KeepHigherHead keeps the higher one.
#include <xxhash.h>

#include <cstring>

#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 2;
constexpr uint32_t kTimeSize = 8;
constexpr uint32_t kVersionSize = 16;
constexpr uint32_t kHeadSize = kVersionSize + 1;

void MakeHead(int64_t time_ms, ValueType type, Bytes value, uint8_t head[kHeadSize]) {
  PutU64(head, static_cast<uint64_t>(time_ms) ^ (uint64_t{1} << 63));
  const uint8_t type_byte = static_cast<uint8_t>(type);
  PutU64(head + 8, XXH3_64bits_withSeed(value.data, value.size, type_byte));
  head[kVersionSize] = type_byte;
}

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
    uint8_t head[kHeadSize] = {};
    // A row past LMDB's limit is refused by the writer before a byte of it is read: not hashed either.
    if (uint64_t{record.key.size} + record.value.size <= kMaxLmdbValueSize) {
      MakeHead(record.time_ms, record.value_type, record.value, head);
    }
    KeyedRowWriter writer(batch, *scheme_, true, "State row");
    // A key written twice in one file: the later effective time wins, and of two at the same time the later
    // record (a batch is written once, so this order is the same on every node).
    writer.KeepHigherHead(kTimeSize, /*ties_replace=*/true);
    return writer.Put(record.key, Bytes(), Bytes(head, kHeadSize), record.value, error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    KeyedRowWriter writer(shard, *scheme_, true, "State row", /*append=*/true);
    writer.KeepHigherHead(kVersionSize);  // order-free: the higher version stays, whichever batch came first
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
      if (prefix_size != k.mv_size || v.mv_size < uint64_t{stored_key_size} + kHeadSize) {  // 64 bits: no wrap
        return Fail(error, Code::kCorruption, "batch row is not a State row (%zu-byte key, %zu-byte value)",
                    k.mv_size, v.mv_size);
      }
      // The scheme's parts (prefix, stored key, stored value) are local to each LMDB file (clash numbers, ids),
      // so the key is placed again in the shard and the value again in its value table; the head is copied.
      const auto* data = static_cast<const uint8_t*>(v.mv_data);
      code = writer.PutBatchRow(key, Bytes(), Bytes(data + stored_key_size, kHeadSize),
                                Bytes(data + stored_key_size + kHeadSize, v.mv_size - stored_key_size - kHeadSize),
                                error);
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
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, kHeadSize, true, "State row", error);
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
  // The version's time is the row's effective time (deletions compare it); the type byte and the stored value
  // follow the version.
  Code DecodePayload(const Table& table, Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) const {
    if (value.size < uint64_t{stored_key_size} + kHeadSize) {
      return Fail(error, Code::kCorruption, "State row value of %zu bytes is shorter than its stored key and head",
                  value.size);
    }
    row->effective_time_ms = GetOrderedI64(value.data + stored_key_size);
    return DecodeTypedValue(*scheme_, values_as_given_, table, value, stored_key_size + kVersionSize, "State row", row,
                            error);
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
  d.summary = "State: key -> value; the latest effective time wins, in any merge order";
  d.uses_key_scheme = true;
  d.lookup_key = LookupKeyKind::kText;
  d.fields = kFields;
  d.field_count = 3;
  d.answers_by_stored_keys = true;  // one row per key, found by its stored key, answered as the row says
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
