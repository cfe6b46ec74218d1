// The Temporal State store type: each key has values over time; a lookup at time T returns the value with the
// latest effective time at or before T. Keys go through the map's key scheme.
//
// On-disk format (version 1; bump kVersion if it changes):
//   LMDB key   = scheme prefix + effective time (8 bytes, PutOrderedI64: big-endian, sign bit flipped)
//   LMDB value = scheme stored key + value type (1 byte) + stored value (the scheme's EncodeValue of the value)
// The scheme's prefix is self-delimiting (key_suffix_size = 8), so one key's rows are contiguous and in time
// order, and a lookup is one seek plus at most one step back. The same key and time again overwrites the row.
#include <cstring>

#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kTimeSize = 8;

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
  explicit TemporalStore(const KeyScheme* scheme) : scheme_(scheme) {}

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
    const uint8_t type = static_cast<uint8_t>(record.value_type);
    uint8_t time[kTimeSize];
    PutOrderedI64(time, record.time_ms);
    KeyedRowWriter writer(batch, *scheme_, true, "Temporal State row");
    return writer.Put(record.key, Bytes(time, kTimeSize), Bytes(&type, 1), record.value, error);
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    KeyedRowWriter writer(shard, *scheme_, true, "Temporal State row", /*append=*/true);
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
      if (k.mv_size != prefix_size + kTimeSize || v.mv_size < stored_key_size + 1) {
        return Fail(error, Code::kCorruption, "batch row is not a Temporal State row (%zu-byte key, %zu-byte value)",
                    k.mv_size, v.mv_size);
      }
      // The scheme's parts are local to each LMDB file (clash numbers, ids), so the key is placed again in the
      // shard (once per key: the writer remembers it) and the value re-encoded; time and type are copied.
      const auto* data = static_cast<const uint8_t*>(v.mv_data);
      Bytes value;
      code = scheme_->DecodeValue(batch, Bytes(data + stored_key_size + 1, v.mv_size - stored_key_size - 1), &value,
                                  error);
      if (code != Code::kOk) return code;
      code = writer.Put(key, Bytes(static_cast<const uint8_t*>(k.mv_data) + prefix_size, kTimeSize),
                        Bytes(data + stored_key_size, 1), value, error);
      if (code != Code::kOk) return code;
      ++stats->rows_written;
    }
    return Code::kOk;
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    // The key's last row at or before (key, time): one seek to the first candidate + time, at most one step
    // back. Times are compared as bytes, so INT64_MIN and INT64_MAX need no special case.
    uint8_t time[kTimeSize];
    PutOrderedI64(time, lookup.time_ms);
    KeySearch search;
    Code code = FindKeyedRow(shard, *scheme_, lookup.key, Bytes(time, kTimeSize), Seek::kAtOrBefore, Intent::kRead,
                             &search, error);
    if (code != Code::kOk) return code;
    row->key = lookup.key;
    row->effective_time_ms = GetOrderedI64(static_cast<const uint8_t*>(search.row_key.mv_data) + search.prefix.size);
    return DecodePayload(shard, Bytes(search.row_value), scheme_->StoredKeySize(search.prefix, lookup.key), row,
                         error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, &row->key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    if (lmdb_key.size != prefix_size + kTimeSize) {
      return Fail(error, Code::kCorruption, "Temporal State row key of %zu bytes is not its %u-byte prefix + %u",
                  lmdb_key.size, prefix_size, kTimeSize);
    }
    row->effective_time_ms = GetOrderedI64(lmdb_key.data + prefix_size);
    return DecodePayload(table, value, stored_key_size, row, error);
  }

  // TODO(issue 14): maintenance of Temporal State rows.
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer* error) noexcept override {
    return Fail(error, Code::kNotSupported, "maintenance of Temporal State maps is not built yet");
  }
  Code DeleteRow(const Table&, Bytes, Bytes, ErrorBuffer* error) noexcept override {
    return Fail(error, Code::kNotSupported, "deleting Temporal State rows is not built yet");
  }
  Code FinishDeletes(const Table&, ErrorBuffer*) noexcept override { return Code::kOk; }

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
  Code DecodePayload(const Table& table, Bytes value, uint32_t stored_key_size, Row* row, ErrorBuffer* error) const {
    if (value.size < stored_key_size + 1 || !IsKnownValueType(value.data[stored_key_size])) {
      return Fail(error, Code::kCorruption, "Temporal State row value of %zu bytes has no valid value type",
                  value.size);
    }
    row->value_type = static_cast<ValueType>(value.data[stored_key_size]);
    return scheme_->DecodeValue(table, Bytes(value.data + stored_key_size + 1, value.size - stored_key_size - 1),
                                &row->value, error);
  }

  const KeyScheme* const scheme_;
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
