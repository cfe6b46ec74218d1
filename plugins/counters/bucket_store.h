// The store type both histogram and metric are: per key, per time bucket, one row holding an aggregate of the
// <value>s of the records whose <time> falls in the bucket; a batch adds into a shard. `Agg` says what the
// aggregate is (histogram_store.cc: a count; metric_store.cc: count, sum, min, max) and how it adds.
//
// On-disk format (the type's version; bump it in the descriptor if anything here changes):
//   LMDB key   = scheme prefix + bucket start (8 bytes, PutOrderedI64: big-endian, sign bit flipped)
//   LMDB value = scheme stored key + bucket width in ms (8 bytes, big-endian, > 0) + Agg (Agg::kSize bytes)
// A key's rows are contiguous and in start order. Each row carries its own width so that rows of different widths
// can coexist (condensation may later roll old buckets into wider ones; the map's `bucket` may change): the
// intervals [start, start + width) of one key never overlap, so the row holding an instant is the last row
// starting at or before it, and a lookup is one seek plus at most one step back.
//
// Adding a row (a record into a batch, a batch row into a shard) at (key, start, width): into the key's row
// holding `start` when that row also holds the whole new interval (the same bucket, or a wider one already
// rolled up); a new row when no row of the key overlaps the interval; otherwise kInvalidArgument (a wider
// bucket over narrower rows cannot be split). Sums that leave their range are refused, never wrapped.
//
// Agg provides: kSize; static Code FromRecord(const Record&, Agg*, ErrorBuffer*) (the record's <value>);
// Code Add(const Agg&) (false on overflow); void Encode(uint8_t*) const; static bool Decode(const uint8_t*,
// Agg*) (false for bytes no Encode writes); void Fill(Row*) const (its own fields).
#pragma once

#include <cstdint>
#include <string>

#include "buckets.h"
#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/plugin.h"

namespace planb::counters {

inline constexpr uint32_t kStartSize = 8;
inline constexpr uint32_t kWidthSize = 8;

// A row's parts after the scheme's.
template <typename Agg>
struct BucketRow {
  int64_t start = 0;
  int64_t width = 0;
  Agg agg;
};

template <typename Agg>
class BucketStore final : public Store {
 public:
  static constexpr uint32_t kHeadSize = kWidthSize + Agg::kSize;

  // `type_name` names rows in messages ("histogram").
  BucketStore(const KeyScheme* scheme, int64_t width, const char* type_name)
      : scheme_(scheme), width_(width), row_kind_(type_name) {}

