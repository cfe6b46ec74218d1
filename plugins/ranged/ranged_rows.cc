#include "ranged_rows.h"

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

Code RecordRange(const Record& record, const char* type_name, Range* out, ErrorBuffer* error) {
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
  if (record.has_key) {
    Code code = ParseNumber(record.key, "<key>", &out->from, error);
    out->to = out->from;
    return code;
  }
  Code code = ParseNumber(record.range_from, "<from>", &out->from, error);
  if (code != Code::kOk) return code;
  code = ParseNumber(record.range_to, "<to>", &out->to, error);
  if (code != Code::kOk) return code;
  if (out->from > out->to) {
    return Fail(error, Code::kInvalidArgument, "<from> %lld is greater than <to> %lld (bounds are inclusive)",
                static_cast<long long>(out->from), static_cast<long long>(out->to));
  }
  return Code::kOk;
}

Code WriteDataRow(const Table& table, Bytes key, ValueType type, Bytes value, ErrorBuffer* error) {
  MDB_val k = key.mdb();
  MDB_val v{1 + value.size, nullptr};
  const int rc = mdb_put(table.txn, table.dbi, &k, &v, MDB_RESERVE);
  if (rc != MDB_SUCCESS) return Fail(error, PutFailure(rc), "writing ranged row: %s", mdb_strerror(rc));
  auto* out = static_cast<uint8_t*>(v.mv_data);
  out[0] = static_cast<uint8_t>(type);
  if (value.size != 0) std::memcpy(out + 1, value.data, value.size);
  return Code::kOk;
}

Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, MergeStats* stats, ErrorBuffer* error) {
  RangeIndexWriter index;
  const Code code = index.Open(shard, error);
  return code != Code::kOk ? code : MergeRows(batch, shard, key_size, &index, stats, error);
}

Code MergeRows(const Table& batch, const Table& shard, uint32_t key_size, RangeAdder* index, MergeStats* stats,
               ErrorBuffer* error) {
  MDB_val k;
  MDB_val v;
  for (int rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_FIRST); rc != MDB_NOTFOUND;
       rc = mdb_cursor_get(batch.cursor, &k, &v, MDB_NEXT)) {
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading batch: %s", mdb_strerror(rc));
    ++stats->rows_read;
    const auto* key = static_cast<const uint8_t*>(k.mv_data);
    const Range range = k.mv_size == key_size ? GetRangeKey(key) : Range{};
    if (k.mv_size != key_size || range.from > range.to || v.mv_size < 1 ||
        !IsKnownValueType(*static_cast<const uint8_t*>(v.mv_data))) {
      return Fail(error, Code::kCorruption, "batch row is not a ranged row (%zu-byte key, %zu-byte value)", k.mv_size,
                  v.mv_size);
    }
    // Data rows copy as they are (no part is local to a file); the index is rebuilt in the shard, row by row.
    const int put = mdb_put(shard.txn, shard.dbi, &k, &v, 0);
    if (put != MDB_SUCCESS) return Fail(error, PutFailure(put), "writing ranged row: %s", mdb_strerror(put));
    const Code code = index->Add(range, error);
    if (code != Code::kOk) return code;
    ++stats->rows_written;
  }
  return Code::kOk;
}

Code DecodeDataRow(Bytes lmdb_key, Bytes value, uint32_t key_size, const char* type_name, Row* row,
                   ErrorBuffer* error) {
  if (lmdb_key.size != key_size) {
    return Fail(error, Code::kCorruption, "%s row key is %zu bytes, not %u", type_name, lmdb_key.size, key_size);
  }
  if (value.size < 1 || !IsKnownValueType(value.data[0])) {
    return Fail(error, Code::kCorruption, "%s row value of %zu bytes has no valid value type", type_name, value.size);
  }
  const Range range = GetRangeKey(lmdb_key.data);
  // As strict as the merge: a batch that decodes here must merge (the receiving node verifies with this).
  if (range.from > range.to) {
    return Fail(error, Code::kCorruption, "%s row has from %lld after to %lld", type_name,
                static_cast<long long>(range.from), static_cast<long long>(range.to));
  }
  row->key = Bytes();
  row->range_from = range.from;
  row->range_to = range.to;
  if (key_size > kRangeKeySize) row->effective_time_ms = GetOrderedI64(lmdb_key.data + kRangeKeySize);
  row->value_type = static_cast<ValueType>(value.data[0]);
  row->value = Bytes(value.data + 1, value.size - 1);
  return Code::kOk;
}

Code NumberScanRange(const ScanBounds& bounds, uint32_t key_size, KeyRange* range) {
  range->has_lower = range->has_upper = false;
  if (!bounds.has_number_bounds) return Code::kOk;
  if (bounds.number_min > bounds.number_max) return Code::kNotFound;
  // Ordered INT64_MIN is all 0x00 and INT64_MAX all 0xFF: the lowest and highest key with each from.
  range->has_lower = range->has_upper = true;
  range->lower.size = range->upper.size = key_size;
  std::memset(range->lower.bytes, 0x00, key_size);
  std::memset(range->upper.bytes, 0xFF, key_size);
  PutOrderedI64(range->lower.bytes, bounds.number_min);
  PutOrderedI64(range->upper.bytes, bounds.number_max);
  return Code::kOk;
}

}  // namespace planb::ranged
