// Value deduplication for key schemes (`value_dedup = true`): identical values are stored once in the scheme's
// value tables and rows hold a reference. A scheme adopts it by deriving from SchemeWithValues (scheme_with_values.h), declaring
// kValueTables after the tables every instance of it uses, and appending LayoutSuffix() to its Layout: the value
// tables then exist only in shards written with the option.
//
// On-disk format (part of the scheme's Layout: ",value_dedup=1"):
//   stored value = 0x00 + the value            (inline: values of at most kInlineMax bytes)
//                | 0x01 + hash (8) + clash (2)  (a reference; 11 bytes)
//   "values"     : hash (8, XXH3-64 of the value, big-endian) + clash (2) -> the value bytes
//   "value_refs" : the same key -> reference count (8, big-endian), exact: every row holding the reference
// Counts are kept apart from the bytes so that taking or dropping a reference rewrites 8 bytes, not the value.
// A value whose count falls to 0 is removed unless a greater clash number of its hash lives (the probe walks
// clash numbers 0, 1, 2... and stops at the first gap); such an entry stays with count 0 and is reused, or is
// removed when every greater number has gone.
#pragma once

#include <lmdb.h>
#include <xxhash.h>

#include <cstring>

#include "planb/encoding.h"
#include "planb/key_scheme.h"
#include "planb/plugin.h"
#include "planb/status.h"

namespace planb {
namespace value_dedup {

inline constexpr const char* kValueTables[] = {"values", "value_refs"};
inline constexpr uint32_t kValueTableCount = 2;
inline constexpr uint8_t kInline = 0x00;
inline constexpr uint8_t kReference = 0x01;
inline constexpr uint32_t kRefKeySize = 10;  // hash + clash
inline constexpr uint32_t kRefSize = 1 + kRefKeySize;
// Values this short stay in the row: a reference (11 bytes) plus a table entry would cost more than it saves.
inline constexpr uint32_t kInlineMax = 16;
static_assert(kRefSize <= kMaxValueRefSize, "a reference must fit the scratch buffer");

// Parses the option: absent or "false" -> off, "true" -> on; anything else an error naming the option (the host
// puts the map's name before it).
inline Code ParseOption(const PluginArgs& args, bool* on, ErrorBuffer* error) {
  *on = false;
  const char* text = FindOption(args, "value_dedup");
  if (text == nullptr || std::strcmp(text, "false") == 0) return Code::kOk;
  if (std::strcmp(text, "true") == 0) {
    *on = true;
    return Code::kOk;
  }
  return Fail(error, Code::kInvalidArgument, "value_dedup: '%s' is not true or false", text);
}

// The option as every scheme declares it.
inline constexpr OptionSpec kOption = {
    "value_dedup", "false",
    "true: identical values over 16 bytes are stored once in a value table, rows hold a reference"};

// What the option adds to a scheme's Layout string.
inline const char* LayoutSuffix(bool on) { return on ? ",value_dedup=1" : ""; }

class ValueTable {
 public:
  // `first_table`: index of "values" in Table::scheme_tables.
  ValueTable(bool on, uint32_t first_table) : on_(on), values_(first_table), refs_(first_table + 1) {}
  bool on() const { return on_; }
  uint32_t values_table() const { return values_; }  // index of "values" in Table::scheme_tables; "value_refs" next

  Code Encode(const Table& t, Bytes value, uint8_t* scratch, Bytes* stored, ErrorBuffer* error) const {
    if (!on_) {
      *stored = value;
      return Code::kOk;
    }
    if (value.size <= kInlineMax) {  // flag + value, written into scratch (kInlineMax + 1 <= kMaxValueRefSize)
      scratch[0] = kInline;
      if (value.size != 0) std::memcpy(scratch + 1, value.data, value.size);
      *stored = Bytes(scratch, value.size + 1);
      return Code::kOk;
    }
    if (t.scheme_tables == nullptr) return Fail(error, Code::kInternal, "value_dedup: no value tables were passed");
    uint8_t* key = scratch + 1;
    PutU64(key, XXH3_64bits(value.data, value.size));
    // Each clash number is claimed with MDB_NOOVERWRITE: a new value is stored by the same descent that finds
    // its number free, and a taken number hands back the value already there to compare.
    for (uint32_t clash = 0; clash <= 0xFFFF; ++clash) {
      PutU16(key + 8, static_cast<uint16_t>(clash));
      MDB_val k{kRefKeySize, key};
      MDB_val v{value.size, const_cast<uint8_t*>(value.data)};
      int rc = mdb_put(t.txn, t.scheme_tables[values_], &k, &v, MDB_NOOVERWRITE);
      if (rc == MDB_SUCCESS) {  // a new value: stored, with one reference
        rc = PutCount(t, &k, 1);
        if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "writing the value table: %s", mdb_strerror(rc));
        break;
      }
      if (rc != MDB_KEYEXIST) return Fail(error, Code::kIOError, "writing the value table: %s", mdb_strerror(rc));
      if (v.mv_size == value.size && std::memcmp(v.mv_data, value.data, value.size) == 0) {
        uint64_t count = 0;
        rc = GetCount(t, &k, &count);
        if (rc == MDB_SUCCESS) rc = PutCount(t, &k, count + 1);
        if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "counting a value reference: %s", mdb_strerror(rc));
        break;
      }
      if (clash == 0xFFFF) return Fail(error, Code::kFull, "value_dedup: 65536 values share one hash");
    }
    scratch[0] = kReference;
    *stored = Bytes(scratch, kRefSize);
    return Code::kOk;
  }

