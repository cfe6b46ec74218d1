// Finding a key's rows through a KeyScheme with one descent of the table's cursor in the common case: the
// cursor is sent to (first candidate + suffix) and the row it lands on (or the one before) both answers the
// search and proves the candidate is the key's; other candidates are tried only after a real clash.
// Header-only, over the SDK interfaces; using it is optional and changes no ABI. Allocates nothing.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstring>

#include "planb/key_form.h"
#include "planb/key_scheme.h"
#include "planb/status.h"
#include "planb/table.h"

// The lookup path's functions are inlined into each store type's call, where seek, intent and the suffix's size
// are constants: the compiler then drops the branches a call never takes (a State lookup is one seek and one
// check). Left to itself, gcc kept FindKeyedRow and Search out of line, each a call with every branch live.
// Since SDK 7.6.
#if defined(__GNUC__)
#define PLANB_LOOKUP_INLINE inline __attribute__((always_inline))
#else
#define PLANB_LOOKUP_INLINE inline
#endif

namespace planb {

// Which row of the key a search wants, relative to prefix + suffix.
enum class Seek : uint32_t {
  kExact = 0,       // the row at prefix + suffix
  kAtOrBefore = 1,  // the last row of the key <= prefix + suffix (temporal "as of")
  kAtOrAfter = 2,   // the first row of the key >= prefix + suffix
};

struct KeySearch {
  // The key's prefix when `key_found`; otherwise the last candidate examined (what NewPrefix takes), with
  // `taken` telling whether it holds another key's rows. Size 0 when the scheme gave no candidate.
  KeyPrefix prefix;
  bool key_found = false;
  bool taken = false;
  // The row found (kOk only); `table.cursor` is on it. Views valid until the transaction ends or the cursor
  // writes.
  MDB_val row_key{0, nullptr};
  MDB_val row_value{0, nullptr};
  // When `stored_key_known`: the size of the stored key at the start of the key's rows' values, learnt while
  // proving the candidate (KeyScheme::MatchStoredKey, or the hashed form's own check) or from the key's form
  // (direct: none). Otherwise (a certain candidate the scheme gave) ask StoredKeySize.
  // Since SDK 7.5.
  bool stored_key_known = false;
  uint32_t stored_key_size = 0;
};

// The size of the stored key at the start of `search`'s row: from the search when it learnt it, else asked.
// Since SDK 7.5.
inline uint32_t StoredKeySizeOf(const KeyScheme& scheme, const KeySearch& search, Bytes key) {
  return search.stored_key_known ? search.stored_key_size : scheme.StoredKeySize(search.prefix, key);
}

// Copies `size` bytes from one KeyPrefix's bytes to another's. Prefixes are mostly short (a 10-byte hash, a key of
// a few dozen bytes): up to 32 bytes, a fixed 32-byte copy (both buffers hold 511) is two moves where a copy of a
// variable size is a call, on every lookup.
// Since SDK 7.2.
inline void CopyPrefixBytes(uint8_t* to, const uint8_t* from, uint32_t size) {
  constexpr uint32_t kShort = 32;
  static_assert(kShort <= kMaxLmdbKeySize, "KeyPrefix buffers hold at least 32 bytes");
  if (size <= kShort) {
    std::memcpy(to, from, kShort);  // a constant size, so no call (a size chosen at run time would be one)
  } else {
    std::memcpy(to, from, size);
  }
}

// Copies the used bytes of `from` (a KeyPrefix is 515 bytes; a prefix is often 10).
inline void CopyPrefix(const KeyPrefix& from, KeyPrefix* to) {
  to->size = from.size;
  CopyPrefixBytes(to->bytes, from.bytes, from.size);
}

// prefix + suffix into `out` (the caller's stack); false when it would pass LMDB's key limit.
inline bool JoinKey(const KeyPrefix& prefix, Bytes suffix, KeyPrefix* out) {
  if (prefix.size + suffix.size > kMaxLmdbKeySize) return false;
  CopyPrefixBytes(out->bytes, prefix.bytes, prefix.size);
  CopyBytes(out->bytes + prefix.size, suffix.data, suffix.size);
  out->size = static_cast<uint32_t>(prefix.size + suffix.size);
  return true;
}

// Whether LMDB key `k` is a row under `prefix` with a suffix of `suffix_size` bytes.
inline bool RowUnder(const MDB_val& k, const KeyPrefix& prefix, size_t suffix_size) {
  return k.mv_size == prefix.size + suffix_size &&
         SameBytes(static_cast<const uint8_t*>(k.mv_data), prefix.bytes, prefix.size);
}

namespace keyed_search_detail {

// `suffix` written after `prefix`'s bytes, in its own buffer, and `*target` the whole; false past LMDB's key limit.
PLANB_LOOKUP_INLINE bool AppendSuffix(Bytes suffix, KeyPrefix* prefix, Bytes* target) {
  if (prefix->size + suffix.size > kMaxLmdbKeySize) return false;
  CopyBytes(prefix->bytes + prefix->size, suffix.data, suffix.size);
  *target = Bytes(prefix->bytes, prefix->size + suffix.size);
  return true;
}

// Whether the row a search landed on (value `v`) is `key`'s: checked in place for the hashed form, else asked of
// the scheme; the stored key's size into `out` when it is.
PLANB_LOOKUP_INLINE bool MatchRow(const KeyScheme& scheme, const KeyForm& form, const KeyPrefix& prefix, Bytes key,
                                  const MDB_val& v, KeySearch* out) {
  return key_form::StoresHashedKeys(form) ? key_form::MatchHashedStoredKey(Bytes(v), key, &out->stored_key_size)
                                           : scheme.MatchStoredKey(prefix, key, Bytes(v), &out->stored_key_size);
}

// FindKeyedRow's search, on the candidate's own prefix buffer: FirstCandidate has just written it, and copying
// it out before the descent would read those bytes back at once, in wider loads than the scheme's stores (a
// store-forwarding stall on every lookup). The caller copies the prefix out afterwards, when the stores are done.
PLANB_LOOKUP_INLINE Code Search(const Table& table, const KeyScheme& scheme, const KeyForm& form, Bytes key,
                                Bytes suffix, Seek seek, Intent intent, Candidate* candidate, KeySearch* out,
                                ErrorBuffer* error) {
  KeyPrefix& prefix = candidate->prefix;
  // The LMDB key sought: the prefix with the suffix written after it, in the prefix's own buffer (bytes past
  // `size` are not part of a KeyPrefix), so that no lookup copies the prefix a second time (AppendSuffix).
  if (candidate->certain && seek == Seek::kExact && intent == Intent::kRead) {
    // The exact row of a certain prefix (direct State): mdb_get is the same single descent without the cursor's
    // checks of its current page, which random lookups never reuse. The cursor stays where it was.
    Bytes target;
    if (!AppendSuffix(suffix, &prefix, &target)) return Code::kNotFound;
    MDB_val k = target.mdb();
    MDB_val v;
    const int rc = mdb_get(table.txn, table.dbi, &k, &v);
    out->key_found = true;  // a certain prefix is the key's, rows or not
    if (rc == MDB_NOTFOUND) return Code::kNotFound;
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading a key's row: %s", mdb_strerror(rc));
    out->row_key = k;
    out->row_value = v;
    return Code::kOk;
  }
  if (intent == Intent::kRead) {
    // A seek of a cursor that is on a page first compares the key with that page's first and last keys (two
    // reads of the previous lookup's page, which a random lookup never reuses). Renewing the cursor makes the
    // seek a plain descent from the root, as mdb_get's. LMDB allows it in read-only transactions; in a write
    // transaction it refuses (EINVAL) and leaves the cursor as it was, which is as correct.
    (void)mdb_cursor_renew(table.txn, table.cursor);
  }
  for (;;) {
    Bytes target;
    if (!AppendSuffix(suffix, &prefix, &target)) return Code::kNotFound;
    MDB_val k = target.mdb();
    MDB_val v;
    int rc = mdb_cursor_get(table.cursor, &k, &v, MDB_SET_RANGE);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
      return Fail(error, Code::kIOError, "seeking a key's rows: %s", mdb_strerror(rc));
    }
    const bool at_end = rc == MDB_NOTFOUND;
    Bytes after;  // the first row after every row under `prefix`, once known
    if (!at_end && RowUnder(k, prefix, suffix.size)) {
      // The landed row proves (or disproves) that the candidate is the key's.
      if (candidate->certain || (out->stored_key_known = MatchRow(scheme, form, prefix, key, v, out))) {
        out->key_found = true;
        // Without a suffix, a row under the prefix is the target itself.
        if (seek == Seek::kAtOrAfter || suffix.size == 0 || Bytes(k) == target) {
          out->row_key = k;
          out->row_value = v;
          return Code::kOk;
        }
        if (seek == Seek::kExact) return Code::kNotFound;
        rc = mdb_cursor_get(table.cursor, &k, &v, MDB_PREV);
        if (rc == MDB_SUCCESS && RowUnder(k, prefix, suffix.size)) {
          out->row_key = k;
          out->row_value = v;
          return Code::kOk;
        }
        if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
          return Fail(error, Code::kIOError, "stepping back: %s", mdb_strerror(rc));
        }
        return Code::kNotFound;
      }
      out->taken = true;  // a clash: the candidate is another key's
    } else {
      if (!at_end) after = Bytes(k);
      // Nothing under the candidate at or after the target; the row before tells, unless rows under it cannot
      // sort before the target (no suffix) and the candidate need not be proven.
      const bool look_back = seek == Seek::kAtOrBefore || (!candidate->certain && suffix.size != 0);
      bool under = false;
      if (look_back) {
        rc = mdb_cursor_get(table.cursor, &k, &v, at_end ? MDB_LAST : MDB_PREV);
        if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
          return Fail(error, Code::kIOError, "stepping back: %s", mdb_strerror(rc));
        }
        under = rc == MDB_SUCCESS && RowUnder(k, prefix, suffix.size);
      }
      if (candidate->certain || (under && (out->stored_key_known = MatchRow(scheme, form, prefix, key, v, out)))) {
        out->key_found = true;
        if (!under || seek != Seek::kAtOrBefore) return Code::kNotFound;
        out->row_key = k;
        out->row_value = v;
        return Code::kOk;
      }
      out->taken = under;
      if (at_end) return Code::kNotFound;  // candidates only grow: none lies past the table's end
    }
    // Leaves `prefix` as it was on kNotFound. On the hashed forms (kHashed, the others' long keys), the row after
    // the candidate's tells (a miss: the next hash's row) without a call; with no such row known, the scheme seeks.
    const Code code = key_form::StoresHashedKeys(form) && after.data != nullptr
                          ? key_form::NextHashedCandidate(after, &prefix)
                          : scheme.NextCandidate(table, key, after, &prefix, error);
    if (code != Code::kOk) return code;
    out->taken = false;
  }
}

}  // namespace keyed_search_detail

