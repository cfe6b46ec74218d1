#include "bucket_store.h"

#include <cstring>
#include <string>

#include "buckets.h"
#include "planb/encoding.h"
#include "planb/keyed_rows.h"

namespace planb::counters {
namespace {

// A row's parts after the scheme's; `agg` points into the row (valid like its views).
struct BucketRow {
  int64_t start = 0;
  int64_t width = 0;
  const uint8_t* agg = nullptr;
};

class BucketStore final : public Store {
 public:
  BucketStore(const KeyScheme* scheme, int64_t width, const Aggregate& aggregate)
      : scheme_(scheme),
        form_(scheme->LookupForm()),
        width_(width),
        agg_(aggregate),
        row_kind_(aggregate.type_name),
        head_size_(kWidthSize + aggregate.size) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) override {
    if (record.kind != RecordKind::kReference) {
      return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a %s map", row_kind_);
    }
    if (record.has_range) {
      return Fail(error, Code::kInvalidArgument, "%s maps take a <key>, not a <range>/<from>/<to>", row_kind_);
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<reference> has no <key>");
    uint8_t agg[kMaxAggregateSize];
    Code code = agg_.from_record(record, agg, error);
    if (code != Code::kOk) return code;
    BucketRow row;
    if (!BucketStart(record.time_ms, width_, &row.start)) {
      return Fail(error, Code::kInvalidArgument, "<time> of %lld ms has no bucket (before the first one)",
                  static_cast<long long>(record.time_ms));
    }
    row.width = width_;
    row.agg = agg;
    return Guard(error, [&] { return AddRow(batch, record.key, row, error); });
  }

  Code Merge(const Table& batch, const Table& shard, MergeStats* stats, ErrorBuffer* error) override {
    return Guard(error, [&] {
      MDB_val k;
      MDB_val v;
      for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
           rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
        if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
        ++stats->rows_read;
        Bytes key;
        BucketRow row;
        Code code = Decode(batch, Bytes(k), Bytes(v), &key, &row, error);
        if (code != Code::kOk) return code;
        int64_t aligned = 0;
        if (!BucketStart(row.start, row.width, &aligned) || aligned != row.start) {
          return Fail(error, Code::kCorruption,
                      "a batch's %s row has a bucket of %lld ms starting at %lld ms: not aligned", row_kind_,
                      static_cast<long long>(row.width), static_cast<long long>(row.start));
        }
        code = AddRow(shard, key, row, error);
        if (code != Code::kOk) return code;
        ++stats->rows_written;
      }
      return Code::kOk;
    });
  }

  Code Get(const Table& shard, const LookupKey& lookup, Row* row, ErrorBuffer* error) const override {
    uint8_t suffix[kStartSize];
    PutOrderedI64(suffix, lookup.time_ms);
    KeySearch search;
    Code code = FindKeyedRow(shard, *scheme_, form_, lookup.key, Bytes(suffix, kStartSize), Seek::kAtOrBefore,
                             Intent::kRead, &search, error);
    if (code != Code::kOk) return code;
    Bytes key;
    BucketRow found;
    code = Decode(shard, Bytes(search.row_key), Bytes(search.row_value), &key, &found, error);
    if (code != Code::kOk) return code;
    if (!BucketHolds(found.start, found.width, lookup.time_ms)) return Code::kNotFound;
    row->key = lookup.key;
    Fill(found, row);
    return Code::kOk;
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row, ErrorBuffer* error) const override {
    BucketRow found;
    Code code = Decode(table, lmdb_key, value, &row->key, &found, error);
    if (code != Code::kOk) return code;
    Fill(found, row);
    return Code::kOk;
  }

  // Retention: a row goes when its whole bucket lies before the cut (start + width <= retain_from_ms); a bucket
  // holding the cut stays whole, so a count is never partly dropped. Condensation is not declared yet.
  Code Maintain(const Table& shard, const MaintainRequest& request, MaintainStats* stats, ErrorBuffer* error) override {
    if (!request.retain) return Code::kOk;
    MDB_val k;
    MDB_val v;
    int rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_FIRST);
    while (rc == MDB_SUCCESS) {
      ++stats->rows_examined;
      Bytes key;
      BucketRow row;
      Code code = Decode(shard, Bytes(k), Bytes(v), &key, &row, error);
      if (code != Code::kOk) return code;
      if (static_cast<__int128>(row.start) + row.width <= request.retain_from_ms) {
        code = DeleteRow(shard, Bytes(k), Bytes(v), error);
        if (code != Code::kOk) return code;
        ++stats->rows_deleted;
      }
      rc = mdb_cursor_get(shard.cursor, &k, &v, MDB_NEXT);  // after a delete: the row that followed it
    }
    if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading %s rows: %s", row_kind_, mdb_strerror(rc));
    return Code::kOk;
  }

