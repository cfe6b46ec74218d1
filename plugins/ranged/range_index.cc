#include "range_index.h"

#include <algorithm>
#include <cstring>

#include "planb/encoding.h"

namespace planb::ranged {
namespace {

// to - from: bounds are unsigned, and the widest range of the widest format, 2^128 - 1, still fits.
Bound Width(Range r) { return r.to - r.from; }

// The on-disk order of a group's entries: to ascending, then from descending.
bool Before(Range a, Range b) { return a.to != b.to ? a.to < b.to : a.from > b.from; }

Code PutFailure(int rc) { return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError; }

Code BadGroup(ErrorBuffer* error, Bound from, uint32_t width, size_t size) {
  char text[kBoundText];
  return Fail(error, Code::kCorruption, "range index group %s is %zu bytes, not a list of %u-byte entries",
              FormatStored(from, width, text), size, RangeGroup::EntrySize(width));
}

}  // namespace

bool Wins(Range a, Range b) {
  if (Width(a) != Width(b)) return Width(a) < Width(b);
  if (a.from != b.from) return a.from > b.from;
  return a.to < b.to;
}

bool RangeGroup::Parse(Bytes value, uint32_t width) {
  const uint32_t entry_size = EntrySize(width);
  if (value.size == 0 || value.size % entry_size != 0 || value.size / entry_size > UINT32_MAX) return false;
  data_ = value.data;
  size_ = static_cast<uint32_t>(value.size / entry_size);
  width_ = width;
  entry_size_ = entry_size;
  return true;
}

uint32_t RangeGroup::winner(uint32_t i) const { return GetU32(entry(i) + 2 * width_); }

uint32_t RangeGroup::FirstEndingAtOrAfter(Bound x) const {
  uint32_t low = 0;
  uint32_t high = size_;
  while (low < high) {
    const uint32_t mid = low + (high - low) / 2;
    if (GetBound(entry(mid) + width_, width_) < x) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

bool RangeGroup::Contains(Range r) const {
  for (uint32_t i = FirstEndingAtOrAfter(r.to); i < size_; ++i) {
    const Range e = range(i);
    if (e.to != r.to || e.from < r.from) return false;  // past r's place in the order
    if (e.from == r.from) return true;
  }
  return false;
}

Code FindIndexRow(const Table& table, uint32_t width, Bound x, Bytes* data_key, Bytes* data_value,
                  Bytes* index_value, ErrorBuffer* error) {
  if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the range index table is not open");
  // The last data row with from <= x: SET_RANGE to the prefix x + 1 lands on the first row with a greater
  // from (or nowhere), and the row before it is the one. The greatest bound has no x + 1: every row qualifies.
  MDB_val k;
  MDB_val v;
  uint8_t probe[16];
  int rc;
  if (x == MaxBound(width)) {
    rc = mdb_cursor_get(table.cursor, &k, &v, MDB_LAST);
  } else {
    PutBound(probe, x + 1, width);
    k = MDB_val{width, probe};
    rc = mdb_cursor_get(table.cursor, &k, &v, MDB_SET_RANGE);
    if (rc == MDB_SUCCESS) {
      rc = mdb_cursor_get(table.cursor, &k, &v, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
      rc = mdb_cursor_get(table.cursor, &k, &v, MDB_LAST);
    }
  }
  if (rc == MDB_NOTFOUND) return Code::kNotFound;
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading ranged row: %s", mdb_strerror(rc));
  if (k.mv_size < 2 * width) {
    return Fail(error, Code::kCorruption, "ranged row key of %zu bytes is too short", k.mv_size);
  }
  *data_key = Bytes(k);
  *data_value = Bytes(v);
  MDB_val group_key{width, k.mv_data};  // the row's from, already encoded
  MDB_val group_value;
  rc = mdb_get(table.txn, table.store_tables[0], &group_key, &group_value);
  if (rc == MDB_NOTFOUND) {
    char text[kBoundText];
    return Fail(error, Code::kCorruption, "the range index has no group for from %s",
                FormatStored(GetBound(static_cast<const uint8_t*>(k.mv_data), width), width, text));
  }
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
  *index_value = Bytes(group_value);
  return Code::kOk;
}

Code FindGroup(const Table& table, uint32_t width, Bound x, RangeGroup* group, Bytes* data_key, Bytes* data_value,
               ErrorBuffer* error) {
  Bytes group_value;
  const Code code = FindIndexRow(table, width, x, data_key, data_value, &group_value, error);
  if (code != Code::kOk) return code;
  if (!group->Parse(group_value, width)) {
    return BadGroup(error, GetBound(data_key->data, width), width, group_value.size);
  }
  return Code::kOk;
}

Code RangeIndexWriter::Open(const Table& table, uint32_t width, ErrorBuffer* error) {
  Close();
  width_ = width;
  if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the range index table is not open");
  txn_ = table.txn;
  index_ = table.store_tables[0];
  const int rc = mdb_cursor_open(txn_, index_, &cursor_);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening range index cursor: %s", mdb_strerror(rc));
  return Code::kOk;
}

void RangeIndexWriter::Close() {
  if (cursor_ != nullptr) mdb_cursor_close(cursor_);
  cursor_ = nullptr;
}

Code RangeIndexWriter::LoadGroup(MDB_val value, ErrorBuffer* error) {
  RangeGroup group;
  if (!group.Parse(Bytes(value), width_)) {
    return Fail(error, Code::kCorruption, "range index group of %zu bytes is corrupt", value.mv_size);
  }
  entries_.clear();
  for (uint32_t i = 0; i < group.size(); ++i) entries_.push_back(group.range(i));
  return Code::kOk;
}

// Writes entries_ as the group of `from`, computing each entry's suffix winner from the end.
Code RangeIndexWriter::WriteGroup(Bound from, ErrorBuffer* error) {
  uint8_t key_bytes[16];
  PutBound(key_bytes, from, width_);
  MDB_val key{width_, key_bytes};
  const uint32_t entry_size = RangeGroup::EntrySize(width_);
  MDB_val value{entries_.size() * entry_size, nullptr};
  const int rc = mdb_put(txn_, index_, &key, &value, MDB_RESERVE);
  if (rc != MDB_SUCCESS) return Fail(error, PutFailure(rc), "writing range index: %s", mdb_strerror(rc));
  auto* out = static_cast<uint8_t*>(value.mv_data);
  uint32_t winner = 0;
  for (size_t i = entries_.size(); i-- > 0;) {
    if (i + 1 == entries_.size() || Wins(entries_[i], entries_[winner])) winner = static_cast<uint32_t>(i);
    uint8_t* entry = out + i * entry_size;
    PutRangeKey(entries_[i], width_, entry);
    PutU32(entry + 2 * width_, winner);
  }
  return Code::kOk;
}

Code RangeIndexWriter::Add(Range r, ErrorBuffer* error) {
  if (cursor_ == nullptr) return Fail(error, Code::kInternal, "range index writer is not open");
  uint8_t key_bytes[16];
  PutBound(key_bytes, r.from, width_);
  MDB_val key{width_, key_bytes};
  MDB_val value;
  int rc = mdb_get(txn_, index_, &key, &value);
  if (rc == MDB_SUCCESS) {
    RangeGroup own;
    if (!own.Parse(Bytes(value), width_)) return BadGroup(error, r.from, width_, value.mv_size);
    // Every range is in its own from's group, so finding it there means it was added before, everywhere.
    if (own.Contains(r)) return Code::kOk;
    Code code = LoadGroup(value, error);
    if (code != Code::kOk) return code;
  } else if (rc == MDB_NOTFOUND) {
    // A new group: the ranges containing r.from are those of the previous group that reach it (their from is
    // at or before the previous F, the greatest from below r.from).
    entries_.clear();
    rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE);
    if (rc == MDB_SUCCESS) {
      rc = mdb_cursor_get(cursor_, &key, &value, MDB_PREV);
    } else if (rc == MDB_NOTFOUND) {
      rc = mdb_cursor_get(cursor_, &key, &value, MDB_LAST);
    }
    if (rc == MDB_SUCCESS) {
      Code code = LoadGroup(value, error);
      if (code != Code::kOk) return code;
      entries_.erase(entries_.begin(),
                     std::find_if(entries_.begin(), entries_.end(), [&](Range e) { return e.to >= r.from; }));
    } else if (rc != MDB_NOTFOUND) {
      return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
    }
  } else {
    return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
  }
  entries_.insert(std::lower_bound(entries_.begin(), entries_.end(), r, Before), r);
  Code code = WriteGroup(r.from, error);
  if (code != Code::kOk) return code;

  // Groups further inside the range. Collected first: rewriting a value while the cursor walks is not worth it.
  later_.clear();
  if (r.from < r.to) {
    PutBound(key_bytes, r.from + 1, width_);
    key = MDB_val{width_, key_bytes};
    for (rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cursor_, &key, &value, MDB_NEXT)) {
      if (key.mv_size != width_) return Fail(error, Code::kCorruption, "range index key of %zu bytes", key.mv_size);
      const Bound from = GetBound(static_cast<const uint8_t*>(key.mv_data), width_);
      if (from > r.to) break;
      later_.push_back(from);
    }
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
      return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
    }
  }
  for (Bound from : later_) {
    PutBound(key_bytes, from, width_);
    key = MDB_val{width_, key_bytes};
    rc = mdb_get(txn_, index_, &key, &value);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
    code = LoadGroup(value, error);
    if (code != Code::kOk) return code;
    auto at = std::lower_bound(entries_.begin(), entries_.end(), r, Before);
    if (at != entries_.end() && *at == r) continue;
    entries_.insert(at, r);
    code = WriteGroup(from, error);
    if (code != Code::kOk) return code;
  }
  return Code::kOk;
}

}  // namespace planb::ranged
