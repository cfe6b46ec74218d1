// The key-scheme interface: how a user's text key becomes the leading bytes (the "prefix") of LMDB keys.
// A store type appends its own fixed-size suffix (an effective time, session bounds) after the prefix, and puts
// the scheme's "stored key" at the start of every row value, followed by its own payload:
//
//   LMDB key   = prefix(key) + store suffix
//   LMDB value = stored key (scheme-defined, may be empty) + store head (e.g. a type byte) + stored value
//
// A key's rows sit under one prefix. The scheme names *candidate* prefixes; a store type finds the key's rows
// by seeking its cursor to candidate + suffix and checking, on the row it lands on, that the row is the key's
// (RowHasKey). In the common case that is one descent: the first candidate is computed without I/O (hashed:
// hash + clash 0; direct: the key itself) or with one read of the scheme's own table (an id scheme), and the
// row checked is the row the store type wanted anyway. `planb/keyed_rows.h` implements these searches and the
// one-pass writes over this interface; store types use it rather than calling these methods one by one.
//
// Thread-safety: a scheme instance is immutable after creation; every method may be called from many threads.
// Failures return a Code and a message in the host's ErrorBuffer; an exception that escapes is caught by the host
// and reported naming the scheme and the call.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstdint>

#include "planb/bytes.h"
#include "planb/status.h"
#include "planb/table.h"

namespace planb {

enum class Intent : uint32_t { kRead = 0, kWrite = 1 };

struct KeyPrefix {
  uint32_t size = 0;
  uint8_t bytes[kMaxLmdbKeySize];
  Bytes view() const { return Bytes(bytes, size); }
};

// A prefix that may hold a key's rows.
struct Candidate {
  KeyPrefix prefix;
  // True when `prefix` is the key's whatever the table holds (direct keys, an id read from the scheme's key
  // table): no row needs checking and there is no other candidate. False for hashed keys (clashes).
  bool certain = false;
};

// The byte forms of the built-in schemes' prefixes that a lookup can compute itself, without a call into the
// scheme (KeyScheme::LookupForm, ABI 7.6; the forms' code is planb/key_form.h).
// Since SDK 7.6.
enum class KeyFormKind : uint32_t {
  kCallScheme = 0,  // none: lookups ask the scheme (its FirstCandidate and MatchStoredKey)
  kHashed = 1,      // prefix: the top `hash_bits` of XXH3-64(key), big-endian, in ceil(hash_bits / 8) bytes, then
                    // clash number 0 (2 bytes); stored key: the key's length (LEB128 varint) + the key
  kDirect = 2,      // prefix: the key (after its length, 2 bytes big-endian, when `length_prefixed`), certain;
                    // keys of 1 to `max_key` bytes (others are absent); no stored key
  kHybrid = 3,      // (7.7) keys of 0 to `max_key` bytes: tag 0x00 + the direct form (certain, no stored key);
                    // longer keys: tag 0x01 + the hashed form (prefix and stored key as kHashed)
  kVariable = 4,    // (7.7) keys of 0 to `max_key` bytes: tag 0x00 + the direct form; keys longer than LMDB's key
                    // limit: tag 0x02 + the hashed form; keys between: the scheme's (an id from its own table)
};

// Since SDK 7.6.
struct KeyForm {
  KeyFormKind kind = KeyFormKind::kCallScheme;
  uint32_t hash_bits = 0;        // kHashed, kHybrid, kVariable: 8 to 64
  uint32_t max_key = 0;          // kDirect, kHybrid, kVariable: the longest key of the direct form
  uint32_t length_prefixed = 0;  // kDirect, kHybrid, kVariable: 1 when the direct form starts with the key's length
};

// Bytes EncodeValue may hand back from its scratch buffer (a reference into a value table, say).
inline constexpr uint32_t kMaxValueRefSize = 32;

// A batch row whose key a MergePlan placed: what KeyScheme::DecodeRow gives for the row, and the key's prefix in
// the shard (certain: no row needs checking).
// Since SDK 7.3.
struct PlacedRow {
  Bytes key;  // valid until the batch's transaction ends
  uint32_t prefix_size = 0;
  uint32_t stored_key_size = 0;
  KeyPrefix shard_prefix;
};

// Where a batch's keys go in a shard, decided for the whole batch before its rows are merged
// (KeyScheme::PlanMerge, ABI 7.3). Used by one thread, inside the merge's write transaction.
// Since SDK 7.3.
class MergePlan {
 public:
  // For a batch row (its LMDB key and value): kOk and `out` when the plan placed the row's key; kNotFound when
  // it did not (the store type decodes the row with DecodeRow and places the key itself, as without a plan); an
  // error for a row the plan sees is malformed. No I/O; allocates nothing.
  virtual Code PlaceRow(Bytes lmdb_key, Bytes value, PlacedRow* out, ErrorBuffer* error) = 0;
  // Frees the plan, in the module that made it.
  virtual void Destroy() = 0;

