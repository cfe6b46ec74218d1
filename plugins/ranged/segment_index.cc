#include "segment_index.h"

#include <cstring>

#include "planb/encoding.h"

namespace planb::ranged {
namespace {

Code PutFailure(int rc) { return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError; }

Code ReadFailure(ErrorBuffer* error, int rc) {
  return Fail(error, Code::kIOError, "reading range index: %s", mdb_strerror(rc));
}

}  // namespace

Code FindWinner(const Table& table, uint32_t width, Bound x, const uint8_t** winner_key, Bytes* data_key,
                Bytes* data_value, ErrorBuffer* error) {
  Bytes group;
  const Code code = FindIndexRow(table, width, x, data_key, data_value, &group, error);
  if (code != Code::kOk) return code;
  const uint32_t segment_size = SegmentSize(width);
  if (group.size == 0 || group.size % segment_size != 0) {
    char text[kBoundText];
    return Fail(error, Code::kCorruption, "range index group %s is %zu bytes, not a list of %u-byte segments",
                FormatStored(GetBound(data_key->data, width), width, text), group.size, segment_size);
  }
  // The first segment ending at or after x.
  size_t low = 0;
  size_t high = group.size / segment_size;
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (GetBound(group.data + mid * segment_size, width) < x) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == group.size / segment_size) return Code::kNotFound;  // past the covered prefix of the group
  *winner_key = group.data + low * segment_size + width;
  return Code::kOk;
}

Code SegmentIndexWriter::Open(const Table& table, uint32_t width, ErrorBuffer* error) {
  Close();
  width_ = width;
  if (table.store_tables == nullptr) return Fail(error, Code::kInternal, "the range index table is not open");
  txn_ = table.txn;
  index_ = table.store_tables[0];
  const int rc = mdb_cursor_open(txn_, index_, &cursor_);
  if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening range index cursor: %s", mdb_strerror(rc));
  return Code::kOk;
}

void SegmentIndexWriter::Close() {
  if (cursor_ != nullptr) mdb_cursor_close(cursor_);
  cursor_ = nullptr;
}

Code SegmentIndexWriter::Load(Bound from, MDB_val value, std::vector<Segment>* out, ErrorBuffer* error) {
  const uint32_t segment_size = SegmentSize(width_);
  if (value.mv_size == 0 || value.mv_size % segment_size != 0) {
    char text[kBoundText];
    return Fail(error, Code::kCorruption, "range index group %s is %zu bytes, not a list of %u-byte segments",
                FormatStored(from, width_, text), value.mv_size, segment_size);
  }
  out->clear();
  const auto* in = static_cast<const uint8_t*>(value.mv_data);
  for (size_t at = 0; at < value.mv_size; at += segment_size) {
    out->push_back(Segment{GetBound(in + at, width_), GetRangeKey(in + at + width_, width_)});
  }
  return Code::kOk;
}

Code SegmentIndexWriter::Write(Bound from, const Segment* segments, size_t count, ErrorBuffer* error) {
  uint8_t key_bytes[16];
  PutBound(key_bytes, from, width_);
  MDB_val key{width_, key_bytes};
  MDB_val value{count * SegmentSize(width_), nullptr};
  const int rc = mdb_put(txn_, index_, &key, &value, MDB_RESERVE);
  if (rc != MDB_SUCCESS) return Fail(error, PutFailure(rc), "writing range index: %s", mdb_strerror(rc));
  auto* out = static_cast<uint8_t*>(value.mv_data);
  for (size_t i = 0; i < count; ++i) {
    PutBound(out, segments[i].end, width_);
    PutRangeKey(segments[i].winner, width_, out + width_);
    out += SegmentSize(width_);
  }
  return Code::kOk;
}

