// The Temporal Ranged State store type: versions of inclusive number ranges, each effective from a time.
// lookup(number, time) considers every range that contains the number, takes each one's latest version at or
// before `time`, and returns the one with the latest effective time; ties (same instant): the narrowest range
// wins, as in the ranged type (then the greater from, then the smaller to).
//
// On-disk format (version 1; bump kVersion if it changes):
//   data table          key = from + to + effective time (ordered i64 each, 24 bytes)
//                       value = value type (1 byte) + value bytes
//   type.range_index    the containment index of range_index.h over the ranges (from, to), all versions alike
// Lookup: one SET_RANGE/PREV on data to find the group, one mdb_get on the index, then per range containing the
// number one SET_RANGE (+ PREV) on data for its latest version at or before the time.
#include <cstring>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "range_index.h"
#include "ranged_rows.h"

namespace planb {
namespace {

using ranged::Range;

constexpr uint32_t kVersion = 1;
constexpr const char* kTypeName = "Temporal Ranged State";
constexpr uint32_t kKeySize = ranged::kRangeKeySize + 8;

class TemporalRangedStore final : public Store {
 public:
  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    Range range;
    Code code = ranged::RecordRange(record, kTypeName, &range, error);
    if (code != Code::kOk) return code;
    return Guard(error, [&] {
      uint8_t key[kKeySize];
      ranged::PutRangeKey(range, key);
      PutOrderedI64(key + ranged::kRangeKeySize, record.time_ms);
      Code written = ranged::WriteDataRow(batch, Bytes(key, sizeof(key)), record.value_type, record.value, error);
      if (written != Code::kOk) return written;
      ranged::RangeIndexWriter index;  // a batch is indexed too: the first one becomes the shard as it is
      written = index.Open(batch, error);
      return written != Code::kOk ? written : index.Add(range, error);
    });
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] { return ranged::MergeRows(batch, shard, kKeySize, stats, error); });
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    ranged::RangeGroup group;
    Bytes key;
    Bytes value;
    Code code = ranged::FindGroup(shard, lookup.number, &group, &key, &value, error);
    if (code != Code::kOk) return code;
    // The row the group search landed on is the latest version of its range; when it is not after the time
    // asked about, it is that range's answer without another search (always so for single-version data).
    const MDB_val landed_key = key.mdb();
    const MDB_val landed_value = value.mdb();
    const bool landed_usable =
        key.size == kKeySize && GetOrderedI64(key.data + ranged::kRangeKeySize) <= lookup.time_ms;
    bool found = false;
    Range best_range;
    int64_t best_time = 0;
    for (uint32_t i = group.FirstEndingAtOrAfter(lookup.number); i < group.size(); ++i) {
      MDB_val k = landed_key;
      MDB_val v = landed_value;
      if (!landed_usable || std::memcmp(group.range_key(i), landed_key.mv_data, ranged::kRangeKeySize) != 0) {
        code = LatestVersion(shard, group.range_key(i), lookup.time_ms, &k, &v, error);
        if (code == Code::kNotFound) continue;  // the range only starts later
        if (code != Code::kOk) return code;
      }
      const Range range = group.range(i);
      const int64_t time = GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + ranged::kRangeKeySize);
      if (!found || time > best_time || (time == best_time && ranged::Wins(range, best_range))) {
        found = true;
        best_range = range;
        best_time = time;
        key = Bytes(k);
        value = Bytes(v);
      }
    }
    if (!found) return Code::kNotFound;
    return ranged::DecodeDataRow(key, value, kKeySize, kTypeName, row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    return ranged::DecodeDataRow(lmdb_key, value, kKeySize, kTypeName, row, error);
  }

  // TODO(issue 14): maintenance of Temporal Ranged State rows.
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer* error) noexcept override {
    return Fail(error, Code::kNotSupported, "maintenance of Temporal Ranged State maps is not built yet");
  }
  Code DeleteRow(const Table&, Bytes, Bytes, ErrorBuffer* error) noexcept override {
    return Fail(error, Code::kNotSupported, "deleting Temporal Ranged State rows is not built yet");
  }
  Code FinishDeletes(const Table&, ErrorBuffer*) noexcept override { return Code::kOk; }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    return ranged::NumberScanRange(bounds, kKeySize, range);  // time is the last key part: it cannot narrow
  }

 private:
  // The row of range `range_key` with the latest effective time <= `time`: SET_RANGE to (range, time) is that
  // row when the time matches exactly, otherwise the row before it, if it is still of this range.
  static Code LatestVersion(const Table& table, const uint8_t* range_key, int64_t time, MDB_val* k, MDB_val* v,
                            ErrorBuffer* error) {
    uint8_t probe[kKeySize];
    std::memcpy(probe, range_key, ranged::kRangeKeySize);
    PutOrderedI64(probe + ranged::kRangeKeySize, time);
    *k = MDB_val{sizeof(probe), probe};
    int rc = mdb_cursor_get(table.cursor, k, v, MDB_SET_RANGE);
    if (rc == MDB_SUCCESS && k->mv_size == kKeySize && std::memcmp(k->mv_data, probe, kKeySize) == 0) {
      return Code::kOk;
    }
    if (rc == MDB_SUCCESS) {
      rc = mdb_cursor_get(table.cursor, k, v, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
      rc = mdb_cursor_get(table.cursor, k, v, MDB_LAST);
    }
    if (rc == MDB_NOTFOUND) return Code::kNotFound;
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading temporal ranged row: %s", mdb_strerror(rc));
    if (k->mv_size != kKeySize || std::memcmp(k->mv_data, probe, ranged::kRangeKeySize) != 0) {
      return Code::kNotFound;
    }
    return Code::kOk;
  }
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new TemporalRangedStore();
    return Code::kOk;
  });
  return store;
}

void Destroy(Store* store) noexcept { delete static_cast<TemporalRangedStore*>(store); }

const FieldSpec kFields[] = {
    {"KeyStart", FieldKind::kNumber, RowField::kKeyStart},
    {"KeyEnd", FieldKind::kNumber, RowField::kKeyEnd},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};

const char* const kTables[] = {ranged::kIndexTableName};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "temporal_ranged";
  d.version = kVersion;
  d.summary = "Temporal Ranged State: number range [from, to] + effective time -> value; latest at the time wins";
  d.tables = kTables;
  d.table_count = 1;
  d.uses_key_scheme = false;
  d.lookup_key = LookupKeyKind::kNumber;
  d.lookup_uses_time = true;
  d.maintenance = kMaintainRetain | kMaintainCondense;
  d.fields = kFields;
  d.field_count = 5;
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
