// The containment index of temporal_ranged, which needs every candidate range (ranged kept it up to its version 1
// and now keeps only winners: segment_index.h, which shares Range, Wins and FindIndexRow from here): which stored
// ranges contain a number, in O(log n). It lives in the plugin's own table kIndexTableName beside a data table
// whose LMDB keys start with from + to (bounds of key_format.h, inclusive, `width` bytes each). Its size is the sum over froms of the
// ranges containing each: quadratic when many ranges nest.
//
// The number line is cut at every distinct `from` F of the data table; F's "group" lists every range that
// contains F. A lookup of x finds F = the greatest from <= x through the data table's cursor (the only cursor the
// host hands a plugin), and reads F's group with one mdb_get. Every range containing x contains F (its from is
// <= F, since no from lies in (F, x]), so the ranges containing x are exactly the group entries with to >= x: a
// suffix of the list, sorted by `to`, found by binary search. Each entry also stores the index of the winner of
// its suffix, so the winning range is known without scanning. (A group is the run of segments [F, to_0],
// [to_0 + 1, to_1], ... up to the next from, each with its winner.)
//
// On-disk format (bump temporal_ranged's kVersion if it changes):
//   key   = F                                                  width bytes (8; 16 for key_format ip)
//   value = n entries: from + to (width bytes each) + winner (u32 big-endian), 2 width + 4 bytes each,
//           sorted by to ascending, then from descending; winner = index of the entry that wins among i..n-1.
// Adding a range touches its own group (made from the previous group if new) and every group F in (from, to]:
// O(log n) for disjoint data, O(groups covered x group size) when ranges nest; space is the total group size.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <vector>

#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/table.h"
#include "key_format.h"

namespace planb::ranged {

inline constexpr const char* kIndexTableName = "range_index";

struct Range {
  Bound from = 0;
  Bound to = 0;
  friend bool operator==(Range a, Range b) { return a.from == b.from && a.to == b.to; }
};

// Where several ranges contain a number, the narrowest wins; ties: the greater from, then the smaller to. A total
// order, so every node picks the same range whatever order the ranges were loaded in.
bool Wins(Range a, Range b);

// from + to, the leading 2 x width bytes of every data key (width: BoundWidth of the store's key format).
inline constexpr uint32_t kMaxRangeKeySize = 32;
inline void PutRangeKey(Range r, uint32_t width, uint8_t* out) {
  PutBound(out, r.from, width);
  PutBound(out + width, r.to, width);
}
inline Range GetRangeKey(const uint8_t* in, uint32_t width) {
  return Range{GetBound(in, width), GetBound(in + width, width)};
}

// One group, read in place from its LMDB value (valid until the transaction ends or resets). Allocates nothing.
class RangeGroup {
 public:
  static uint32_t EntrySize(uint32_t width) { return 2 * width + 4; }

  // False when `value` is not a non-empty list of entries of bounds `width` bytes wide.
  bool Parse(Bytes value, uint32_t width);
  uint32_t size() const { return size_; }
  Range range(uint32_t i) const { return GetRangeKey(entry(i), width_); }
  const uint8_t* range_key(uint32_t i) const { return entry(i); }  // 2 x width bytes
  uint32_t winner(uint32_t i) const;
  // The first entry with to >= x (size() when none): entries from there on are the ones that contain x.
  uint32_t FirstEndingAtOrAfter(Bound x) const;
  bool Contains(Range r) const;

 private:
  const uint8_t* entry(uint32_t i) const { return data_ + size_t{i} * entry_size_; }
  const uint8_t* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t width_ = 8;
  uint32_t entry_size_ = 20;
};

// What a merge adds each copied range to: the shard's index, of whichever kind the store type keeps.
class RangeAdder {
 public:
  virtual Code Add(Range r, ErrorBuffer* error) = 0;

 protected:
  ~RangeAdder() = default;
};

// The last data row of `table` whose from is <= x (`data_key`/`data_value`, the data cursor left on it) and the
// value of its from's index row in store_tables[0] (`index_value`), all valid until the transaction ends or
// resets. kNotFound: no range starts at or before x. kCorruption: the index has no row for that from.
// Allocates nothing. Shared by the lookups of both index kinds.
Code FindIndexRow(const Table& table, uint32_t width, Bound x, Bytes* data_key, Bytes* data_value, Bytes* index_value,
                  ErrorBuffer* error);

// Finds the group of `x` in `table` (data cursor + store_tables[0]). kOk fills `group` and leaves the data
// cursor on the last data row whose from is the group's F, as `data_key`/`data_value`. kNotFound: no range
// starts at or before x. kCorruption: the index lacks that group. Allocates nothing.
Code FindGroup(const Table& table, uint32_t width, Bound x, RangeGroup* group, Bytes* data_key, Bytes* data_value,
               ErrorBuffer* error);

// Adds ranges to the index inside one write transaction. Not thread-safe; allocates (the write path).
// REQUIRES: destroyed (or Close()d) before the transaction ends.
class RangeIndexWriter final : public RangeAdder {
 public:
  RangeIndexWriter() = default;
  ~RangeIndexWriter() { Close(); }
  RangeIndexWriter(const RangeIndexWriter&) = delete;
  RangeIndexWriter& operator=(const RangeIndexWriter&) = delete;

  Code Open(const Table& table, uint32_t width, ErrorBuffer* error);
  void Close();
  // Adds `r` to the group at r.from (made from the previous group when new) and to every group in
  // (r.from, r.to]. Adding a range that is already there changes nothing, so merges are idempotent.
  Code Add(Range r, ErrorBuffer* error) override;

 private:
  Code LoadGroup(MDB_val value, ErrorBuffer* error);
  Code WriteGroup(Bound from, ErrorBuffer* error);

  uint32_t width_ = 8;
  MDB_txn* txn_ = nullptr;
  MDB_dbi index_ = 0;
  MDB_cursor* cursor_ = nullptr;
  std::vector<Range> entries_;  // the group being rewritten, sorted as on disk
  std::vector<Bound> later_;  // groups in (from, to] of the range being added
};

}  // namespace planb::ranged
