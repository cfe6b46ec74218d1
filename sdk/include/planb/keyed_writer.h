// Writing a store type's rows keyed through a KeyScheme in one pass of the table's cursor (see keyed_rows.h for
// the row layout). Header-only, over the SDK interfaces; using it is optional and changes no ABI.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstring>

#include "planb/key_form.h"
#include "planb/key_scheme.h"
#include "planb/keyed_search.h"
#include "planb/status.h"
#include "planb/table.h"

namespace planb {

// The Code of a failed mdb_put: kFull when the map or the transaction is full (the user can raise
// max_store_size), kIOError otherwise.
inline Code PutFailureCode(int rc) {
  return rc == MDB_MAP_FULL || rc == MDB_TXN_FULL ? Code::kFull : Code::kIOError;
}

// Writes a store type's rows in one pass of `table.cursor`: every find and write is a cursor operation, so rows
// arriving in LMDB key order (a batch merged into a shard) get LMDB's same-leaf-page shortcut. Per row, in the
// common case: one mdb_cursor_put (MDB_NOOVERWRITE: it finds the place, and an existing row at the same LMDB
// key is overwritten in place with MDB_CURRENT), plus, for a scheme whose candidates need proving (hashed), on
// a key's first row one step to a neighbour (a key new to the table, with a suffix: three steps on one page). A
// clash or a gap in the candidates falls back to FindKeyedRow.
//
// Single-threaded, inside the write transaction of `table`. The key's prefix is remembered between rows: a key
// given to Put must stay valid until the next Put (batch rows are, during a merge).
class KeyedRowWriter {
 public:
  // `has_value`: rows carry a value after the head (passed through the scheme's EncodeValue); Session rows do
  // not. `row_kind` names the row in messages ("State row"). `append`: rows probably go past the table's last
  // key (a batch merged into a new shard): each is tried with MDB_APPEND, which skips the search, until one
  // does not go there (then the writer stops trying).
  KeyedRowWriter(const Table& table, const KeyScheme& scheme, bool has_value, const char* row_kind,
                 bool append = false)
      : table_(table), scheme_(scheme), has_value_(has_value), row_kind_(row_kind), append_(append) {}
  KeyedRowWriter(const KeyedRowWriter&) = delete;
  KeyedRowWriter& operator=(const KeyedRowWriter&) = delete;
  ~KeyedRowWriter() {
    if (plan_ != nullptr) plan_->Destroy();
    if (value_plan_ != nullptr) value_plan_->Destroy();
  }

  // Last-writer-wins by version (header-only addition after SDK 7.7; plugins built against earlier headers are
  // unaffected): from now on a row that would replace a row of the same key and suffix does so only when the
  // first `bytes` bytes of its head compare (memcmp) above the existing row's; otherwise the existing row stays
  // and the new value's reference is released. A store type that puts a version first in its head (an effective
  // time, then a tie-break such as a hash of the value: big-endian, so that byte order is version order) gets
  // merges whose result does not depend on the order of the batches (docs/plugins.md, "Merges must commute").
  // `ties_replace`: a row whose version equals the existing one's replaces it (the later of two rows in one batch
  // wins); without it the existing row stays, which is what a merge needs (equal versions are equal rows).
  // Since SDK 7.7.
  void KeepHigherHead(uint32_t bytes, bool ties_replace = false) {
    version_bytes_ = bytes;
    ties_replace_ = ties_replace;
  }

  // Merges: lets the scheme place all of `batch`'s keys first (KeyScheme::PlanMerge: an id scheme resolves them
  // in its index's order). Once, before the batch's first row.
  // Since SDK 7.3.
  Code PlanMerge(const Table& batch, ErrorBuffer* error) {
    if (batch_ != nullptr) return Fail(error, Code::kInternal, "a %s merge was planned twice", row_kind_);
    batch_ = &batch;
    form_ = scheme_.LookupForm();
    return scheme_.PlanMerge(batch, table_, &plan_, error);
  }

