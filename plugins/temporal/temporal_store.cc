// The Temporal State store type: each key has values over time; a lookup at time T returns the value with the
// latest effective time at or before T. Keys go through the map's key scheme.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 had no tie-break in the head):
//   LMDB key   = scheme prefix + effective time (8 bytes, PutOrderedI64: big-endian, sign bit flipped)
//   LMDB value = scheme stored key + head + stored value (the scheme's EncodeValue of the value), where
//   head       = XXH3-64 of the value, seeded with the value type byte (8 bytes big-endian) + value type (1 byte)
// The scheme's prefix is self-delimiting (key_suffix_size = 8), so one key's rows are contiguous and in time
// order, and a lookup is one seek plus at most one step back. The same key and time again: in one batch the later
// record wins; between batches the higher hash, so merges give the same rows in any order.
#include <xxhash.h>

#include <cstring>
#include <string>

#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 2;
constexpr uint32_t kTimeSize = 8;
constexpr uint32_t kHashSize = 8;
constexpr uint32_t kHeadSize = kHashSize + 1;

// The LMDB key prefix + `time_ms` (on the caller's stack). False when the prefix leaves no room for the time,
// which a scheme honouring key_suffix_size never does.
bool MakeRowKey(const KeyPrefix& prefix, int64_t time_ms, KeyPrefix* out) {
  if (prefix.size > kMaxLmdbKeySize - kTimeSize) return false;
  std::memcpy(out->bytes, prefix.bytes, prefix.size);
  PutOrderedI64(out->bytes + prefix.size, time_ms);
  out->size = prefix.size + kTimeSize;
  return true;
}

