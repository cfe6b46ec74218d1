// The index of the ranged store type: which stored range wins at a number, in O(log n), in space O(n) however
// ranges nest or overlap. It lives in the plugin's own table kIndexTableName beside a data table whose LMDB keys
// are from + to (bounds of key_format.h, inclusive). (temporal_ranged needs every candidate range, not only the
// winner, and keeps the containment index of range_index.h.)
//
// The number line is cut at every distinct `from` F of the data table into groups [F, G - 1], G the next from
// (the group of the greatest from runs to the greatest bound). Every range containing a number x of F's group also
// contains F (its from is <= F, since no from lies in (F, x]), so the ranges covering the group cover a prefix
// of it, [F, min(greatest to, G - 1)], and change only where one of them ends. F's index value describes that
// prefix as segments [F, end_0], [end_0 + 1, end_1], ..., each with its winning range (Wins, range_index.h).
// Invariant: the segments are exactly the maximal runs of numbers in the covered prefix with the same winner
// (adjacent segments never share a winner), so the index is a function of the set of ranges alone, whatever the
// load order. A segment boundary inside a group is some range's `to`, and each `to` lies in one group: all the
// groups together hold at most (ranges + groups) entries.
//
// A lookup of x finds F = the greatest from <= x through the data table's cursor (the only cursor the host hands
// a plugin), reads F's value with one mdb_get and binary-searches the first segment ending at or after x.
//
// On-disk format (bump the ranged plugin's kVersion if it changes):
//   key   = F                                                     width bytes (8; 16 for key_format ip)
//   value = n >= 1 segments of 3 x width bytes: end + winner from + winner to (width bytes each),
//           ends ascending, the first segment starting at F, each next one at the previous end + 1.
// Adding [a, b] splits the group holding a when a is a new from, then rewrites only the groups F in [a, b]
// where [a, b] wins somewhere or widens the covered prefix; it walks those groups once with a cursor.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <vector>

#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/table.h"
#include "range_index.h"

namespace planb::ranged {

inline uint32_t SegmentSize(uint32_t width) { return 3 * width; }

// Finds the range winning at `x` in `table` (data cursor + store_tables[0]). kOk sets `winner_key` to the
// 2 x width bytes of the winning range, inside the index value, and leaves the data cursor on the last data
// row whose from is the group's F, as `data_key`/`data_value` (all valid until the transaction ends or resets).
// kNotFound: no range contains x. kCorruption: the index lacks the group or it is malformed. Allocates nothing.
Code FindWinner(const Table& table, uint32_t width, Bound x, const uint8_t** winner_key, Bytes* data_key, Bytes* data_value,
                ErrorBuffer* error);

// Adds ranges to the segment index inside one write transaction. Not thread-safe; allocates (the write path).
// REQUIRES: destroyed (or Close()d) before the transaction ends.
class SegmentIndexWriter final : public RangeAdder {
 public:
  SegmentIndexWriter() = default;
  ~SegmentIndexWriter() { Close(); }
  SegmentIndexWriter(const SegmentIndexWriter&) = delete;
  SegmentIndexWriter& operator=(const SegmentIndexWriter&) = delete;

  Code Open(const Table& table, uint32_t width, ErrorBuffer* error);
  void Close();
  // Adding a range that is already there changes nothing, so merges are idempotent.
  Code Add(Range r, ErrorBuffer* error) override;

 private:
  struct Segment {
    Bound end;
    Range winner;
    friend bool operator==(const Segment& a, const Segment& b) { return a.end == b.end && a.winner == b.winner; }
  };

  Code StartGroup(Range r, bool* created, ErrorBuffer* error);
  Code Load(Bound from, MDB_val value, std::vector<Segment>* out, ErrorBuffer* error);
  struct Pending {
    Bound from;
    size_t begin;  // into pending_segments_, up to the next one's begin
  };

  void AddTo(Range r, Bound from, Bound group_end, bool is_new);
  Code Write(Bound from, const Segment* segments, size_t count, ErrorBuffer* error);

  uint32_t width_ = 8;
  MDB_txn* txn_ = nullptr;
  MDB_dbi index_ = 0;
  MDB_cursor* cursor_ = nullptr;
  std::vector<Segment> old_;
  std::vector<Segment> new_;
  std::vector<Pending> pending_;  // the groups to rewrite for the range being added
  std::vector<Segment> pending_segments_;
};

}  // namespace planb::ranged
