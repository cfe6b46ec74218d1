// The Temporal Ranged State store type: versions of inclusive number ranges, each effective from a time.
// lookup(number, time) considers every range that contains the number, takes each one's latest version at or
// before `time`, and returns the one with the latest effective time; ties (same instant): the narrowest range
// wins, as in the ranged type (then the greater from, then the smaller to). Option key_format (key_format.h):
// number, ipv4 or ip (IP address ranges).
//
// On-disk format (version 2; bump kVersion if it changes; version 1 had no hash in the value):
//   data table          key = from + to (key_format.h: 8 bytes each, 16 for ip) + effective time (ordered i64)
//                       value = XXH3-64 of the value (the tie-break of one range and time: a merge keeps
//                       the higher) + value type (1 byte) + value bytes
//   type.range_index    the containment index of range_index.h over the ranges (from, to), all versions alike
// Lookup: one SET_RANGE/PREV on data to find the group, one mdb_get on the index, then per range containing the
// number one SET_RANGE (+ PREV) on data for its latest version at or before the time.
#include <algorithm>
#include <cstring>
#include <vector>
#include <string>
#include <vector>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "range_index.h"
#include "ranged_rows.h"

namespace planb {
namespace {

using ranged::Range;

constexpr uint32_t kVersion = 2;
constexpr const char* kTypeName = "Temporal Ranged State";
constexpr uint32_t kVersionSize = 8;  // a hash of the value: the tie-break of one range and time (ranged_rows.h)
constexpr uint32_t kMaxKeySize = ranged::kMaxRangeKeySize + 8;

class TemporalRangedStore final : public Store {
 public:
  explicit TemporalRangedStore(ranged::KeyFormat format)
      : format_(format), width_(ranged::BoundWidth(format)), range_size_(2 * width_), key_size_(range_size_ + 8) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    Range range;
    Code code = ranged::RecordRange(record, format_, kTypeName, &range, error);
    if (code != Code::kOk) return code;
    return Guard(error, [&] {
      uint8_t key[kMaxKeySize];
      ranged::PutRangeKey(range, width_, key);
      PutOrderedI64(key + range_size_, record.time_ms);
      uint8_t version[kVersionSize] = {};
      // A row past LMDB's limit is refused by mdb_put before a byte of its value is read: not hashed either.
      if (record.value.size < kMaxLmdbValueSize) {
        ranged::MakeVersion(kVersionSize, record.time_ms, record.value_type, record.value, version);
      }
      // The same range and time twice in one file: the later record wins.
      Code written = ranged::WriteDataRow(batch, Bytes(key, key_size_), version, kVersionSize, 0, record.value_type,
                                          record.value, error);
      if (written != Code::kOk) return written;
      ranged::RangeIndexWriter index;  // a batch is indexed too: the first one becomes the shard as it is
      written = index.Open(batch, width_, error);
      return written != Code::kOk ? written : index.Add(range, error);
    });
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] { return ranged::MergeRows(batch, shard, key_size_, width_, kVersionSize, stats, error); });
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    ranged::Bound x = 0;
    Code code = ranged::LookupBound(lookup, format_, &x, error);
    if (code != Code::kOk) return code;
    ranged::RangeGroup group;
    Bytes key;
    Bytes value;
    code = ranged::FindGroup(shard, width_, x, &group, &key, &value, error);
    if (code != Code::kOk) return code;
    // The row the group search landed on is the latest version of its range; when it is not after the time
    // asked about, it is that range's answer without another search (always so for single-version data).
    const MDB_val landed_key = key.mdb();
    const MDB_val landed_value = value.mdb();
    const bool landed_usable =
        key.size == key_size_ && GetOrderedI64(key.data + range_size_) <= lookup.time_ms;
    bool found = false;
    Range best_range;
    int64_t best_time = 0;
    for (uint32_t i = group.FirstEndingAtOrAfter(x); i < group.size(); ++i) {
      MDB_val k = landed_key;
      MDB_val v = landed_value;
      if (!landed_usable || !ranged::SameRangeKey(group.range_key(i), landed_key.mv_data, width_)) {
        code = LatestVersion(shard, group.range_key(i), lookup.time_ms, &k, &v, error);
        if (code == Code::kNotFound) continue;  // the range only starts later
        if (code != Code::kOk) return code;
      }
      const Range range = group.range(i);
      const int64_t time = GetOrderedI64(static_cast<const uint8_t*>(k.mv_data) + range_size_);
      if (!found || time > best_time || (time == best_time && ranged::Wins(range, best_range))) {
        found = true;
        best_range = range;
        best_time = time;
        key = Bytes(k);
        value = Bytes(v);
      }
    }
    if (!found) return Code::kNotFound;
    return ranged::DecodeDataRow(key, value, key_size_, kVersionSize, format_, kTypeName, row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    return ranged::DecodeDataRow(lmdb_key, value, key_size_, kVersionSize, format_, kTypeName, row, error);
  }