  Code DeleteRow(const Table& shard, Bytes lmdb_key, Bytes value, ErrorBuffer* error) override {
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, head_size_, /*has_value=*/false, row_kind_, error);
  }

  Code FinishDeletes(const Table&, ErrorBuffer*) override { return Code::kOk; }  // no tables of its own

  Code ScanRange(const Table& table, const ScanBounds& bounds, KeyRange* range, ErrorBuffer* error) const override {
    range->has_lower = range->has_upper = false;
    // Prefixes are hashed or length-ordered: without an exact key neither the key nor the time narrows.
    if (!bounds.has_key) return Code::kOk;
    if (bounds.has_time_bounds && bounds.time_min > bounds.time_max) return Code::kNotFound;
    KeyPrefix prefix;
    Code code = ResolveKey(table, *scheme_, bounds.key, kStartSize, Intent::kRead, &prefix, error);
    if (code != Code::kOk) return code;
    uint8_t time[kStartSize];
    PutOrderedI64(time, bounds.has_time_bounds ? bounds.time_min : INT64_MIN);
    if (!JoinKey(prefix, Bytes(time, kStartSize), &range->lower)) return Code::kNotFound;
    PutOrderedI64(time, bounds.has_time_bounds ? bounds.time_max : INT64_MAX);
    if (!JoinKey(prefix, Bytes(time, kStartSize), &range->upper)) return Code::kNotFound;
    range->has_lower = range->has_upper = true;
    return Code::kOk;
  }

 private:
  // The key and parts of one row of `table`, checked.
  Code Decode(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, BucketRow* row, ErrorBuffer* error) const {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    // 64 bits: a faulty scheme's sizes cannot wrap round to pass.
    if (lmdb_key.size != uint64_t{prefix_size} + kStartSize || value.size != uint64_t{stored_key_size} + head_size_) {
      return Fail(error, Code::kCorruption, "not a %s row: a %zu-byte key and a %zu-byte value", row_kind_,
                  lmdb_key.size, value.size);
    }
    row->start = GetOrderedI64(lmdb_key.data + prefix_size);
    const uint64_t width = GetU64(value.data + stored_key_size);
    row->agg = value.data + stored_key_size + kWidthSize;
    if (width == 0 || width > static_cast<uint64_t>(INT64_MAX) || !agg_.valid(row->agg)) {
      return Fail(error, Code::kCorruption, "a %s row holds a width of %llu ms or an aggregate that does not decode",
                  row_kind_, static_cast<unsigned long long>(width));
    }
    row->width = static_cast<int64_t>(width);
    return Code::kOk;
  }

  void Fill(const BucketRow& found, Row* row) const {
    row->effective_time_ms = found.start;
    row->value = Bytes();
    if (row->own_fields != nullptr) agg_.fill(found.agg, row);
  }

  // Adds `row` to `key`'s rows of `table` (see bucket_store.h). Not a lookup path: may allocate.
  Code AddRow(const Table& table, Bytes key, const BucketRow& row, ErrorBuffer* error) const {
    uint8_t suffix[kStartSize];
    PutOrderedI64(suffix, row.start);
    KeySearch search;
    Code code = FindKeyedRow(table, *scheme_, key, Bytes(suffix, kStartSize), Seek::kAtOrBefore, Intent::kWrite,
                             &search, error);
    if (code != Code::kOk && code != Code::kNotFound) return code;
    if (code == Code::kOk) {
      Bytes found_key;
      BucketRow found;
      code = Decode(table, Bytes(search.row_key), Bytes(search.row_value), &found_key, &found, error);
      if (code != Code::kOk) return code;
      if (BucketHolds(found.start, found.width, row.start)) {
        if (static_cast<__int128>(row.start) + row.width > static_cast<__int128>(found.start) + found.width) {
          return Overlap(key, row, found, error);
        }
        return AddInPlace(table, key, search, found, row.agg, error);
      }
    }
    if (search.key_found) {  // a narrower row of the key may start inside the new interval
      KeySearch next;
      code =
          FindKeyedRow(table, *scheme_, key, Bytes(suffix, kStartSize), Seek::kAtOrAfter, Intent::kRead, &next, error);
      if (code != Code::kOk && code != Code::kNotFound) return code;
      if (code == Code::kOk) {
        Bytes found_key;
        BucketRow found;
        code = Decode(table, Bytes(next.row_key), Bytes(next.row_value), &found_key, &found, error);
        if (code != Code::kOk) return code;
        if (BucketHolds(row.start, row.width, found.start)) return Overlap(key, row, found, error);
      }
    }
    uint8_t head[kWidthSize + kMaxAggregateSize];
    PutU64(head, static_cast<uint64_t>(row.width));
    std::memcpy(head + kWidthSize, row.agg, agg_.size);
    KeyedRowWriter writer(table, *scheme_, /*has_value=*/false, row_kind_);
    return writer.Put(key, Bytes(suffix, kStartSize), Bytes(head, head_size_), Bytes(), error);
  }

  // Adds `more` into the row `search` found (the cursor is on it), rewriting its aggregate in place.
  Code AddInPlace(const Table& table, Bytes key, const KeySearch& search, const BucketRow& found, const uint8_t* more,
                  ErrorBuffer* error) const {
    // Copies first: the views point into the page the write replaces.
    const std::string row_key(static_cast<const char*>(search.row_key.mv_data), search.row_key.mv_size);
    std::string value(static_cast<const char*>(search.row_value.mv_data), search.row_value.mv_size);
    if (!agg_.add(reinterpret_cast<uint8_t*>(&value[value.size() - agg_.size]), more)) {
      Escaped shown;
      IsoTime start;
      return Fail(error, Code::kInvalidArgument, "%s key '%s', bucket starting %s: the sum leaves its range", row_kind_,
                  Escape(key, &shown), FormatTime(found.start, &start));
    }
    MDB_val k{row_key.size(), const_cast<char*>(row_key.data())};
    MDB_val v{value.size(), &value[0]};
    const int rc = mdb_cursor_put(table.cursor, &k, &v, MDB_CURRENT);
    if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing a %s row: %s", row_kind_, mdb_strerror(rc));
    return Code::kOk;
  }

  Code Overlap(Bytes key, const BucketRow& row, const BucketRow& found, ErrorBuffer* error) const {
    Escaped shown;
    IsoTime a;
    IsoTime b;
    return Fail(error, Code::kInvalidArgument,
                "%s key '%s': a bucket of %lld ms starting %s overlaps the stored bucket of %lld ms starting %s "
                "(was the map's bucket changed?)",
                row_kind_, Escape(key, &shown), static_cast<long long>(row.width), FormatTime(row.start, &a),
                static_cast<long long>(found.width), FormatTime(found.start, &b));
  }

  const KeyScheme* const scheme_;
  const KeyForm form_;  // the scheme's LookupForm, asked once: lookups on its forms make no scheme call
  const int64_t width_;
  const Aggregate& agg_;
  const char* const row_kind_;
  const uint32_t head_size_;
};

}  // namespace

