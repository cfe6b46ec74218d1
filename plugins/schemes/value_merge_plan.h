// Placing all of a batch's stored values in a shard's value tables at once: KeyScheme::PlanValues of every scheme
// with value_dedup (value_table.h has the format). Internal to plugins/schemes.
//
// Value by value, a merged row costs a read of the batch's value table and, in the shard's, a put of the value (to
// find or claim its number) and a read and a put of its count, each at a random place (values are keyed by hash).
// Here the batch's value table is walked once, in its order, and joined with the shard's, the values new to the
// shard written as the join goes (sorted puts); rows then take and drop references in memory, and Finish writes
// each changed count once, in key order, and removes the values left with none. The tables end up as value by
// value leaves them, except that clash numbers under one hash may be given out in another order.
//
// Nothing in the batch is trusted beyond its bytes: each value's hash is checked, and counts come from the rows
// merged, not from the batch's value_refs.
//
// Memory: 32 bytes per value of the batch, and 10 per reference dropped during the merge; bounded by the batch.
#pragma once

#include <lmdb.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "planb/encoding.h"
#include "planb/key_scheme.h"
#include "planb/keyed_writer.h"  // PutFailureCode
#include "scheme_parts.h"
#include "value_table.h"

namespace planb::value_dedup {

class ValueMergePlan final : public ValuePlan {
 public:
  using Ref = std::array<uint8_t, kRefKeySize>;  // hash (8) + clash (2): a key of both value tables

  // Joins `batch`'s value table with `shard`'s (`values_table`: the index of "values" in both tables'
  // scheme_tables, "value_refs" next), writing the values the shard lacks. `*out` null on failure.
  static Code Make(const Table& batch, const Table& shard, uint32_t values_table, ValuePlan** out, ErrorBuffer* error) {
    *out = nullptr;
    if (batch.scheme_tables == nullptr || shard.scheme_tables == nullptr) {
      return Fail(error, Code::kInternal, "value_dedup: no value tables were passed");
    }
    return Guard(error, [&] {
      std::unique_ptr<ValueMergePlan> plan(new ValueMergePlan(shard, values_table));
      const Code code = plan->Join(batch, error);
      if (code == Code::kOk) *out = plan.release();
      return code;
    });
  }

  Code PlaceValue(Bytes batch_stored, uint8_t* scratch, Bytes* shard_stored, ErrorBuffer* error) noexcept override {
    if (finished_) return Fail(error, Code::kInternal, "value_dedup: a value was placed after the merge finished");
    if (batch_stored.size >= 1 && batch_stored.data[0] == kInline) {  // in the row: copied as it is
      if (batch_stored.size > kInlineMax + 1) {
        return Fail(error, Code::kCorruption, "value_dedup: a batch row holds %zu bytes inline (at most %u)",
                    batch_stored.size - 1, kInlineMax);
      }
      *shard_stored = batch_stored;
      return Code::kOk;
    }
    if (batch_stored.size != kRefSize || batch_stored.data[0] != kReference) {
      return Fail(error, Code::kCorruption,
                  "value_dedup: a batch row's stored value of %zu bytes is not a value or reference",
                  batch_stored.size);
    }
    const uint8_t* ref = batch_stored.data + 1;
    if (last_ >= placements_.size() || std::memcmp(placements_[last_].batch_ref.data(), ref, kRefKeySize) != 0) {
      const auto found = std::lower_bound(
          placements_.begin(), placements_.end(), ref,
          [](const Placement& p, const uint8_t* r) { return std::memcmp(p.batch_ref.data(), r, kRefKeySize) < 0; });
      if (found == placements_.end() || std::memcmp(found->batch_ref.data(), ref, kRefKeySize) != 0) {
        return Fail(error, Code::kCorruption, "value_dedup: a batch row refers to a value its value table lacks");
      }
      last_ = static_cast<size_t>(found - placements_.begin());
    }
    Placement& placed = placements_[last_];
    ++placed.taken;
    scratch[0] = kReference;
    std::memcpy(scratch + 1, placed.shard_ref.data(), kRefKeySize);
    *shard_stored = Bytes(scratch, kRefSize);
    return Code::kOk;
  }

  Code ReleaseValue(Bytes shard_stored, ErrorBuffer* error) noexcept override {
    if (finished_) return Fail(error, Code::kInternal, "value_dedup: a value was released after the merge finished");
    if (shard_stored.size == 0 || shard_stored.data[0] == kInline) return Code::kOk;
    if (shard_stored.size != kRefSize || shard_stored.data[0] != kReference) {
      return Fail(error, Code::kCorruption, "value_dedup: releasing a stored value of %zu bytes", shard_stored.size);
    }
    return Guard(error, [&] {
      Ref ref;
      std::memcpy(ref.data(), shard_stored.data + 1, kRefKeySize);
      released_.push_back(ref);
      return Code::kOk;
    });
  }