  // Merges: a batch row's key and the sizes of the scheme's parts in it, as KeyScheme::DecodeRow gives them. For a
  // row whose key the plan placed, from the plan (no read of the batch's tables), and the key's shard prefix is
  // remembered, so the Put of this row asks the scheme nothing.
  // Since SDK 7.3.
  Code DecodeBatchRow(const Table& batch, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                      uint32_t* stored_key_size, ErrorBuffer* error) {
    if (plan_ != nullptr) {
      PlacedRow placed;
      const Code code = plan_->PlaceRow(lmdb_key, value, &placed, error);
      if (code == Code::kOk) {
        *key = placed.key;
        *prefix_size = placed.prefix_size;
        *stored_key_size = placed.stored_key_size;
        Remember(placed.key, placed.shard_prefix);
        return Code::kOk;
      }
      if (code != Code::kNotFound) return code;
    }
    // The hashed form's rows are read here, without a call per row; other forms, and malformed rows (the scheme
    // says what is wrong), by the scheme.
    if (form_.kind == KeyFormKind::kHashed &&
        key_form::DecodeHashedRow(form_.hash_bits, lmdb_key, value, key, prefix_size, stored_key_size)) {
      return Code::kOk;
    }
    return scheme_.DecodeRow(batch, lmdb_key, value, key, prefix_size, stored_key_size, error);
  }

  // Writes `key`'s row at its prefix + `suffix` -> stored key + `head` + `value`, replacing a row already there
  // (whose value is released). A new key gets a prefix from the scheme.
  Code Put(Bytes key, Bytes suffix, Bytes head, Bytes value, ErrorBuffer* error) {
    if (value_plan_ != nullptr) {  // the plan's counts would miss this row's reference
      return Fail(error, Code::kInternal, "a %s merge mixed Put with PutBatchRow", row_kind_);
    }
    Code code = CheckRowSize(key, head, value, error);  // before the scheme hashes or reads a byte of either
    if (code != Code::kOk) return code;
    uint8_t scratch[kMaxValueRefSize];
    Bytes stored;
    if (has_value_) {
      code = scheme_.EncodeValue(table_, value, scratch, &stored, error);
      if (code != Code::kOk) return code;
    }
    return PutStored(key, suffix, head, stored, error);
  }

  // Merges (SDK 7.4), after PlanMerge: writes a batch row as Put does, taking its value as the batch stores it
  // (`batch_stored`, the row's bytes after the stored key and head). A scheme that stores values as given
  // (StoresValuesAsGiven) has them copied as they are; otherwise it places the batch's values in bulk
  // (KeyScheme::PlanValues, asked at the first row) or, without a plan, the value is decoded from the batch and
  // encoded into the shard. A merge that writes rows this way must end with FinishMerge and must not mix them
  // with Put.
  // Since SDK 7.4.
  Code PutBatchRow(Bytes key, Bytes suffix, Bytes head, Bytes batch_stored, ErrorBuffer* error) {
    const Code checked = CheckRowSize(key, head, has_value_ ? batch_stored : Bytes(), error);
    if (checked != Code::kOk) return checked;
    if (!has_value_) return PutStored(key, suffix, head, Bytes(), error);
    if (batch_ == nullptr) return Fail(error, Code::kInternal, "a %s batch row was put before PlanMerge", row_kind_);
    if (!values_planned_) {
      values_planned_ = true;
      // Stored as given in the batch (the same scheme and options) and in the shard: DecodeValue and EncodeValue
      // would hand the bytes back unchanged, two calls per row.
      values_as_given_ = scheme_.StoresValuesAsGiven();
      if (!values_as_given_) {
        Code code = scheme_.PlanValues(*batch_, table_, &value_plan_, error);
        if (code != Code::kOk) return code;
      }
    }
    if (values_as_given_) return PutStored(key, suffix, head, batch_stored, error);
    uint8_t scratch[kMaxValueRefSize];
    Bytes stored;
    if (value_plan_ != nullptr) {
      Code code = value_plan_->PlaceValue(batch_stored, scratch, &stored, error);
      if (code != Code::kOk) return code;
      return PutStored(key, suffix, head, stored, error);
    }
    Bytes value;
    Code code = scheme_.DecodeValue(*batch_, batch_stored, &value, error);
    if (code == Code::kOk) code = scheme_.EncodeValue(table_, value, scratch, &stored, error);
    if (code != Code::kOk) return code;
    return PutStored(key, suffix, head, stored, error);
  }

  // Merges: after the last PutBatchRow, writes what the value plan counted (nothing without one).
  // Since SDK 7.4.
  Code FinishMerge(ErrorBuffer* error) {
    if (value_plan_ == nullptr) return Code::kOk;
    return value_plan_->Finish(error);
  }

 private:
  // Room a scheme's stored key may take beyond the key's own bytes (hashed: a varint length of up to 5 bytes).
  static constexpr uint64_t kStoredKeyOverhead = 16;

