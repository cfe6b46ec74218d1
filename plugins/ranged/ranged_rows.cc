#include "ranged_rows.h"

#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <charconv>
#include <cstring>
#include <system_error>

#include "planb/encoding.h"

namespace planb::ranged {
namespace {

constexpr size_t kQuoted = 64;  // bytes of bad input shown in a message

bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Code PutFailure(int rc) { return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError; }

}  // namespace

Code ParseNumber(Bytes text, const char* element, int64_t* out, ErrorBuffer* error) {
  const char* begin = reinterpret_cast<const char*>(text.data);
  const char* end = begin + text.size;
  while (begin != end && IsSpace(static_cast<uint8_t>(*begin))) ++begin;
  while (end != begin && IsSpace(static_cast<uint8_t>(end[-1]))) --end;
  const char* digits = begin;
  if (digits != end && *digits == '+' && end - digits > 1 && digits[1] != '-') ++digits;  // from_chars takes no '+'
  const std::from_chars_result parsed = std::from_chars(digits, end, *out);
  const int shown = static_cast<int>(text.size < kQuoted ? text.size : kQuoted);
  const char* more = text.size > kQuoted ? "..." : "";
  if (parsed.ec == std::errc::result_out_of_range) {
    return Fail(error, Code::kInvalidArgument,
                "%s '%.*s%s' is out of range: numbers are signed 64-bit (-9223372036854775808 to "
                "9223372036854775807)",
                element, shown, reinterpret_cast<const char*>(text.data), more);
  }
  if (parsed.ec != std::errc() || parsed.ptr != end || begin == end) {
    return Fail(error, Code::kInvalidArgument, "%s '%.*s%s' is not a whole number", element, shown,
                reinterpret_cast<const char*>(text.data), more);
  }
  return Code::kOk;
}

Code RecordRange(const Record& record, KeyFormat format, const char* type_name, Range* out, ErrorBuffer* error) {
  if (record.kind != RecordKind::kReference) {
    return Fail(error, Code::kInvalidArgument, "a <session> element cannot be loaded into a %s map", type_name);
  }
  if (record.has_key && record.has_range) {
    return Fail(error, Code::kInvalidArgument, "<reference> has both a <key> and <from>/<to>: give one (%s map)",
                type_name);
  }
  if (!record.has_key && !record.has_range) {
    return Fail(error, Code::kInvalidArgument, "<reference> has no <key> or <from>/<to> (%s map)", type_name);
  }
  if (!record.has_value) return Fail(error, Code::kInvalidArgument, "<reference> has no <value>");
  if (record.has_key) return ParseKeyBounds(record.key, format, "<key>", &out->from, &out->to, error);
  Code code = ParseBound(record.range_from, format, "<from>", &out->from, error);
  if (code != Code::kOk) return code;
  code = ParseBound(record.range_to, format, "<to>", &out->to, error);
  if (code != Code::kOk) return code;
  if (out->from > out->to) {
    char from[kBoundText];
    char to[kBoundText];
    return Fail(error, Code::kInvalidArgument, "<from> %s is greater than <to> %s (bounds are inclusive)",
                FormatBound(out->from, format, from), FormatBound(out->to, format, to));
  }
  return Code::kOk;
}

Code LookupBound(const LookupKey& lookup, KeyFormat format, Bound* out, ErrorBuffer* error) {
  if (format == KeyFormat::kNumber) {
    *out = FromNumber(lookup.number);
    return Code::kOk;
  }
  // Exact, as every other type's keys are: " 10.0.0.1" is no address (a load trims XML's text around a
  // <key>, which belongs to the markup, not to the address; an event's field is the key as it came).
  const Bytes key = lookup.key;
  if (key.size > 0 && (IsSpace(key.data[0]) || IsSpace(key.data[key.size - 1]))) {
    const int shown = static_cast<int>(key.size < kQuoted ? key.size : kQuoted);
    return Fail(error, Code::kInvalidArgument, "lookup key '%.*s%s' has blanks around it: addresses are matched as "
                "given", shown, reinterpret_cast<const char*>(key.data), key.size > kQuoted ? "..." : "");
  }
  return ParseBound(key, format, "lookup key", out, error);
}

void MakeVersion(uint32_t version_size, int64_t time_ms, ValueType type, Bytes value, uint8_t* out) {
  if (version_size == 16) {
    PutOrderedI64(out, time_ms);
    out += 8;
  }
  PutU64(out, XXH3_64bits_withSeed(value.data, value.size, static_cast<uint8_t>(type)));
}

Code WriteDataRow(const Table& table, Bytes key, const uint8_t* version, uint32_t version_size, uint32_t keep_bytes,
                  ValueType type, Bytes value, ErrorBuffer* error) {
  MDB_val k = key.mdb();
  if (keep_bytes != 0) {
    MDB_val existing;
    const int got = mdb_get(table.txn, table.dbi, &k, &existing);
    if (got == MDB_SUCCESS && existing.mv_size >= version_size &&
        std::memcmp(existing.mv_data, version, keep_bytes) > 0) {
      return Code::kOk;  // the row there is newer
    }
    if (got != MDB_SUCCESS && got != MDB_NOTFOUND) {
      return Fail(error, Code::kIOError, "reading ranged row: %s", mdb_strerror(got));
    }
  }
  MDB_val v{version_size + 1 + value.size, nullptr};
  const int rc = mdb_put(table.txn, table.dbi, &k, &v, MDB_RESERVE);
  if (rc != MDB_SUCCESS) return Fail(error, PutFailure(rc), "writing ranged row: %s", mdb_strerror(rc));
  auto* out = static_cast<uint8_t*>(v.mv_data);
  std::memcpy(out, version, version_size);
  out[version_size] = static_cast<uint8_t>(type);
  if (value.size != 0) std::memcpy(out + version_size + 1, value.data, value.size);
  return Code::kOk;
}

Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, uint32_t width, uint32_t version_size,
               MergeStats* stats, ErrorBuffer* error) {
  RangeIndexWriter index;
  const Code code = index.Open(shard, width, error);
  return code != Code::kOk ? code : MergeRows(batch, shard, key_size, width, version_size, &index, stats, error);
}

Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, uint32_t width, uint32_t version_size,
               RangeAdder* index, MergeStats* stats, ErrorBuffer* error) {
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
    ++stats->rows_read;
    const auto* key = static_cast<const uint8_t*>(k.mv_data);
    const Range range = k.mv_size == key_size ? GetRangeKey(key, width) : Range{};
    if (k.mv_size != key_size || range.from > range.to || v.mv_size < version_size + 1 ||
        !IsKnownValueType(static_cast<const uint8_t*>(v.mv_data)[version_size])) {
      return Fail(error, Code::kCorruption, "batch row is not a ranged row (%zu-byte key, %zu-byte value)", k.mv_size,
                  v.mv_size);
    }
    // Data rows copy as they are (no part is local to a file), unless the shard's row of the key has a version
    // as high (then it stays: merges commute); the index is rebuilt in the shard, row by row.
    // One descent for a new range: MDB_NOOVERWRITE inserts it, or hands back the row already there.
    MDB_val found = v;
    int put = mdb_put(shard.txn, shard.dbi, &k, &found, MDB_NOOVERWRITE);
    if (put == MDB_KEYEXIST) {
      const bool keep = found.mv_size >= version_size && std::memcmp(found.mv_data, v.mv_data, version_size) >= 0;
      put = keep ? MDB_SUCCESS : mdb_put(shard.txn, shard.dbi, &k, &v, 0);
    }
    if (put != MDB_SUCCESS) return Fail(error, PutFailure(put), "writing ranged row: %s", mdb_strerror(put));
    const Code code = index->Add(range, error);
    if (code != Code::kOk) return code;
    ++stats->rows_written;
  }
  return Code::kOk;
}

