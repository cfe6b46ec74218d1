// The Ranged State store type: inclusive number ranges [from, to] -> value; lookup(number) returns the value of
// a range that contains the number. Ranges may overlap and nest; where several contain it, the narrowest wins
// (ties: the greater from, then the smaller to), so the answer does not depend on load order.
//
// On-disk format (version 2; bump kVersion if it changes):
//   data table          key = from + to (ordered i64, 16 bytes)   value = value type (1 byte) + value bytes
//   type.range_index    the winner segments of segment_index.h, kept in every batch and shard
//                       (version 1 kept the containment index of range_index.h, quadratic in nesting)
// A record rewrites its row (the last write of a range wins); merges copy data rows and add their ranges to the
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

constexpr uint32_t kVersion = 2;
constexpr const char* kTypeName = "Ranged State";

class RangedStore final : public Store {
 public:
  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) noexcept override {
    Range range;
    Code code = ranged::RecordRange(record, kTypeName, &range, error);
    if (code != Code::kOk) return code;
    return Guard(error, [&] {
      uint8_t key[ranged::kRangeKeySize];
      ranged::PutRangeKey(range, key);
      Code written = ranged::WriteDataRow(batch, Bytes(key, sizeof(key)), record.value_type, record.value, error);
      if (written != Code::kOk) return written;
      ranged::SegmentIndexWriter index;  // a batch is indexed too: the first one becomes the shard as it is
      written = index.Open(batch, error);
      return written != Code::kOk ? written : index.Add(range, error);
    });
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) noexcept override {
    return Guard(error, [&] {
      ranged::SegmentIndexWriter index;
      const Code code = index.Open(shard, error);
      return code != Code::kOk ? code : ranged::MergeRows(batch, shard, ranged::kRangeKeySize, &index, stats, error);
    });
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const noexcept override {
    const uint8_t* winner_key = nullptr;
    Bytes key;
    Bytes value;
    const Code code = ranged::FindWinner(shard, lookup.number, &winner_key, &key, &value, error);
    if (code != Code::kOk) return code;
    // The row the search landed on (the widest range at the group's from) often wins, e.g. for disjoint ranges.
    if (key.size != ranged::kRangeKeySize || std::memcmp(key.data, winner_key, ranged::kRangeKeySize) != 0) {
      MDB_val k{ranged::kRangeKeySize, const_cast<uint8_t*>(winner_key)};
      MDB_val v;
      const int rc = mdb_get(shard.txn, shard.dbi, &k, &v);
      if (rc != MDB_SUCCESS) {
        const ranged::Range r = ranged::GetRangeKey(winner_key);
        return Fail(error, rc == MDB_NOTFOUND ? Code::kCorruption : Code::kIOError,
                    "reading range [%lld, %lld] named by the range index: %s", static_cast<long long>(r.from),
                    static_cast<long long>(r.to), mdb_strerror(rc));
      }
      key = Bytes(winner_key, ranged::kRangeKeySize);
      value = Bytes(v);
    }
    return ranged::DecodeDataRow(key, value, ranged::kRangeKeySize, kTypeName, row, error);
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row,
                 ErrorBuffer* error) const noexcept override {
    return ranged::DecodeDataRow(lmdb_key, value, ranged::kRangeKeySize, kTypeName, row, error);
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
      Code code = ranged::CollectRanges(shard, ranged::kRangeKeySize, &ranges, error);
      if (code != Code::kOk) return code;
      bool fits = false;
      code = ranged::IndexNamesOnly(shard, ranges, ranged::kSegmentSize, 8, &fits, error);
      if (code != Code::kOk || fits) return code;
      code = ranged::DropIndex(shard, error);
      if (code != Code::kOk) return code;
      ranged::SegmentIndexWriter index;
      code = index.Open(shard, error);
      for (size_t i = 0; code == Code::kOk && i < ranges.size(); ++i) code = index.Add(ranges[i], error);
      return code;
    });
  }

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range,
                 ErrorBuffer* error) const noexcept override {
    return ranged::NumberScanRange(bounds, ranged::kRangeKeySize, range);
  }
};

Store* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new RangedStore();
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

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = "ranged";
  d.version = kVersion;
  d.summary = "Ranged State: number range [from, to] -> value; the narrowest containing range wins";
  d.tables = kTables;
  d.table_count = 1;
  d.uses_key_scheme = false;
  d.lookup_key = LookupKeyKind::kNumber;
  d.lookup_uses_time = false;
  d.fields = kFields;
  d.field_count = 4;
  d.create_store = &Create;
  d.destroy_store = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