 protected:
  ~MergePlan() = default;
};

// Where a batch's stored values go in a shard, decided for the whole batch before its rows are merged
// (KeyScheme::PlanValues, ABI 7.4): a scheme that keeps values in tables of its own (value_dedup) joins the
// batch's value table with the shard's in their own order, writes the values new to the shard, and counts the
// references the merged rows take and drop, writing the counts once, at Finish. Used by one thread, inside the
// merge's write transaction. Until Finish the shard's counts are not exact: a merge that uses a plan must call
// Finish after its last row (a merge that fails before aborts its transaction, which undoes the rest) and
// destroy the plan before Store::Merge returns, on its thread: the host fails a merge that returns kOk having
// destroyed a plan with references taken or dropped since its Finish.
// Since SDK 7.4.
class ValuePlan {
 public:
  // What a shard row stores for a batch row's stored value `batch_stored`, with one reference taken (counted,
  // written at Finish): `*shard_stored` is `batch_stored` or written into `scratch`. An error for bytes that
  // are not a stored value of the batch. No I/O; allocates nothing.
  virtual Code PlaceValue(Bytes batch_stored, uint8_t* scratch, Bytes* shard_stored, ErrorBuffer* error) = 0;
  // A shard row holding `shard_stored` is overwritten, or a row was not written after all: drops one reference
  // (counted, written at Finish). May allocate (a value the batch did not bring).
  virtual Code ReleaseValue(Bytes shard_stored, ErrorBuffer* error) = 0;
  // After the batch's last row: writes the counts, and removes values left with none.
  virtual Code Finish(ErrorBuffer* error) = 0;
  // Frees the plan, in the module that made it.
  virtual void Destroy() = 0;

 protected:
  ~ValuePlan() = default;
};

class KeyScheme {
 public:
  // ---- Finding a key's rows. Candidates of one key all have the same size, are visited in increasing byte
  // order, and never prefix one another.

  // The first candidate prefix of `key` in `table`, without touching `table.cursor`: kOk; kNotFound when the
  // scheme knows the key has no prefix in this table (reads: a miss; writes: NewPrefix gives one);
  // kInvalidArgument (writes only) for a key the scheme cannot store. A key that could never be stored is
  // kNotFound for reads. Allocates nothing.
  virtual Code FirstCandidate(const Table& table, Bytes key, Intent intent, Candidate* out,
                              ErrorBuffer* error) const = 0;

  // Whether a row under a candidate that is not `certain` belongs to `key`, from the row's value (which starts
  // with the stored key). Every row under one prefix belongs to the same key, so one row decides. No I/O.
  virtual bool RowHasKey(Bytes key, Bytes value) const = 0;