  // Whether a row of this key, head and value can be an LMDB value (at most kMaxLmdbValueSize bytes, allowing
  // kStoredKeyOverhead for the scheme's stored key), counted in 64 bits before the scheme hashes, encodes or
  // sizes the key: a scheme's StoredKeySize is 32 bits and would wrap for a key near 4 GiB, and MDB_RESERVE
  // would then reserve less than the row written. TryInsert and Overwrite check the exact size again.
  Code CheckRowSize(Bytes key, Bytes head, Bytes value, ErrorBuffer* error) const {
    const uint64_t size = uint64_t{key.size} + kStoredKeyOverhead + head.size + value.size;
    if (size <= kMaxLmdbValueSize) return Code::kOk;
    return Fail(error, Code::kInvalidArgument,
                "%s of a %zu-byte key and a %zu-byte value is past LMDB's limit of %llu bytes for one row",
                row_kind_, key.size, value.size, static_cast<unsigned long long>(kMaxLmdbValueSize));
  }

  struct Parts {
    Bytes key;
    Bytes suffix;
    Bytes head;
    Bytes stored_value;
  };

  // Put with the value already in its stored form (one reference taken).
  Code PutStored(Bytes key, Bytes suffix, Bytes head, Bytes stored, ErrorBuffer* error) {
    Parts row{key, suffix, head, stored};
    if (known_ && key == key_) return PutOwn(prefix_, row, error);
    known_ = false;

    Candidate candidate;
    Code code = scheme_.FirstCandidate(table_, key, Intent::kWrite, &candidate, error);
    if (code == Code::kNotFound) {  // the scheme has no prefix for the key yet (an id scheme): make one
      candidate.prefix.size = 0;
      code = scheme_.NewPrefix(table_, key, false, &candidate.prefix, error);
      candidate.certain = true;
    }
    if (code != Code::kOk) return code;
    if (candidate.certain) {
      Remember(key, candidate.prefix);
      return PutOwn(prefix_, row, error);
    }

    // Optimistic: the first candidate is almost always the key's or free. Write there, then prove it from the
    // rows beside the new one.
    KeyPrefix row_key;
    MDB_val existing;
    bool inserted = false;
    code = TryInsert(candidate.prefix, row, &row_key, &existing, &inserted, error);
    if (code != Code::kOk) return code;
    if (!inserted) {
      if (!scheme_.RowHasKey(key, Bytes(existing))) return PutSlow(row, error);  // another key's row
      Remember(key, candidate.prefix);
      return Overwrite(prefix_, row, row_key, existing, error);
    }
    bool ours = false;
    code = ProveInserted(candidate.prefix, row, row_key, &ours, error);
    if (code != Code::kOk) return code;
    if (ours) {
      Remember(key, candidate.prefix);
      return Code::kOk;
    }
    MDB_val k = row_key.view().mdb();
    int rc = mdb_del(table_.txn, table_.dbi, &k, nullptr);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "undoing a %s: %s", row_kind_, mdb_strerror(rc));
    return PutSlow(row, error);
  }

  // Drops a reference a row held: through the value plan when there is one (it counts every reference of the
  // merge), else the scheme's own.
  Code Release(Bytes stored, ErrorBuffer* error) {
    if (value_plan_ != nullptr) return value_plan_->ReleaseValue(stored, error);
    return scheme_.ReleaseValue(table_, stored, error);
  }

  void Remember(Bytes key, const KeyPrefix& prefix) {
    key_ = key;
    CopyPrefix(prefix, &prefix_);
    known_ = true;
  }

  // Counted in 64 bits: a scheme's stored key (its own size) could still carry the sum past LMDB's limit.
  uint64_t ValueSize(const KeyPrefix& prefix, const Parts& row) const {
    return uint64_t{scheme_.StoredKeySize(prefix, row.key)} + row.head.size + row.stored_value.size;
  }

  Code RowTooLarge(uint64_t size, ErrorBuffer* error) const {
    return Fail(error, Code::kInvalidArgument, "%s of %llu bytes is past LMDB's limit of %llu bytes for one row",
                row_kind_, static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(kMaxLmdbValueSize));
  }

  void Fill(const KeyPrefix& prefix, const Parts& row, void* out) const {
    auto* p = static_cast<uint8_t*>(out);
    scheme_.WriteStoredKey(prefix, row.key, p);
    p += scheme_.StoredKeySize(prefix, row.key);
    if (row.head.size != 0) std::memcpy(p, row.head.data, row.head.size);
    if (row.stored_value.size != 0) std::memcpy(p + row.head.size, row.stored_value.data, row.stored_value.size);
  }