  // One mdb_get for a reference, none inline; no allocation.
  Code Decode(const Table& t, Bytes stored, Bytes* value, ErrorBuffer* error) const {
    if (!on_) {
      *value = stored;
      return Code::kOk;
    }
    if (stored.size >= 1 && stored.data[0] == kInline) {
      *value = Bytes(stored.data + 1, stored.size - 1);
      return Code::kOk;
    }
    if (stored.size != kRefSize || stored.data[0] != kReference || t.scheme_tables == nullptr) {
      return Fail(error, Code::kCorruption, "value_dedup: a stored value of %zu bytes is not a value or reference",
                  stored.size);
    }
    MDB_val k{kRefKeySize, const_cast<uint8_t*>(stored.data + 1)};
    MDB_val v;
    const int rc = mdb_get(t.txn, t.scheme_tables[values_], &k, &v);
    if (rc == MDB_NOTFOUND) return Fail(error, Code::kCorruption, "value_dedup: a row refers to a missing value");
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading the value table: %s", mdb_strerror(rc));
    *value = Bytes(v);
    return Code::kOk;
  }

  // Drops one reference; at 0 removes the value unless a greater clash number of its hash lives.
  Code Release(const Table& t, Bytes stored, ErrorBuffer* error) const {
    if (!on_ || stored.size == 0 || stored.data[0] == kInline) return Code::kOk;
    if (stored.size != kRefSize || stored.data[0] != kReference || t.scheme_tables == nullptr) {
      return Fail(error, Code::kCorruption, "value_dedup: releasing a stored value of %zu bytes", stored.size);
    }
    uint8_t key[kRefKeySize];
    std::memcpy(key, stored.data + 1, kRefKeySize);
    MDB_val k{kRefKeySize, key};
    uint64_t count = 0;
    int rc = GetCount(t, &k, &count);
    if (rc == MDB_NOTFOUND || (rc == MDB_SUCCESS && count == 0)) {
      return Fail(error, Code::kCorruption, "value_dedup: releasing a value with no references");
    }
    if (rc == MDB_SUCCESS && count > 1) rc = PutCount(t, &k, count - 1);
    if (rc == MDB_SUCCESS && count == 1) {
      uint8_t next[kRefKeySize];
      std::memcpy(next, key, kRefKeySize);
      const uint32_t clash = GetU16(key + 8);
      MDB_val nk{kRefKeySize, next};
      MDB_val nv;
      int next_rc = MDB_NOTFOUND;
      if (clash < 0xFFFF) {
        PutU16(next + 8, static_cast<uint16_t>(clash + 1));
        next_rc = mdb_get(t.txn, t.scheme_tables[values_], &nk, &nv);
      }
      if (next_rc == MDB_NOTFOUND) {
        rc = mdb_del(t.txn, t.scheme_tables[values_], &k, nullptr);
        if (rc == MDB_SUCCESS) rc = mdb_del(t.txn, t.scheme_tables[refs_], &k, nullptr);
        if (rc == MDB_SUCCESS) rc = RemoveKeptBelow(t.txn, t.scheme_tables[values_], t.scheme_tables[refs_], key);
      } else if (next_rc == MDB_SUCCESS) {
        rc = PutCount(t, &k, 0);
      } else {
        rc = next_rc;
      }
    }
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "releasing a value reference: %s", mdb_strerror(rc));
    return Code::kOk;
  }

  // After the value at `ref` (hash + clash) was removed as its hash's greatest clash number: removes the entries
  // below it kept with count 0 only because it lived (clash - 1, - 2, ... down to the first still counted).
  static int RemoveKeptBelow(MDB_txn* txn, MDB_dbi values, MDB_dbi refs, const uint8_t* ref) {
    uint8_t key[kRefKeySize];
    std::memcpy(key, ref, kRefKeySize);
    for (uint32_t clash = GetU16(key + 8); clash > 0; --clash) {
      PutU16(key + 8, static_cast<uint16_t>(clash - 1));
      MDB_val k{kRefKeySize, key};
      MDB_val v;
      int rc = mdb_get(txn, refs, &k, &v);
      if (rc == MDB_NOTFOUND) return MDB_SUCCESS;
      if (rc != MDB_SUCCESS) return rc;
      if (v.mv_size != 8 || GetU64(static_cast<const uint8_t*>(v.mv_data)) != 0) return MDB_SUCCESS;
      rc = mdb_del(txn, values, &k, nullptr);
      if (rc == MDB_SUCCESS) rc = mdb_del(txn, refs, &k, nullptr);
      if (rc != MDB_SUCCESS) return rc;
    }
    return MDB_SUCCESS;
  }

 private:
  int GetCount(const Table& t, MDB_val* k, uint64_t* count) const {
    MDB_val v;
    const int rc = mdb_get(t.txn, t.scheme_tables[refs_], k, &v);
    if (rc != MDB_SUCCESS) return rc;
    if (v.mv_size != 8) return MDB_CORRUPTED;
    *count = GetU64(static_cast<const uint8_t*>(v.mv_data));
    return MDB_SUCCESS;
  }
  int PutCount(const Table& t, MDB_val* k, uint64_t count) const {
    uint8_t bytes[8];
    PutU64(bytes, count);
    MDB_val v{8, bytes};
    return mdb_put(t.txn, t.scheme_tables[refs_], k, &v, 0);
  }

  const bool on_;
  const uint32_t values_;
  const uint32_t refs_;
};

}  // namespace value_dedup
}  // namespace planb
