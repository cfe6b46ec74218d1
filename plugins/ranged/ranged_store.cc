// The Ranged State store type: inclusive number ranges [from, to] -> value; lookup(number) returns the value of
// a range that contains the number. Option key_format (key_format.h): number, ipv4 or ip (IP address ranges). Ranges may overlap and nest; where several contain it, the narrowest wins
// (ties: the greater from, then the smaller to), so the answer does not depend on load order.
//
// On-disk format (version 3; bump kVersion if it changes; version 2 had no version in the value):
//   data table          key = from + to (key_format.h: 16 bytes; 32 for key_format ip)
//                       value = effective time (ordered i64) + XXH3-64 of the value (the row's version: a merge
//                       keeps the higher) + value type (1 byte) + value bytes
//   type.range_index    the winner segments of segment_index.h, kept in every batch and shard
//                       (version 1 kept the containment index of range_index.h, quadratic in nesting)
// A record rewrites its row (the latest effective time of a range wins; in one file, of equal times the later
// record; between batches the higher version, whatever their order); merges copy data rows and add their ranges to the
// shard's own index. Lookup: one SET_RANGE/PREV on data, one mdb_get on the index, at most one more on data.
#include <cstring>
#include <vector>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "ranged_rows.h"
#include "segment_index.h"

namespace planb {
namespace {

using ranged::Range;

constexpr uint32_t kVersion = 3;
constexpr uint32_t kVersionSize = 16;  // effective time + hash of the value (ranged_rows.h)
constexpr uint32_t kTimeBytes = 8;
constexpr const char* kTypeName = "Ranged State";

class RangedStore final : public Store {
 public:
  explicit RangedStore(ranged::KeyFormat format)
      : format_(format), width_(ranged::BoundWidth(format)), key_size_(2 * width_) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    Range range;
    Code code = ranged::RecordRange(record, format_, kTypeName, &range, error);
    if (code != Code::kOk) return code;
    return Guard(error, [&] {
      uint8_t key[ranged::kMaxRangeKeySize];
      ranged::PutRangeKey(range, width_, key);
      uint8_t version[kVersionSize] = {};
      // A row past LMDB's limit is refused by mdb_put before a byte of its value is read: not hashed either.
      if (record.value.size < kMaxLmdbValueSize) {
        ranged::MakeVersion(kVersionSize, record.time_ms, record.value_type, record.value, version);
      }
      // The same range twice in one file: the later effective time wins, and of equal times the later record.
      Code written = ranged::WriteDataRow(batch, Bytes(key, key_size_), version, kVersionSize, kTimeBytes,
                                          record.value_type, record.value, error);
      if (written != Code::kOk) return written;
      ranged::SegmentIndexWriter index;  // a batch is indexed too: the first one becomes the shard as it is
      written = index.Open(batch, width_, error);
      return written != Code::kOk ? written : index.Add(range, error);
    });
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      ranged::SegmentIndexWriter index;
      const Code code = index.Open(shard, width_, error);
      return code != Code::kOk ? code : ranged::MergeRows(batch, shard, key_size_, width_, kVersionSize, &index, stats,
                                                                     error);
    });
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    ranged::Bound x = 0;
    Code code = ranged::LookupBound(lookup, format_, &x, error);
    if (code != Code::kOk) return code;
    const uint8_t* winner_key = nullptr;
    Bytes key;
    Bytes value;
    code = ranged::FindWinner(shard, width_, x, &winner_key, &key, &value, error);
    if (code != Code::kOk) return code;
    // The row the search landed on (the widest range at the group's from) often wins, e.g. for disjoint ranges.
    if (key.size != key_size_ || !ranged::SameRangeKey(key.data, winner_key, width_)) {
      MDB_val k{key_size_, const_cast<uint8_t*>(winner_key)};
      MDB_val v;
      const int rc = mdb_get(shard.txn, shard.dbi, &k, &v);
      if (rc != MDB_SUCCESS) {
        const ranged::Range r = ranged::GetRangeKey(winner_key, width_);
        char from[ranged::kBoundText];
        char to[ranged::kBoundText];
        return Fail(error, rc == MDB_NOTFOUND ? Code::kCorruption : Code::kIOError,
                    "reading range [%s, %s] named by the range index: %s", ranged::FormatBound(r.from, format_, from),
                    ranged::FormatBound(r.to, format_, to), mdb_strerror(rc));
      }
      key = Bytes(winner_key, key_size_);
      value = Bytes(v);
    }
    return ranged::DecodeDataRow(key, value, key_size_, kVersionSize, format_, kTypeName, row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    return ranged::DecodeDataRow(lmdb_key, value, key_size_, kVersionSize, format_, kTypeName, row, error);
  }