  Code Finish(ErrorBuffer* error) noexcept override {
    if (finished_) return Fail(error, Code::kInternal, "value_dedup: a merge's values were finished twice");
    finished_ = true;
    return Guard(error, [&] { return WriteCounts(error); });
  }

  void Destroy() noexcept override { delete this; }

 private:
  struct Placement {
    Ref batch_ref;
    Ref shard_ref;
    bool is_new;        // written to the shard by this plan: no count yet
    int64_t taken = 0;  // references rows took
  };

  ValueMergePlan(const Table& shard, uint32_t values_table)
      : shard_(shard),
        table_(values_table),
        values_(shard.scheme_tables[values_table]),
        refs_(shard.scheme_tables[values_table + 1]) {}

  static Code ReadFailed(ErrorBuffer* error, const char* what, int rc) {
    return Fail(error, Code::kIOError, "value_dedup: %s: %s", what, mdb_strerror(rc));
  }

  // The walk of the batch's values (hash order) beside the shard's: each is found among its hash's clash numbers
  // in the shard (dense from 0: value_table.h keeps them so) or written at the first number free.
  Code Join(const Table& batch, ErrorBuffer* error) {
    scheme_parts::ScopedCursor from;
    scheme_parts::ScopedCursor into;
    int rc = mdb_cursor_open(batch.txn, batch.scheme_tables[table_], &from.cursor);
    if (rc == MDB_SUCCESS) rc = mdb_cursor_open(shard_.txn, values_, &into.cursor);
    if (rc != MDB_SUCCESS) return ReadFailed(error, "opening the value tables", rc);
    scheme_parts::SortedPuts puts{into.cursor};
    bool past_end = false;  // the shard holds no value above the last one looked for, but those this plan wrote
    MDB_val k;
    MDB_val v;
    for (rc = mdb_cursor_get(from.cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(from.cursor, &k, &v, MDB_NEXT)) {
      if (k.mv_size != kRefKeySize) {
        return Fail(error, Code::kCorruption, "value_dedup: the batch's value table holds a %zu-byte key", k.mv_size);
      }
      const auto* key = static_cast<const uint8_t*>(k.mv_data);
      const Bytes value(v);
      if (value.size <= kInlineMax) {  // such values stay in their rows: Encode never writes one here
        return Fail(error, Code::kCorruption, "value_dedup: the batch's value table holds a %zu-byte value",
                    value.size);
      }
      if (XXH3_64bits(value.data, value.size) != GetU64(key)) {
        return Fail(error, Code::kCorruption, "value_dedup: a value of the batch's value table is not under its hash");
      }
      Placement placed;
      std::memcpy(placed.batch_ref.data(), key, kRefKeySize);
      std::memcpy(placed.shard_ref.data(), key, 8);
      uint32_t clash = 0;
      bool found = false;
      const bool same_hash = !placements_.empty() && std::memcmp(placements_.back().shard_ref.data(), key, 8) == 0;
      if (!past_end || same_hash) {
        PutU16(placed.shard_ref.data() + 8, 0);
        MDB_val at{kRefKeySize, placed.shard_ref.data()};
        MDB_val held;
        int step = mdb_cursor_get(into.cursor, &at, &held, MDB_SET_RANGE);
        if (step == MDB_NOTFOUND) past_end = true;
        while (step == MDB_SUCCESS && at.mv_size == kRefKeySize && std::memcmp(at.mv_data, key, 8) == 0 &&
               GetU16(static_cast<const uint8_t*>(at.mv_data) + 8) == clash) {
          if (held.mv_size == value.size && std::memcmp(held.mv_data, value.data, value.size) == 0) {
            found = true;
            break;
          }
          ++clash;
          step = mdb_cursor_get(into.cursor, &at, &held, MDB_NEXT);
        }
        if (step != MDB_SUCCESS && step != MDB_NOTFOUND) return ReadFailed(error, "reading the value table", step);
      }
      if (!found && clash > scheme_parts::kMaxClash) {
        return Fail(error, Code::kFull, "value_dedup: 65536 values share one hash");
      }
      PutU16(placed.shard_ref.data() + 8, static_cast<uint16_t>(clash));
      placed.is_new = !found;
      if (!found) {
        MDB_val at{kRefKeySize, placed.shard_ref.data()};
        MDB_val bytes = v;
        const int put = puts.Put(&at, &bytes, MDB_NOOVERWRITE);
        if (put != MDB_SUCCESS) {
          return Fail(error, PutFailureCode(put), "value_dedup: writing the value table: %s", mdb_strerror(put));
        }
      }
      placements_.push_back(placed);
    }
    if (rc != MDB_NOTFOUND) return ReadFailed(error, "reading the batch's value table", rc);
    return Code::kOk;
  }

  // Every changed count, once, in key order; then the values left with none, from the greatest key down (a value
  // whose count falls to 0 stays, with count 0, while a greater clash number of its hash lives).
  Code WriteCounts(ErrorBuffer* error) {
    struct Change {
      Ref ref;
      int64_t delta;
      bool is_new;
    };
    std::vector<Change> changes;
    changes.reserve(placements_.size() + released_.size());
    for (const Placement& p : placements_) changes.push_back(Change{p.shard_ref, p.taken, p.is_new});
    for (const Ref& r : released_) changes.push_back(Change{r, -1, false});
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.ref < b.ref; });