Code DecodeDataRow(Bytes lmdb_key, Bytes value, uint32_t key_size, uint32_t version_size, KeyFormat format,
                   const char* type_name, Row* row, ErrorBuffer* error) {
  if (lmdb_key.size != key_size) {
    return Fail(error, Code::kCorruption, "%s row key is %zu bytes, not %u", type_name, lmdb_key.size, key_size);
  }
  if (value.size < uint64_t{version_size} + 1 || !IsKnownValueType(value.data[version_size])) {
    return Fail(error, Code::kCorruption, "%s row value of %zu bytes has no valid value type", type_name, value.size);
  }
  const uint32_t width = BoundWidth(format);
  const Range range = GetRangeKey(lmdb_key.data, width);
  // As strict as the merge: a batch that decodes here must merge (the receiving node verifies with this).
  if (range.from > range.to) {
    char from[kBoundText];
    char to[kBoundText];
    return Fail(error, Code::kCorruption, "%s row has from %s after to %s", type_name,
                FormatBound(range.from, format, from), FormatBound(range.to, format, to));
  }
  row->key = Bytes();
  const bool wide = format == KeyFormat::kIp;
  row->range_from = wide ? 0 : ToNumber(range.from);
  row->range_to = wide ? 0 : ToNumber(range.to);
  if (format != KeyFormat::kNumber && row->size >= offsetof(Row, address_to) + sizeof(row->address_to)) {
    row->has_addresses = true;
    BoundAddress(range.from, format, row->address_from);
    BoundAddress(range.to, format, row->address_to);
  }
  // The row's time: temporal_ranged keeps it in the key, ranged in its version (deletions compare it).
  if (key_size > 2 * width) {
    row->effective_time_ms = GetOrderedI64(lmdb_key.data + 2 * width);
  } else if (version_size == 16) {
    row->effective_time_ms = GetOrderedI64(value.data);
  }
  row->value_type = static_cast<ValueType>(value.data[version_size]);
  row->value = Bytes(value.data + version_size + 1, value.size - version_size - 1);
  return Code::kOk;
}