// Makes sure r.from has a group. A new one takes over the segments at and after r.from of the group before it
// (the ranges covering them are the same: none starts in between), which keeps those before.
Code SegmentIndexWriter::StartGroup(Range r, bool* created, ErrorBuffer* error) {
  uint8_t key_bytes[16];
  PutBound(key_bytes, r.from, width_);
  MDB_val key{width_, key_bytes};
  MDB_val value;
  int rc = mdb_get(txn_, index_, &key, &value);
  *created = rc == MDB_NOTFOUND;
  if (rc == MDB_SUCCESS) return Code::kOk;
  if (rc != MDB_NOTFOUND) return ReadFailure(error, rc);
  new_.clear();
  rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE);
  if (rc == MDB_SUCCESS) {
    rc = mdb_cursor_get(cursor_, &key, &value, MDB_PREV);
  } else if (rc == MDB_NOTFOUND) {
    rc = mdb_cursor_get(cursor_, &key, &value, MDB_LAST);
  }
  if (rc == MDB_SUCCESS) {
    if (key.mv_size != width_) return Fail(error, Code::kCorruption, "range index key of %zu bytes", key.mv_size);
    const Bound before = GetBound(static_cast<const uint8_t*>(key.mv_data), width_);
    Code code = Load(before, value, &old_, error);
    if (code != Code::kOk) return code;
    if (old_.back().end >= r.from) {
      size_t i = 0;
      while (old_[i].end < r.from) ++i;
      new_.assign(old_.begin() + i, old_.end());
      const Bound start = i == 0 ? before : old_[i - 1].end + 1;  // <= r.from, and before < r.from
      old_.resize(i);
      if (start < r.from) old_.push_back(Segment{r.from - 1, new_.front().winner});
      code = Write(before, old_.data(), old_.size(), error);
      if (code != Code::kOk) return code;
    }
  } else if (rc != MDB_NOTFOUND) {
    return ReadFailure(error, rc);
  }
  return Code::kOk;  // new_ holds the new group's inherited segments; Add writes it
}

// Rewrites old_ (the segments of group `from`, which ends at `group_end`) as new_ with r added, and queues the
// result when it differs (always for a new group).
void SegmentIndexWriter::AddTo(Range r, Bound from, Bound group_end, bool is_new) {
  // r covers [from, limit] of this group: it takes every segment there that it beats, and the uncovered rest.
  const Bound limit = r.to < group_end ? r.to : group_end;
  new_.clear();
  auto push = [&](Bound end, Range winner) {
    if (!new_.empty() && new_.back().winner == winner) {
      new_.back().end = end;
    } else {
      new_.push_back(Segment{end, winner});
    }
  };
  Bound start = from;
  for (const Segment& s : old_) {
    if (start > limit) {
      push(s.end, s.winner);
    } else if (s.end <= limit) {
      push(s.end, Wins(r, s.winner) ? r : s.winner);
    } else {
      push(limit, Wins(r, s.winner) ? r : s.winner);
      push(s.end, s.winner);
    }
    start = s.end == MaxBound(width_) ? s.end : s.end + 1;
  }
  if (old_.empty() || old_.back().end < limit) push(limit, r);
  if (!is_new && new_ == old_) return;
  pending_.push_back(Pending{from, pending_segments_.size()});
  pending_segments_.insert(pending_segments_.end(), new_.begin(), new_.end());
}

Code SegmentIndexWriter::Add(Range r, ErrorBuffer* error) {
  if (cursor_ == nullptr) return Fail(error, Code::kInternal, "range index writer is not open");
  bool created = false;
  Code code = StartGroup(r, &created, error);
  if (code != Code::kOk) return code;

  // Walks the groups in [a, b], each one handled once the next from (where it ends) is known. Changed groups are
  // queued and written after the walk: mdb_put should not rewrite the table under a cursor walking it.
  pending_.clear();
  pending_segments_.clear();
  bool holding = created;  // old_ holds the segments of group `held`
  Bound held = r.from;
  if (created) old_.swap(new_);  // StartGroup's inherited segments, maybe none
  Bound last_end = MaxBound(width_);
  uint8_t key_bytes[16];
  PutBound(key_bytes, r.from, width_);
  MDB_val key{width_, key_bytes};
  MDB_val value;
  int rc;
  for (rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor_, &key, &value, MDB_NEXT)) {
    if (key.mv_size != width_) return Fail(error, Code::kCorruption, "range index key of %zu bytes", key.mv_size);
    const Bound from = GetBound(static_cast<const uint8_t*>(key.mv_data), width_);
    if (from > r.to) {
      last_end = from - 1;
      break;
    }
    if (holding) AddTo(r, held, from - 1, created && held == r.from);
    code = Load(from, value, &old_, error);
    if (code != Code::kOk) return code;
    holding = true;
    held = from;
  }
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return ReadFailure(error, rc);
  if (holding) AddTo(r, held, last_end, created && held == r.from);

  for (size_t i = 0; i < pending_.size(); ++i) {
    const size_t end = i + 1 < pending_.size() ? pending_[i + 1].begin : pending_segments_.size();
    code = Write(pending_[i].from, pending_segments_.data() + pending_[i].begin, end - pending_[i].begin, error);
    if (code != Code::kOk) return code;
  }
  return Code::kOk;
}

}  // namespace planb::ranged