  // Inserts the row under `prefix` unless its LMDB key exists (then `existing` is that row, the cursor on it).
  Code TryInsert(const KeyPrefix& prefix, const Parts& row, KeyPrefix* row_key, MDB_val* existing, bool* inserted,
                 ErrorBuffer* error) {
    if (!JoinKey(prefix, row.suffix, row_key)) {
      return Fail(error, Code::kInvalidArgument, "key prefix of %u bytes leaves no room for the %s's %zu-byte suffix",
                  prefix.size, row_kind_, row.suffix.size);
    }
    const uint64_t size = ValueSize(prefix, row);
    if (size > kMaxLmdbValueSize) return RowTooLarge(size, error);
    MDB_val k = row_key->view().mdb();
    MDB_val v{size, nullptr};
    if (append_) {
      const int rc = mdb_cursor_put(table_.cursor, &k, &v, MDB_APPEND | MDB_RESERVE);
      if (rc == MDB_SUCCESS) {
        Fill(prefix, row, v.mv_data);
        *inserted = true;
        return Code::kOk;
      }
      if (rc != MDB_KEYEXIST) return Fail(error, PutFailureCode(rc), "writing %s: %s", row_kind_, mdb_strerror(rc));
      append_ = false;  // not past the last key (MDB_APPEND says so with MDB_KEYEXIST): search from now on
      v = MDB_val{size, nullptr};
    }
    const int rc = mdb_cursor_put(table_.cursor, &k, &v, MDB_NOOVERWRITE | MDB_RESERVE);
    if (rc == MDB_KEYEXIST) {
      *existing = v;
      *inserted = false;
      return Code::kOk;
    }
    if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing %s: %s", row_kind_, mdb_strerror(rc));
    Fill(prefix, row, v.mv_data);
    *inserted = true;
    return Code::kOk;
  }

  // Replaces the row the cursor is on (`existing`, the key's own) with `row`, unless it already holds exactly
  // that: then nothing is written, so merging data a shard already holds (a file loaded again) dirties no page
  // and the shard does not grow. The stored key is the same by construction (the row is the key's own, under the
  // same prefix); head and stored value are compared.
  Code Overwrite(const KeyPrefix& prefix, const Parts& row, const KeyPrefix& row_key, const MDB_val& existing,
                 ErrorBuffer* error) {
    const uint64_t stored_key = scheme_.StoredKeySize(prefix, row.key);
    const uint64_t size = stored_key + row.head.size + row.stored_value.size;  // ValueSize, without a second call
    if (size > kMaxLmdbValueSize) return RowTooLarge(size, error);
    if (existing.mv_size == size && SameTail(existing, stored_key, row)) {
      // The value's new reference (value_dedup: the same one the row holds) is dropped instead of the old.
      return has_value_ ? Release(row.stored_value, error) : Code::kOk;
    }
    if (version_bytes_ != 0) {
      if (existing.mv_size < stored_key + version_bytes_ || row.head.size < version_bytes_) {
        return Fail(error, Code::kCorruption, "%s of %zu bytes is shorter than its stored key and version", row_kind_,
                    existing.mv_size);
      }
      const auto* old_version = static_cast<const uint8_t*>(existing.mv_data) + stored_key;
      const int order = std::memcmp(old_version, row.head.data, version_bytes_);
      if (order > 0 || (order == 0 && !ties_replace_)) {
        // The row there is as new or newer: it stays, and the reference the new value took is dropped.
        return has_value_ ? Release(row.stored_value, error) : Code::kOk;
      }
    }
    if (has_value_) {
      const size_t skip = stored_key + row.head.size;
      if (existing.mv_size < skip) {
        return Fail(error, Code::kCorruption, "%s of %zu bytes is shorter than its stored key and head", row_kind_,
                    existing.mv_size);
      }
      const Bytes old(static_cast<const uint8_t*>(existing.mv_data) + skip, existing.mv_size - skip);
      Code code = Release(old, error);
      if (code != Code::kOk) return code;
    }
    MDB_val k = row_key.view().mdb();
    MDB_val v{size, nullptr};
    const int rc = mdb_cursor_put(table_.cursor, &k, &v, MDB_CURRENT | MDB_RESERVE);
    if (rc != MDB_SUCCESS) return Fail(error, PutFailureCode(rc), "writing %s: %s", row_kind_, mdb_strerror(rc));
    Fill(prefix, row, v.mv_data);
    return Code::kOk;
  }