  Code Put(const Table& batch, const Record& record, ErrorBuffer* error) override {
    if (record.kind != RecordKind::kReference) {
      return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a %s map", row_kind_);
    }
    if (record.has_range) {
      return Fail(error, Code::kInvalidArgument, "%s maps take a <key>, not a <range>/<from>/<to>", row_kind_);
    }
    if (!record.has_key) return Fail(error, Code::kInvalidArgument, "<reference> has no <key>");
    BucketRow<Agg> row;
    Code code = Agg::FromRecord(record, &row.agg, error);
    if (code != Code::kOk) return code;
    if (!BucketStart(record.time_ms, width_, &row.start)) {
      return Fail(error, Code::kInvalidArgument, "<time> of %lld ms has no bucket (before the first one)",
                  static_cast<long long>(record.time_ms));
    }
    row.width = width_;
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
        BucketRow<Agg> row;
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
    Code code = FindKeyedRow(shard, *scheme_, lookup.key, Bytes(suffix, kStartSize), Seek::kAtOrBefore, Intent::kRead,
                             &search, error);
    if (code != Code::kOk) return code;
    Bytes key;
    BucketRow<Agg> found;
    code = Decode(shard, Bytes(search.row_key), Bytes(search.row_value), &key, &found, error);
    if (code != Code::kOk) return code;
    if (!BucketHolds(found.start, found.width, lookup.time_ms)) return Code::kNotFound;
    row->key = lookup.key;
    Fill(found, row);
    return Code::kOk;
  }

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Row* row, ErrorBuffer* error) const override {
    BucketRow<Agg> found;
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
      BucketRow<Agg> row;
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
    return DeleteKeyedRow(shard, *scheme_, lmdb_key, value, kHeadSize, /*has_value=*/false, row_kind_, error);
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
  Code Decode(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, BucketRow<Agg>* row,
              ErrorBuffer* error) const {
    uint32_t prefix_size = 0;
    uint32_t stored_key_size = 0;
    Code code = scheme_->DecodeRow(table, lmdb_key, value, key, &prefix_size, &stored_key_size, error);
    if (code != Code::kOk) return code;
    if (lmdb_key.size != prefix_size + kStartSize || value.size != stored_key_size + kHeadSize) {
      return Fail(error, Code::kCorruption, "not a %s row: a %zu-byte key and a %zu-byte value", row_kind_,
                  lmdb_key.size, value.size);
    }
    row->start = GetOrderedI64(lmdb_key.data + prefix_size);
    const uint64_t width = GetU64(value.data + stored_key_size);
    if (width == 0 || width > static_cast<uint64_t>(INT64_MAX) ||
        !Agg::Decode(value.data + stored_key_size + kWidthSize, &row->agg)) {
      return Fail(error, Code::kCorruption, "a %s row holds a width of %llu ms or an aggregate that does not decode",
                  row_kind_, static_cast<unsigned long long>(width));
    }
    row->width = static_cast<int64_t>(width);
    return Code::kOk;
  }

  void Fill(const BucketRow<Agg>& found, Row* row) const {
    row->effective_time_ms = found.start;
    row->value = Bytes();
    if (row->own_fields != nullptr) found.agg.Fill(row);
  }

  // Adds `row` to `key`'s rows of `table` (see the top of this file). Not a lookup path: may allocate.
  Code AddRow(const Table& table, Bytes key, const BucketRow<Agg>& row, ErrorBuffer* error) const {
    uint8_t suffix[kStartSize];
    PutOrderedI64(suffix, row.start);
    KeySearch search;
    Code code = FindKeyedRow(table, *scheme_, key, Bytes(suffix, kStartSize), Seek::kAtOrBefore, Intent::kWrite,
                             &search, error);
    if (code != Code::kOk && code != Code::kNotFound) return code;
    if (code == Code::kOk) {
      Bytes found_key;
      BucketRow<Agg> found;
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
        BucketRow<Agg> found;
        code = Decode(table, Bytes(next.row_key), Bytes(next.row_value), &found_key, &found, error);
        if (code != Code::kOk) return code;
        if (BucketHolds(row.start, row.width, found.start)) return Overlap(key, row, found, error);
      }
    }
    uint8_t head[kHeadSize];
    PutU64(head, static_cast<uint64_t>(row.width));
    row.agg.Encode(head + kWidthSize);
    KeyedRowWriter writer(table, *scheme_, /*has_value=*/false, row_kind_);
    return writer.Put(key, Bytes(suffix, kStartSize), Bytes(head, kHeadSize), Bytes(), error);
  }

  // Adds `more` into the row `search` found (the cursor is on it), rewriting its aggregate in place.
  Code AddInPlace(const Table& table, Bytes key, const KeySearch& search, const BucketRow<Agg>& found, const Agg& more,
                  ErrorBuffer* error) const {
    Agg sum = found.agg;
    if (!sum.Add(more)) {
      Escaped shown;
      IsoTime start;
      return Fail(error, Code::kInvalidArgument, "%s key '%s', bucket starting %s: the sum leaves its range", row_kind_,
                  Escape(key, &shown), FormatTime(found.start, &start));
    }
    // Copies first: the views point into the page the write replaces.
    const std::string row_key(static_cast<const char*>(search.row_key.mv_data), search.row_key.mv_size);
    std::string value(static_cast<const char*>(search.row_value.mv_data), search.row_value.mv_size);
    sum.Encode(reinterpret_cast<uint8_t*>(&value[value.size() - Agg::kSize]));
    MDB_val k{row_key.size(), const_cast<char*>(row_key.data())};
    MDB_val v{value.size(), &value[0]};
    const int rc = mdb_cursor_put(table.cursor, &k, &v, MDB_CURRENT);
    if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing a %s row: %s", row_kind_, mdb_strerror(rc));
    return Code::kOk;
  }

  Code Overlap(Bytes key, const BucketRow<Agg>& row, const BucketRow<Agg>& found, ErrorBuffer* error) const {
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
  const int64_t width_;
  const char* const row_kind_;
};

// A PluginDescriptor::create_store for BucketStore<Agg>: the map's scheme and its `bucket` option.
template <typename Agg>
Store* CreateBucketStore(const PluginArgs* args, ErrorBuffer* error, const char* type_name) {
  if (args->scheme == nullptr) {
    Fail(error, Code::kInvalidArgument, "the %s store needs a key scheme", type_name);
    return nullptr;
  }
  int64_t width = 0;
  if (ParseBucketOption(*args, &width, error) != Code::kOk) return nullptr;
  Store* store = nullptr;
  (void)Guard(error, [&] {
    store = new BucketStore<Agg>(args->scheme, width, type_name);
    return Code::kOk;
  });
  return store;
}

}  // namespace planb::counters