  // Ranged rows have no time: nothing to condense or retain (the descriptor declares no maintenance).
  Code Maintain(const Table&, const MaintainRequest&, MaintainStats*, ErrorBuffer*) noexcept override {
    return Code::kOk;
  }

  // Rows hold no reference to anything: mdb_cursor_del alone. The index waits for FinishDeletes.
  Code DeleteRow(const Table& shard, Bytes, Bytes, ErrorBuffer* error) noexcept override {
    const int rc = mdb_cursor_del(shard.cursor, 0);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "deleting a Ranged State row: %s", mdb_strerror(rc));
    return Code::kOk;
  }

  // The segment index is rebuilt from the data table when it names a range that went or has a group at a from no
  // range has any more (reads the data rows and the index once; the rebuild writes the index anew). A deleted
  // range that won nowhere and shared its from leaves the index as it was: the index is a function of the set.
  Code FinishDeletes(const Table& shard, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      std::vector<Range> ranges;
      Code code = ranged::CollectRanges(shard, key_size_, width_, &ranges, error);
      if (code != Code::kOk) return code;
      bool fits = false;
      code = ranged::IndexNamesOnly(shard, ranges, width_, ranged::SegmentSize(width_), width_, &fits, error);
      if (code != Code::kOk || fits) return code;
      code = ranged::DropIndex(shard, error);
      if (code != Code::kOk) return code;
      ranged::SegmentIndexWriter index;
      code = index.Open(shard, width_, error);
      for (size_t i = 0; code == Code::kOk && i < ranges.size(); ++i) code = index.Add(ranges[i], error);
      return code;
    });
  }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    return ranged::KeyStartScanRange(bounds, format_, key_size_, range);
  }

 private:
  const ranged::KeyFormat format_;
  const uint32_t width_;     // bytes per bound
  const uint32_t key_size_;  // from + to
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  ranged::KeyFormat format;
  if (!ranged::ParseKeyFormat(args, &format, error)) return nullptr;
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new RangedStore(format);
    return Code::kOk;
  });
  return store;
}

void Destroy(Store* store) noexcept { delete static_cast<RangedStore*>(store); }

const FieldSpec kFields[] = {
    {"KeyStart", FieldKind::kNumber, RowField::kKeyStart},
    {"KeyEnd", FieldKind::kNumber, RowField::kKeyEnd},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};

const char* const kTables[] = {ranged::kIndexTableName};
const OptionSpec kOptions[] = {ranged::kKeyFormatSpec};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "ranged";
  d.version = kVersion;
  d.summary = "Ranged State: number or IP address range [from, to] -> value; the narrowest containing range wins";
  d.options = kOptions;
  d.option_count = 1;
  d.tables = kTables;
  d.table_count = 1;
  d.uses_key_scheme = false;
  d.lookup_key = LookupKeyKind::kNumber;
  d.lookup_uses_time = false;
  d.fields = kFields;
  d.field_count = 4;
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  d.answers_by_containing_ranges = true;  // the narrowest containing range wins: nothing else decides
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