  // Whether `existing` holds `row`'s head and stored value after `stored_key` bytes (sizes already equal).
  static bool SameTail(const MDB_val& existing, size_t stored_key, const Parts& row) {
    const auto* p = static_cast<const uint8_t*>(existing.mv_data) + stored_key;
    if (row.head.size != 0 && std::memcmp(p, row.head.data, row.head.size) != 0) return false;
    p += row.head.size;
    return row.stored_value.size == 0 || std::memcmp(p, row.stored_value.data, row.stored_value.size) == 0;
  }

  // Writes the row under `prefix`, known to be the key's.
  Code PutOwn(const KeyPrefix& prefix, const Parts& row, ErrorBuffer* error) {
    KeyPrefix row_key;
    MDB_val existing;
    bool inserted = false;
    Code code = TryInsert(prefix, row, &row_key, &existing, &inserted, error);
    if (code != Code::kOk || inserted) return code;
    return Overwrite(prefix, row, row_key, existing, error);
  }

  // After inserting the key's first row under a candidate that needs proving: `*ours` when the rows beside it
  // under the candidate are the key's, or there are none and no later candidate exists (a gap could hide the
  // key's rows there). With a suffix the row before is looked at first: a key's newer row (a later time, the
  // common case when a batch updates a shard) follows the key's own rows, so one step back proves it.
  Code ProveInserted(const KeyPrefix& prefix, const Parts& row, const KeyPrefix& row_key, bool* ours,
                     ErrorBuffer* error) {
    MDB_val k;
    MDB_val v;
    int rc = MDB_SUCCESS;
    if (row.suffix.size != 0) {
      rc = mdb_cursor_get(table_.cursor, &k, &v, MDB_PREV);
      if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "%s", mdb_strerror(rc));
      if (rc == MDB_SUCCESS && RowUnder(k, prefix, row.suffix.size)) {
        *ours = scheme_.RowHasKey(row.key, Bytes(v));
        return Code::kOk;
      }
      MDB_val back = row_key.view().mdb();  // back to the new row (mostly on the same page: no descent)
      rc = mdb_cursor_get(table_.cursor, &back, &v, MDB_SET_KEY);
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "finding the new %s: %s", row_kind_, mdb_strerror(rc));
    }
    rc = mdb_cursor_get(table_.cursor, &k, &v, MDB_NEXT);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) return Fail(error, Code::kIOError, "%s", mdb_strerror(rc));
    if (rc == MDB_SUCCESS && RowUnder(k, prefix, row.suffix.size)) {
      *ours = scheme_.RowHasKey(row.key, Bytes(v));
      return Code::kOk;
    }
    if (rc == MDB_NOTFOUND) {  // no row under the candidate, and no later candidate past the table's end
      *ours = true;
      return Code::kOk;
    }
    KeyPrefix next;
    CopyPrefix(prefix, &next);
    Code code = scheme_.NextCandidate(table_, row.key, Bytes(k), &next, error);
    if (code != Code::kOk && code != Code::kNotFound) return code;
    *ours = code == Code::kNotFound;
    return Code::kOk;
  }

  // After a clash (or a gap): the full search, then the write.
  Code PutSlow(const Parts& row, ErrorBuffer* error) {
    KeyPrefix prefix;
    Code code = ResolveKey(table_, scheme_, row.key, static_cast<uint32_t>(row.suffix.size), Intent::kWrite, &prefix,
                           error);
    if (code != Code::kOk) return code;
    Remember(row.key, prefix);
    return PutOwn(prefix_, row, error);
  }

  const Table& table_;
  const KeyScheme& scheme_;
  const bool has_value_;
  const char* const row_kind_;
  bool append_;
  bool known_ = false;  // `prefix_` is the prefix of `key_`
  Bytes key_;
  KeyPrefix prefix_;
  const Table* batch_ = nullptr;  // the batch being merged, from PlanMerge
  MergePlan* plan_ = nullptr;     // PlanMerge's, when the scheme made one
  bool values_planned_ = false;   // PlanValues was asked (at the first PutBatchRow)
  bool values_as_given_ = false;  // the scheme's StoresValuesAsGiven, asked at the first PutBatchRow
  ValuePlan* value_plan_ = nullptr;
  uint32_t version_bytes_ = 0;    // KeepHigherHead's; 0: a new row always replaces the old
  bool ties_replace_ = false;     // KeepHigherHead's
  KeyForm form_;                  // the scheme's LookupForm, asked in PlanMerge
};

}  // namespace planb