class TemporalStore final : public Store {
 public:
  explicit TemporalStore(const KeyScheme* scheme)
      : scheme_(scheme), form_(scheme->LookupForm()), values_as_given_(scheme->StoresValuesAsGiven()) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    if (record.kind != RecordKind::kReference) {
      return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a Temporal State map");
    }
    if (record.has_range) {
      return Fail(error, Code::kInvalidArgument,
                  "Temporal State maps take a <key>, not a <range>/<from>/<to> (use a temporal_ranged map)");
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<reference> has no <key>");
    if (!record.has_value) return Fail(error, Code::kInvalidArgument, "<reference> has no <value>");
    uint8_t head[kHeadSize] = {};
    head[kHashSize] = static_cast<uint8_t>(record.value_type);
    // A row past LMDB's limit is refused by the writer before a byte of it is read: not hashed either.
    if (uint64_t{record.key.size} + record.value.size <= kMaxLmdbValueSize) {
      PutU64(head, XXH3_64bits_withSeed(record.value.data, record.value.size, head[kHashSize]));
    }
    uint8_t time[kTimeSize];
    PutOrderedI64(time, record.time_ms);
    KeyedRowWriter writer(batch, *scheme_, true, "Temporal State row");
    return writer.Put(record.key, Bytes(time, kTimeSize), Bytes(head, kHeadSize), record.value, error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    KeyedRowWriter writer(shard, *scheme_, true, "Temporal State row", /*append=*/true);
    writer.KeepHigherHead(kHashSize);  // the same key and time in two batches: the higher hash, in any order
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
      if (k.mv_size != uint64_t{prefix_size} + kTimeSize || v.mv_size < uint64_t{stored_key_size} + kHeadSize) {
        return Fail(error, Code::kCorruption, "batch row is not a Temporal State row (%zu-byte key, %zu-byte value)",
                    k.mv_size, v.mv_size);
      }
      // The scheme's parts are local to each LMDB file (clash numbers, ids), so the key is placed again in the
      // shard (once per key: the writer remembers it) and the value again in its value table; time and head are
      // copied.
      const auto* data = static_cast<const uint8_t*>(v.mv_data);
      code = writer.PutBatchRow(key, Bytes(static_cast<const uint8_t*>(k.mv_data) + prefix_size, kTimeSize),
                                Bytes(data + stored_key_size, kHeadSize),
                                Bytes(data + stored_key_size + kHeadSize, v.mv_size - stored_key_size - kHeadSize),
                                error);
      if (code != Code::kOk) return code;
      ++stats->rows_written;
    }
    return writer.FinishMerge(error);
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    // The key's last row at or before (key, time): one seek to the first candidate + time, at most one step
    // back. Times are compared as bytes, so INT64_MIN and INT64_MAX need no special case.
    uint8_t time[kTimeSize];
    PutOrderedI64(time, lookup.time_ms);
    KeySearch search;
    Code code = FindKeyedRow(shard, *scheme_, form_, lookup.key, Bytes(time, kTimeSize), Seek::kAtOrBefore,
                             Intent::kRead, &search, error);
    if (code != Code::kOk) return code;
    row->key = lookup.key;
    row->effective_time_ms = GetOrderedI64(static_cast<const uint8_t*>(search.row_key.mv_data) + search.prefix.size);
    return DecodePayload(shard, Bytes(search.row_value), StoredKeySizeOf(*scheme_, search, lookup.key), row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, &row->key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    if (lmdb_key.size != uint64_t{prefix_size} + kTimeSize) {  // 64 bits: no wrap round
      return Fail(error, Code::kCorruption, "Temporal State row key of %zu bytes is not its %u-byte prefix + %u",
                  lmdb_key.size, prefix_size, kTimeSize);
    }
    row->effective_time_ms = GetOrderedI64(lmdb_key.data + prefix_size);
    return DecodePayload(table, value, stored_key_size, row, error);
  }

  // One cursor pass in LMDB order: a key's rows are contiguous and in time order, so each row is compared with
  // the key's previous kept row only. Values are compared decoded (value_dedup stores a reference, which may
  // differ between equal values written by different streams) and copied, since releasing a removed row's
  // value may delete the value-table entry a view pointed into.
  Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats,
                ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      KeyPrefix previous_prefix;  // of the key's previous kept row; size 0 = none
      previous_prefix.size = 0;
      uint8_t previous_type = 0;
      std::string previous_value;
      MDB_val k;
      MDB_val v;
      int rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_FIRST);
      while (rc == MDB_SUCCESS) {
        ++stats->rows_examined;
        Bytes key;
        uint32_t prefix_size = 0;
        uint32_t stored_key_size = 0;
        Code code = scheme_->DecodeRow(shard, Bytes(k), Bytes(v), &key, &prefix_size, &stored_key_size, error);
        if (code != Code::kOk) return code;
        if (k.mv_size != uint64_t{prefix_size} + kTimeSize || v.mv_size < uint64_t{stored_key_size} + kHeadSize) {
          return Fail(error, Code::kCorruption, "Temporal State row of a %zu-byte key and a %zu-byte value", k.mv_size,
                      v.mv_size);
        }
        const auto* key_bytes = static_cast<const uint8_t*>(k.mv_data);
        const auto* data = static_cast<const uint8_t*>(v.mv_data);
        const int64_t time = GetOrderedI64(key_bytes + prefix_size);
        const bool same_key =
            previous_prefix.size == prefix_size && std::memcmp(previous_prefix.bytes, key_bytes, prefix_size) == 0;
        bool remove = false;
        if (request.retain && time < request.retain_from_ms) {
          remove = true;
          ++stats->rows_deleted;
          previous_prefix.size = 0;  // the key's next row becomes its first: it stays
        } else {
          Bytes value;
          code = scheme_->DecodeValue(
              shard, Bytes(data + stored_key_size + kHeadSize, v.mv_size - stored_key_size - kHeadSize), &value, error);
          if (code != Code::kOk) return code;
          const uint8_t type = data[stored_key_size + kHashSize];
          if (request.condense && time < request.condense_before_ms && same_key && type == previous_type &&
              Bytes(previous_value) == value) {
            remove = true;  // a repeated confirmation: the earlier row already says it
            ++stats->rows_condensed;
          } else {
            std::memcpy(previous_prefix.bytes, key_bytes, prefix_size);
            previous_prefix.size = prefix_size;
            previous_type = type;
            previous_value.assign(reinterpret_cast<const char*>(value.data), value.size);
          }
        }
        if (remove) {
          code = DeleteKeyedRow(shard, *scheme_, Bytes(k), Bytes(v), kHeadSize, true, "Temporal State row", error);
          if (code != Code::kOk) return code;
        }
        rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_NEXT);  // after a delete: the row that followed it
      }
      if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading Temporal State rows: %s", mdb_strerror(rc));
      return Code::kOk;
    });
  }

  Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) noexcept override {
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, kHeadSize, true, "Temporal State row", error);
  }

  Code FinishDeletes(const Table&, ErrorBuffer*) noexcept override { return Code::kOk; }  // no tables of its own

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    range->has_lower = range->has_upper = false;
    // Prefixes are hashed or length-ordered: without an exact key neither the key nor the time narrows.
    if (!bounds.has_key) return Code::kOk;
    if (bounds.has_time_bounds && bounds.time_min > bounds.time_max) return Code::kNotFound;
    KeyPrefix prefix;
    Code code = ResolveKey(table, *scheme_, bounds.key, kTimeSize, Intent::kRead, &prefix, error);
    if (code != Code::kOk) return code;
    if (!MakeRowKey(prefix, bounds.has_time_bounds ? bounds.time_min : INT64_MIN, &range->lower) ||
        !MakeRowKey(prefix, bounds.has_time_bounds ? bounds.time_max : INT64_MAX, &range->upper)) {
      return Code::kNotFound;
    }
    range->has_lower = range->has_upper = true;
    return Code::kOk;
  }

 private:
  // The hash is skipped: the type byte and the stored value follow it.
  Code DecodePayload(const Table& table, Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) const {
    if (value.size < uint64_t{stored_key_size} + kHeadSize) {
      return Fail(error, Code::kCorruption,
                  "Temporal State row value of %zu bytes is shorter than its stored key and head", value.size);
    }
    return DecodeTypedValue(*scheme_, values_as_given_, table, value, stored_key_size + kHashSize,
                            "Temporal State row", row, error);
  }

  const KeyScheme* const scheme_;
  const KeyForm form_;  // the scheme's LookupForm, asked once: lookups on its forms make no scheme call
  const bool values_as_given_;  // the scheme's StoresValuesAsGiven, asked once
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  return CreateKeyedStore<TemporalStore>(args, error, "Temporal State");
}

void Destroy(Store* store) noexcept { delete static_cast<TemporalStore*>(store); }

const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "temporal";
  d.version = kVersion;
  d.summary = "Temporal State: key + effective time -> value; lookups return the latest value at or before a time";
  d.uses_key_scheme = true;
  d.key_suffix_size = kTimeSize;
  d.lookup_key = LookupKeyKind::kText;
  d.lookup_uses_time = true;
  d.maintenance = kMaintainRetain | kMaintainCondense;
  d.fields = kFields;
  d.field_count = sizeof(kFields) / sizeof(kFields[0]);
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