// Finds `key`'s row per `seek` in `table` (whose rows all have `suffix.size` bytes after the prefix). kOk: the
// row is in `out` and the cursor on it (except for kExact reads of a certain prefix: one mdb_get); kNotFound: no
// such row (`out` still says whether the key has a prefix here, for writes); other codes are errors. Descents:
// one (plus a MDB_PREV step) unless candidates clash. In a read-only transaction, a kRead search resets the
// cursor first, whatever it returns: do not rely on where an earlier read left it.
//
// With `form`, the scheme's LookupForm (asked once, when the store type is made), a read computes the first
// candidate and checks stored keys itself for the forms of planb/key_form.h instead of calling the scheme;
// writes, other forms and clashes (NextCandidate) still call it.
// Since SDK 7.6.
PLANB_LOOKUP_INLINE Code FindKeyedRow(const Table& table, const KeyScheme& scheme, const KeyForm& form, Bytes key,
                                      Bytes suffix, Seek seek, Intent intent, KeySearch* out, ErrorBuffer* error) {
  out->key_found = out->taken = out->stored_key_known = false;
  Candidate candidate;
  const bool inline_form =
      intent == Intent::kRead && form.kind != KeyFormKind::kCallScheme && key_form::Computes(form, key);
  Code code = inline_form ? key_form::FirstCandidate(form, key, &candidate)
                          : scheme.FirstCandidate(table, key, intent, &candidate, error);
  if (code != Code::kOk) {
    out->prefix.size = 0;
    return code;
  }
  if (inline_form && candidate.certain) {  // a direct form: no stored key, so StoredKeySizeOf need not ask
    out->stored_key_known = true;
    out->stored_key_size = 0;
  }
  code = keyed_search_detail::Search(table, scheme, inline_form ? form : KeyForm(), key, suffix, seek, intent,
                                     &candidate, out, error);
  CopyPrefix(candidate.prefix, &out->prefix);
  if (code == Code::kOk && out->row_key.mv_data == candidate.prefix.bytes) {
    // mdb_get hands back the key it was given: the sought key in `candidate`, which ends here. Point the row's
    // key at a copy in `out`, which lives as long as the caller needs it.
    CopyBytes(out->prefix.bytes, candidate.prefix.bytes, out->row_key.mv_size);
    out->row_key.mv_data = out->prefix.bytes;
  }
  return code;
}