Store* CreateBucketStore(const PluginArgs* args, ErrorBuffer* error, const Aggregate& aggregate) {
  if (args->scheme == nullptr) {
    Fail(error, Code::kInvalidArgument, "the %s store needs a key scheme", aggregate.type_name);
    return nullptr;
  }
  int64_t width = 0;
  if (ParseBucketOption(*args, &width, error) != Code::kOk) return nullptr;
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new BucketStore(args->scheme, width, aggregate);
    return Code::kOk;
  });
  return store;
}

void DestroyBucketStore(Store* store) { delete static_cast<BucketStore*>(store); }

namespace {
const OptionSpec kBucketOptions[] = {
    {kBucketOption, kDefaultBucket, "width of a time bucket, aligned to the Unix epoch (e.g. 10s, 1m, 1h, 1d)"},
};
}  // namespace

PluginDescriptor BucketStoreDescriptor(const char* name, uint32_t version, const char* summary,
                                       const FieldSpec* fields, uint32_t field_count,
                                       Store* (*create)(const PluginArgs*, ErrorBuffer*), void (*destroy)(Store*)) {
  PluginDescriptor d;
  d.kind = PluginKind::kStoreType;
  d.name = name;
  d.version = version;
  d.summary = summary;
  d.options = kBucketOptions;
  d.option_count = sizeof(kBucketOptions) / sizeof(kBucketOptions[0]);
  d.uses_key_scheme = true;
  d.key_suffix_size = kStartSize;
  d.lookup_key = LookupKeyKind::kText;
  d.lookup_uses_time = true;
  d.maintenance = kMaintainRetain;
  d.fields = fields;
  d.field_count = field_count;
  d.create_store = create;
  d.destroy_store = destroy;
  return d;
}

}  // namespace planb::counters