    scheme_parts::ScopedCursor counts;
    int rc = mdb_cursor_open(shard_.txn, refs_, &counts.cursor);
    if (rc != MDB_SUCCESS) return ReadFailed(error, "opening the value counts", rc);
    scheme_parts::SortedPuts puts{counts.cursor};
    std::vector<Ref> emptied;
    for (size_t i = 0; i < changes.size();) {
      Change change = changes[i];
      for (++i; i < changes.size() && changes[i].ref == change.ref; ++i) {
        change.delta += changes[i].delta;
        change.is_new = change.is_new || changes[i].is_new;
      }
      MDB_val k{kRefKeySize, change.ref.data()};
      MDB_val v;
      uint64_t count = 0;
      if (!change.is_new) {
        if (change.delta == 0) continue;  // taken and dropped as often (a row merged again unchanged)
        rc = mdb_cursor_get(counts.cursor, &k, &v, MDB_SET_KEY);
        if (rc == MDB_NOTFOUND || (rc == MDB_SUCCESS && v.mv_size != 8)) {
          return Fail(error, Code::kCorruption, "value_dedup: a value in use has no reference count");
        }
        if (rc != MDB_SUCCESS) return ReadFailed(error, "reading the value counts", rc);
        count = GetU64(static_cast<const uint8_t*>(v.mv_data));
      }
      if (change.delta < 0 && static_cast<uint64_t>(-change.delta) > count) {
        return Fail(error, Code::kCorruption, "value_dedup: releasing a value with no references");
      }
      const uint64_t total = count + static_cast<uint64_t>(change.delta);
      if (total == 0) {
        emptied.push_back(change.ref);
        continue;
      }
      uint8_t bytes[8];
      PutU64(bytes, total);
      v = MDB_val{8, bytes};
      rc = change.is_new ? puts.Put(&k, &v, MDB_NOOVERWRITE) : mdb_cursor_put(counts.cursor, &k, &v, MDB_CURRENT);
      if (rc != MDB_SUCCESS) {
        return Fail(error, PutFailureCode(rc), "value_dedup: writing a reference count: %s", mdb_strerror(rc));
      }
    }
    for (auto ref = emptied.rbegin(); ref != emptied.rend(); ++ref) {
      rc = RemoveOrKeep(*ref);
      if (rc != MDB_SUCCESS) {
        return Fail(error, PutFailureCode(rc), "value_dedup: removing an unused value: %s", mdb_strerror(rc));
      }
    }
    return Code::kOk;
  }

  // A value with no reference left: removed, unless a greater clash number of its hash lives (then it stays
  // with count 0, keeping the numbers dense).
  int RemoveOrKeep(const Ref& ref) {
    Ref next = ref;
    const uint32_t clash = GetU16(ref.data() + 8);
    int rc = MDB_NOTFOUND;
    if (clash < scheme_parts::kMaxClash) {
      PutU16(next.data() + 8, static_cast<uint16_t>(clash + 1));
      MDB_val nk{kRefKeySize, next.data()};
      MDB_val nv;
      rc = mdb_get(shard_.txn, values_, &nk, &nv);
    }
    MDB_val k{kRefKeySize, const_cast<uint8_t*>(ref.data())};
    if (rc == MDB_SUCCESS) {
      uint8_t zero[8] = {};
      MDB_val v{8, zero};
      return mdb_put(shard_.txn, refs_, &k, &v, 0);
    }
    if (rc != MDB_NOTFOUND) return rc;
    rc = mdb_del(shard_.txn, values_, &k, nullptr);
    if (rc != MDB_SUCCESS) return rc;
    rc = mdb_del(shard_.txn, refs_, &k, nullptr);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return rc;  // a value this plan wrote has no count yet
    return ValueTable::RemoveKeptBelow(shard_.txn, values_, refs_, ref.data());
  }

  const Table& shard_;
  const uint32_t table_;  // index of "values" in scheme_tables
  const MDB_dbi values_;
  const MDB_dbi refs_;
  std::vector<Placement> placements_;  // in batch_ref order
  std::vector<Ref> released_;
  size_t last_ = 0;  // the placement PlaceValue used last (rows often repeat a value)
  bool finished_ = false;
};

}  // namespace planb::value_dedup