  // After `prefix` turned out to hold another key's rows or none: moves `prefix` to the next candidate above it
  // that has rows in `table` (so that gaps left by deleted keys are skipped), or returns kNotFound, leaving
  // `prefix` as it was, when there is none. `after` is, when the caller knows it (data non-null), the LMDB key
  // of the first row after every row under `prefix`: a scheme can often answer from it without I/O. Otherwise
  // the scheme may move `table.cursor` (e.g. MDB_SET_RANGE past `prefix`). Allocates nothing.
  virtual Code NextCandidate(const Table& table, Bytes key, Bytes after, KeyPrefix* prefix,
                             ErrorBuffer* error) const = 0;

  // For writes, when no candidate holds `key`'s rows: the prefix the key gets. On entry `prefix` is the last
  // candidate examined and `taken` says whether it holds another key's rows (hashed: then the next clash
  // number, kFull past the last); when FirstCandidate returned kNotFound, `prefix->size` is 0 (an id scheme
  // allocates an id in its own tables here). May use `table.cursor`.
  virtual Code NewPrefix(const Table& table, Bytes key, bool taken, KeyPrefix* prefix,
                         ErrorBuffer* error) const = 0;

  // ---- The scheme's part of each row value.

  // Bytes this scheme puts at the start of each row value for `key` under `prefix` (in the table the row goes
  // to), and writes them.
  virtual uint32_t StoredKeySize(const KeyPrefix& prefix, Bytes key) const = 0;
  virtual void WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const = 0;

  // Recovers the user key of a row and where the store's parts start: `prefix_size` bytes of `lmdb_key` and
  // `stored_key_size` bytes of `value` belong to the scheme. Views are valid until the transaction ends.
  virtual Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                         uint32_t* stored_key_size, ErrorBuffer* error) const = 0;

  // ---- Stored values (room for value deduplication: a value stored once in the scheme's value table, rows
  // holding a reference). Store types pass the value part of every row through these. Schemes that store
  // values as they are (hashed, direct) return the bytes given, copy nothing and touch nothing.

  // What a row of `table` stores for `value`: `*stored` is `value` itself or up to kMaxValueRefSize bytes
  // written into `scratch` (taking a reference in `table`'s value table).
  virtual Code EncodeValue(const Table& table, Bytes value, uint8_t* scratch, Bytes* stored,
                           ErrorBuffer* error) const = 0;
  // The value a row of `table` holds as `stored`; the view is valid until the transaction ends. No allocation.
  virtual Code DecodeValue(const Table& table, Bytes stored, Bytes* value, ErrorBuffer* error) const = 0;
  // A row holding `stored` is being overwritten or removed: drops its reference.
  virtual Code ReleaseValue(const Table& table, Bytes stored, ErrorBuffer* error) const = 0;

  // ---- Maintenance (ABI 6).

  // After rows were deleted (retention, condensation, a user's deletion batch), in the shard's write
  // transaction: removes what the scheme keeps per key for keys that no longer have any row in `table` (a
  // lookup table's ids), so that its tables never leak entries. `suffix_size` is the store type's suffix after
  // the prefix. `*removed` gets the number of keys forgotten. Schemes that keep nothing per key (hashed,
  // direct) return kOk at once with 0. Values need no sweep: ReleaseValue keeps their counts exact.
  virtual Code SweepUnusedKeys(const Table& table, uint32_t suffix_size, uint64_t* removed,
                               ErrorBuffer* error) const = 0;

  // Everything about this instance that changes the bytes it writes (e.g. "hash_bits=64"); recorded in each
  // shard's meta table and compared at open, so a shard is never read with another layout.
  virtual Bytes Layout() const = 0;

  // How many of the scheme's declared tables (PluginDescriptor::tables, a leading run of them) this instance
  // reads and writes: the host creates and opens only those, and Table::scheme_tables holds only those. A
  // table an option adds (value_dedup's) goes after the ones every instance uses, so that a shard written
  // without the option never needs it. The count must follow from the options, which Layout() records.
  virtual uint32_t TablesInUse() const = 0;