  // One cursor pass in LMDB order: a range's versions are contiguous and in time order, so each row is compared
  // with the range's previous kept row only (hash + value type + value bytes; copied, since a delete may move the bytes
  // of other rows on the page). Condensation always keeps a range's first row; when retention takes every row of
  // a range, the containment index is rebuilt at the end.
  Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats,
                ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      // Condensing a range that another overlaps would change answers: a lookup takes the latest version among
      // every range holding the number, so dropping A's repeat at t2 lets B's version between A's t1 and t2 win
      // after t2. Only ranges that overlap no other range are condensed.
      std::vector<Range> overlapping;
      if (request.condense) {
        Code code = OverlappingRanges(shard, &overlapping, error);
        if (code != Code::kOk) return code;
      }
      bool condensable = false;    // the range being walked overlaps no other
      uint8_t range_key[ranged::kMaxRangeKeySize];
      bool in_range = false;       // `range_key` is the range of the rows being walked
      bool kept_in_range = false;  // some row of it stays; `previous` is the last one kept
      bool range_lost = false;     // some range lost every row
      std::string previous;
      MDB_val k;
      MDB_val v;
      int rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_FIRST);
      while (rc == MDB_SUCCESS) {
        ++stats->rows_examined;
        if (k.mv_size != key_size_ || v.mv_size < 1) {
          return Fail(error, Code::kCorruption, "%s row of a %zu-byte key and a %zu-byte value", kTypeName, k.mv_size,
                      v.mv_size);
        }
        const auto* key = static_cast<const uint8_t*>(k.mv_data);
        if (!in_range || !ranged::SameRangeKey(range_key, key, width_)) {
          if (in_range && !kept_in_range) range_lost = true;
          std::memcpy(range_key, key, range_size_);
          in_range = true;
          kept_in_range = false;
          const Range range = ranged::GetRangeKey(key, width_);
          condensable = !std::binary_search(overlapping.begin(), overlapping.end(), range, ByFromThenTo);
        }
        const int64_t time = GetOrderedI64(key + range_size_);
        const Bytes value(v);
        bool remove = false;
        if (request.retain && time < request.retain_from_ms) {
          remove = true;
          ++stats->rows_deleted;
        } else if (request.condense && condensable && time < request.condense_before_ms && kept_in_range &&
                   Bytes(previous) == value) {
          remove = true;  // a repeated confirmation: the earlier version already says it
          ++stats->rows_condensed;
        } else {
          kept_in_range = true;
          previous.assign(static_cast<const char*>(v.mv_data), v.mv_size);
        }
        if (remove) {
          rc = mdb_cursor_del(shard.cursor, 0);
          if (rc != MDB_SUCCESS)
            return Fail(error, Code::kIOError, "deleting a %s row: %s", kTypeName, mdb_strerror(rc));
        }
        rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_NEXT);  // after a delete: the row that followed it
      }
      if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading %s rows: %s", kTypeName, mdb_strerror(rc));
      if (in_range && !kept_in_range) range_lost = true;
      return range_lost ? RebuildIndex(shard, /*only_if_stale=*/false, error) : Code::kOk;
    });
  }

  // Rows hold no reference to anything: mdb_cursor_del alone. The index waits for FinishDeletes.
  Code DeleteRow(const Table& shard, Bytes, Bytes, ErrorBuffer* error) noexcept override {
    const int rc = mdb_cursor_del(shard.cursor, 0);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "deleting a %s row: %s", kTypeName, mdb_strerror(rc));
    return Code::kOk;
  }

  Code FinishDeletes(const Table& shard, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] { return RebuildIndex(shard, /*only_if_stale=*/true, error); });
  }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    return ranged::KeyStartScanRange(bounds, format_, key_size_, range);  // time is last: it cannot narrow
  }

 private:
  static bool ByFromThenTo(const Range& a, const Range& b) { return a.from != b.from ? a.from < b.from : a.to < b.to; }

  // The distinct ranges of the data table that overlap at least one other range, sorted ByFromThenTo. Sorted by
  // from, a range overlaps an earlier one when it starts at or before the greatest end so far, and a later one
  // when the next range starts at or before its end.
  Code OverlappingRanges(const Table& shard, std::vector<Range>* out, ErrorBuffer* error) const {
    std::vector<Range> ranges;
    Code code = ranged::CollectRanges(shard, key_size_, width_, &ranges, error);
    if (code != Code::kOk) return code;
    std::sort(ranges.begin(), ranges.end(), ByFromThenTo);
    ranged::Bound max_to = 0;  // the greatest end of ranges[0, i)
    for (size_t i = 0; i < ranges.size(); ++i) {
      const bool earlier = i > 0 && ranges[i].from <= max_to;
      const bool later = i + 1 < ranges.size() && ranges[i + 1].from <= ranges[i].to;
      if (earlier || later) out->push_back(ranges[i]);
      max_to = i == 0 ? ranges[i].to : std::max(max_to, ranges[i].to);
    }
    return Code::kOk;
  }

  // Rebuilds the containment index from the data table (every range once, whatever its versions); with
  // `only_if_stale`, only when it lists a range without rows or a group at a from no range has (a range that lost
  // its last version is listed at least in its own from's group, so this finds every one). Cost: one read of the
  // data rows and of the index; a rebuild then writes the index anew, O(index size), quadratic when ranges nest.
  Code RebuildIndex(const Table& shard, bool only_if_stale, ErrorBuffer* error) const {
    std::vector<Range> ranges;
    Code code = ranged::CollectRanges(shard, key_size_, width_, &ranges, error);
    if (code != Code::kOk) return code;
    if (only_if_stale) {
      bool fits = false;
      code = ranged::IndexNamesOnly(shard, ranges, width_, ranged::RangeGroup::EntrySize(width_), 0, &fits, error);
      if (code != Code::kOk || fits) return code;
    }
    code = ranged::DropIndex(shard, error);
    if (code != Code::kOk) return code;
    ranged::RangeIndexWriter index;
    code = index.Open(shard, width_, error);
    for (size_t i = 0; code == Code::kOk && i < ranges.size(); ++i) code = index.Add(ranges[i], error);
    return code;
  }

  // The row of range `range_key` with the latest effective time <= `time`: SET_RANGE to (range, time) is that
  // row when the time matches exactly, otherwise the row before it, if it is still of this range.
  Code LatestVersion(const Table& table, const uint8_t* range_key, int64_t time, MDB_val* k, MDB_val* v,
                     ErrorBuffer* error) const {
    uint8_t probe[kMaxKeySize];
    std::memcpy(probe, range_key, range_size_);
    PutOrderedI64(probe + range_size_, time);
    *k = MDB_val{key_size_, probe};
    int rc = mdb_cursor_get(table.cursor, k, v, MDB_SET_RANGE);
    if (rc == MDB_SUCCESS && k->mv_size == key_size_ && ranged::SameRangeKey(k->mv_data, probe, width_) &&
        std::memcmp(static_cast<const uint8_t*>(k->mv_data) + range_size_, probe + range_size_, 8) == 0) {
      return Code::kOk;
    }
    if (rc == MDB_SUCCESS) {
      rc = mdb_cursor_get(table.cursor, k, v, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
      rc = mdb_cursor_get(table.cursor, k, v, MDB_LAST);
    }
    if (rc == MDB_NOTFOUND) return Code::kNotFound;
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading temporal ranged row: %s", mdb_strerror(rc));
    if (k->mv_size != key_size_ || !ranged::SameRangeKey(k->mv_data, probe, width_)) {
      return Code::kNotFound;
    }
    return Code::kOk;
  }

  const ranged::KeyFormat format_;
  const uint32_t width_;       // bytes per bound
  const uint32_t range_size_;  // from + to
  const uint32_t key_size_;    // from + to + time
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  ranged::KeyFormat format;
  if (!ranged::ParseKeyFormat(args, &format, error)) return nullptr;
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new TemporalRangedStore(format);
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
const OptionSpec kOptions[] = {ranged::kKeyFormatSpec};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "temporal_ranged";
  d.version = kVersion;
  d.summary = "Temporal Ranged State: number or IP range [from, to] + effective time -> value; latest at the time wins";
  d.options = kOptions;
  d.option_count = 1;
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