// The same, every step asked of the scheme.
// Since SDK 7.0.
inline Code FindKeyedRow(const Table& table, const KeyScheme& scheme, Bytes key, Bytes suffix, Seek seek,
                         Intent intent, KeySearch* out, ErrorBuffer* error) {
  return FindKeyedRow(table, scheme, KeyForm(), key, suffix, seek, intent, out, error);
}

// The prefix of `key` in `table` (whose rows have `suffix_size` bytes after the prefix): for reads, where its
// rows are (kNotFound: it has none); for writes, where its rows are or go (NewPrefix gives a new key one).
// Moves `table.cursor`. For scans and tests; lookups and writes use FindKeyedRow and KeyedRowWriter.
inline Code ResolveKey(const Table& table, const KeyScheme& scheme, Bytes key, uint32_t suffix_size, Intent intent,
                       KeyPrefix* prefix, ErrorBuffer* error) {
  uint8_t zeros[kMaxLmdbKeySize] = {};
  if (suffix_size > kMaxLmdbKeySize) return Fail(error, Code::kInvalidArgument, "key suffix of %u bytes", suffix_size);
  KeySearch search;
  Code code = FindKeyedRow(table, scheme, key, Bytes(zeros, suffix_size), Seek::kAtOrAfter, intent, &search, error);
  if (code != Code::kOk && code != Code::kNotFound) return code;
  if (search.key_found) {
    CopyPrefix(search.prefix, prefix);
    return Code::kOk;
  }
  if (intent == Intent::kRead) return Code::kNotFound;
  code = scheme.NewPrefix(table, key, search.taken, &search.prefix, error);
  if (code != Code::kOk) return code;
  CopyPrefix(search.prefix, prefix);
  return Code::kOk;
}

}  // namespace planb