  // ---- Merges in bulk (ABI 7.3).

  // Before a store type merges `batch` into `shard` (the shard's write transaction; both tables' scheme tables
  // open): a scheme that keeps keys in tables of its own (an id scheme) may place every key of the batch at
  // once, walking its tables in their own order (one pass over each rather than a random read per key), write
  // what new keys need into the shard's tables, and hand back a plan that turns the batch's prefixes into the
  // shard's. `*plan` null: the store type places each key as its rows come (FirstCandidate / NewPrefix); the
  // default, and what the host answers for schemes built against an SDK before 7.3. The store type destroys a
  // plan before the transaction ends.
  // Since SDK 7.3.
  virtual Code PlanMerge(const Table& batch, const Table& shard, MergePlan** plan, ErrorBuffer* error) const {
    (void)batch, (void)shard, (void)error;
    *plan = nullptr;
    return Code::kOk;
  }

  // ---- Values in bulk (ABI 7.4).

  // Before a store type merges `batch`'s rows into `shard` through a ValuePlan (KeyedRowWriter::PutBatchRow):
  // a scheme that keeps values in tables of its own places every value of the batch at once, one pass over each
  // table, rather than a random read and two writes per row. `*plan` null: the store type decodes each row's
  // value from the batch and encodes it into the shard (DecodeValue / EncodeValue); the default, and what the
  // host answers for schemes built against an SDK before 7.4. The store type destroys a plan before the
  // transaction ends.
  // Since SDK 7.4.
  virtual Code PlanValues(const Table& batch, const Table& shard, ValuePlan** plan, ErrorBuffer* error) const {
    (void)batch, (void)shard, (void)error;
    *plan = nullptr;
    return Code::kOk;
  }

  // ---- Lookups in fewer calls (ABI 7.5).

  // RowHasKey and, when the row is `key`'s, its stored key's size (StoredKeySize(prefix, key)) in one call: what
  // a lookup asks of the row it lands on under a candidate that is not certain. The default makes the two calls;
  // a scheme that reads the stored key to compare it knows its size already. The host makes the two calls
  // itself for schemes built against an SDK before 7.5.
  // Since SDK 7.5.
  virtual bool MatchStoredKey(const KeyPrefix& prefix, Bytes key, Bytes value, uint32_t* stored_key_size) const {
    if (!RowHasKey(key, value)) return false;
    *stored_key_size = StoredKeySize(prefix, key);
    return true;
  }

  // True when DecodeValue gives back, for every row, the stored bytes it is handed (no value table), and so
  // EncodeValue the value it is given: a store type may then skip DecodeValue on lookups, and a merge
  // (KeyedRowWriter::PutBatchRow) copies a batch's stored values as they are. Asked once, when the map's plugins
  // are made; the answer must not change for the instance's life. The default, and what the host answers for
  // schemes built before 7.5: false.
  // Since SDK 7.5.
  virtual bool StoresValuesAsGiven() const { return false; }

  // ---- Lookups without scheme calls (ABI 7.6).

  // The form of this scheme's prefixes and stored keys when it is one that planb/key_form.h computes: a store
  // type's lookups (FindKeyedRow with the form) then compute the first candidate and check the landed row's stored
  // key themselves, which are four calls through the host's guard on every hashed lookup; clashes still go
  // to NextCandidate. Only reads use the form: writes keep calling the scheme. Asked once, when the map's plugins
  // are made; the answer must not change for the instance's life. The host checks a form against the scheme's own
  // answers for a few keys before it hands the form on, and answers kCallScheme when they differ, when the form is
  // malformed, and for schemes built before 7.6. The default: kCallScheme.
  // Since SDK 7.6.
  virtual KeyForm LookupForm() const { return KeyForm(); }

 protected:
  ~KeyScheme() = default;  // destroyed through the plugin's descriptor, by the module that made it
};

}  // namespace planb