Code KeyStartScanRange(const ScanBounds& bounds, KeyFormat format, uint32_t key_size, KeyRange* range) {
  range->has_lower = range->has_upper = false;
  const uint32_t width = BoundWidth(format);
  Bound low = 0;
  Bound high = MaxBound(width);
  if (format == KeyFormat::kNumber) {
    if (!bounds.has_number_bounds) return Code::kOk;
    if (bounds.number_min > bounds.number_max) return Code::kNotFound;
    low = FromNumber(bounds.number_min);
    high = FromNumber(bounds.number_max);
  } else {
    // ScanBounds from a host before 7.2 have no address bounds: then nothing narrows.
    if (bounds.size < offsetof(ScanBounds, address_max) + sizeof(bounds.address_max) || !bounds.has_address_bounds) {
      return Code::kOk;
    }
    // In ipv4, an address outside ::ffff:0.0.0.0/96 has no bound: it lies below or above all of them.
    bool below = false;
    if (!AddressBound(bounds.address_min, format, &low, &below)) {
      if (!below) return Code::kNotFound;
      low = FromNumber(0);
    }
    if (!AddressBound(bounds.address_max, format, &high, &below)) {
      if (below) return Code::kNotFound;
      high = FromNumber(UINT32_MAX);
    }
    if (low > high) return Code::kNotFound;
  }
  // The lowest and highest key with each from: the rest of the key all 0x00, all 0xFF.
  range->has_lower = range->has_upper = true;
  range->lower.size = range->upper.size = key_size;
  std::memset(range->lower.bytes, 0x00, key_size);
  std::memset(range->upper.bytes, 0xFF, key_size);
  PutBound(range->lower.bytes, low, width);
  PutBound(range->upper.bytes, high, width);
  return Code::kOk;
}

namespace {

// A read cursor of its own on `dbi`, closed on destruction (the host's cursor stays where it is).
class OwnCursor {
 public:
  ~OwnCursor() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
  }
  int Open(MDB_txn* txn, MDB_dbi dbi) { return mdb_cursor_open(txn, dbi, &cursor_); }
  MDB_cursor* get() const { return cursor_; }

 private:
  MDB_cursor* cursor_ = nullptr;
};

bool RangeLess(Range a, Range b) { return a.from != b.from ? a.from < b.from : a.to < b.to; }

}  // namespace

Code CollectRanges(const Table& table, uint32_t key_size, uint32_t width, std::vector<Range>* out, ErrorBuffer* error) {
  out->clear();
  OwnCursor cursor;
  int rc = cursor.Open(table.txn, table.dbi);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening a ranged data cursor: %s", mdb_strerror(rc));
  MDB_val k;
  MDB_val v;
  for (rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != key_size) {
      return Fail(error, Code::kCorruption, "ranged row key is %zu bytes, not %u", k.mv_size, key_size);
    }
    const Range range = GetRangeKey(static_cast<const uint8_t*>(k.mv_data), width);
    if (out->empty() || !(out->back() == range)) out->push_back(range);
  }
  if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading ranged rows: %s", mdb_strerror(rc));
  return Code::kOk;
}

Code IndexNamesOnly(const Table& table, const std::vector<Range>& ranges, uint32_t width, uint32_t entry_size,
                    uint32_t range_offset, bool* fits, ErrorBuffer* error) {
  if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the range index table is not open");
  *fits = false;
  OwnCursor cursor;
  int rc = cursor.Open(table.txn, table.store_tables[0]);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening a range index cursor: %s", mdb_strerror(rc));
  size_t next_from = 0;  // into `ranges`: the first range of the from the next group must have
  MDB_val k;
  MDB_val v;
  for (rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != width || next_from == ranges.size() ||
        GetBound(static_cast<const uint8_t*>(k.mv_data), width) != ranges[next_from].from) {
      return Code::kOk;  // a group at a from no range has (any more), or a from without its group
    }
    const Bound from = ranges[next_from].from;
    while (next_from < ranges.size() && ranges[next_from].from == from) ++next_from;
    if (v.mv_size == 0 || v.mv_size % entry_size != 0) return Code::kOk;
    for (size_t at = 0; at < v.mv_size; at += entry_size) {
      const Range named = GetRangeKey(static_cast<const uint8_t*>(v.mv_data) + at + range_offset, width);
      if (!std::binary_search(ranges.begin(), ranges.end(), named, RangeLess)) return Code::kOk;
    }
  }
  if (rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading the range index: %s", mdb_strerror(rc));
  *fits = next_from == ranges.size();
  return Code::kOk;
}

Code DropIndex(const Table& table, ErrorBuffer* error) {
  if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the range index table is not open");
  const int rc = mdb_drop(table.txn, table.store_tables[0], 0);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "emptying the range index: %s", mdb_strerror(rc));
  return Code::kOk;
}

}  // namespace planb::ranged
