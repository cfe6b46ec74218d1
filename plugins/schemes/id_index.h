// The lookup table of the `lookup_table` and `variable` schemes: keys get small ids, unique within one LMDB file.
// Internal to plugins/schemes; not part of the SDK.
//
// Tables (the scheme's own, PluginDescriptor::tables, in this order):
//   index: top hash_bits of XXH3-64(key) (ceil(hash_bits / 8) bytes, BE) + clash number (2 bytes, BE)
//          -> id (4 bytes, BE) + the key's bytes
//   ids:   id (4 bytes, BE) -> the key's bytes;  and the 1-byte key "n" -> the next id to hand out (8 bytes, BE)
// Clash numbers under one hash are dense (0, 1, ... n-1): a lookup reads clash 0, 1, ... with mdb_get until the
// key matches or a number is absent, so a miss is one read in the common case and no cursor is needed. A sweep
// that frees an id must keep them dense (move the hash's last entry into the freed number).
#pragma once

#include <xxhash.h>

#include <cstring>
#include <string>

#include "scheme_parts.h"
#include "scheme_with_values.h"

namespace planb::scheme_parts {

inline constexpr uint32_t kIdBytes = 4;
inline constexpr uint64_t kIdCount = uint64_t{1} << 32;
inline constexpr uint32_t kCounterBytes = 8;
// Declared by the id schemes: the index and ids every instance uses, then value_dedup's tables.
inline const char* const kIdIndexTables[] = {"index", "ids", value_dedup::kValueTables[0],
                                             value_dedup::kValueTables[1]};
inline constexpr uint32_t kIdIndexTableCount = 2;  // in use by every instance
inline constexpr uint32_t kDeclaredTableCount = kIdIndexTableCount + value_dedup::kValueTableCount;

class IdIndex {
 public:
  explicit IdIndex(uint32_t hash_bits) : hash_bits_(hash_bits), hash_bytes_((hash_bits + 7) / 8) {}

  // The index's hash of `key`: the top hash_bits of XXH3-64. Index keys sort by it (WriteHashBytes is big-endian).
  uint64_t HashOf(Bytes key) const { return XXH3_64bits(key.data, key.size) >> (64 - hash_bits_); }
  void WriteHashBytes(uint64_t hash, uint8_t* out) const {
    for (int i = static_cast<int>(hash_bytes_) - 1; i >= 0; --i, hash >>= 8) out[i] = static_cast<uint8_t>(hash);
  }
  uint32_t hash_bits() const { return hash_bits_; }
  uint32_t hash_bytes() const { return hash_bytes_; }

  // The key of the counter in `ids`: the one key of 1 byte.
  static MDB_val NextIdKey() {
    static constexpr uint8_t kNextIdKey[] = {'n'};
    return MDB_val{sizeof(kNextIdKey), const_cast<uint8_t*>(kNextIdKey)};
  }

  // The next id to hand out (0 in a table that has given none), with `ids` (a cursor on `ids`) left on the
  // counter, so that the new id written next to it needs no descent.
  static Code ReadNextId(MDB_cursor* ids, uint64_t* next, ErrorBuffer* error) {
    MDB_val k = NextIdKey();
    MDB_val v;
    const int rc = mdb_cursor_get(ids, &k, &v, MDB_SET_KEY);
    if (rc == MDB_NOTFOUND) {
      *next = 0;
      return Code::kOk;
    }
    if (rc != MDB_SUCCESS || v.mv_size != kCounterBytes) {
      return Fail(error, Code::kCorruption, "the lookup table's next id is unreadable");
    }
    *next = GetU64(static_cast<const uint8_t*>(v.mv_data));
    return Code::kOk;
  }

  // The key's id into `id` (kIdBytes): kOk, or kNotFound with `*free_clash` the number a new entry would take.
  // Reads only; allocates nothing.
  Code Find(const Table& t, Bytes key, uint8_t* id, uint32_t* free_clash, ErrorBuffer* error) const {
    if (t.scheme_tables == nullptr) return Fail(error, Code::kInternal, "the lookup table was not opened");
    uint8_t probe[kMaxHashBytes + kClashBytes];
    WriteHash(key, probe);
    for (uint32_t clash = 0; clash <= kMaxClash; ++clash) {
      PutU16(probe + hash_bytes_, static_cast<uint16_t>(clash));
      MDB_val k{hash_bytes_ + kClashBytes, probe};
      MDB_val v;
      const int rc = mdb_get(t.txn, t.scheme_tables[0], &k, &v);
      if (rc == MDB_NOTFOUND) {
        *free_clash = clash;
        return Code::kNotFound;
      }
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading the lookup table: %s", mdb_strerror(rc));
      if (v.mv_size < kIdBytes) {
        return Fail(error, Code::kCorruption, "lookup table entry of %zu bytes has no id", v.mv_size);
      }
      const uint8_t* entry = static_cast<const uint8_t*>(v.mv_data);
      if (v.mv_size - kIdBytes == key.size &&
          (key.size == 0 || std::memcmp(entry + kIdBytes, key.data, key.size) == 0)) {
        std::memcpy(id, entry, kIdBytes);
        return Code::kOk;
      }
    }
    *free_clash = kMaxClash + 1;
    return Code::kNotFound;
  }

  // The key's id, found or newly allocated (write transactions). Called for keys a read just missed, so the
  // common case is a new key whose hash no other key has: clash numbers are dense, so when clash 0 is free the key
  // is absent, and the put that claims clash 0 (MDB_NOOVERWRITE) is also the proof. A taken clash 0 falls back to
  // the full search. In `ids` the counter and the new id sit side by side at the table's end (ids sort before
  // "n" until 0x6E000000), so one cursor reads the counter and writes both with one descent, not three.
  Code FindOrAdd(const Table& t, Bytes key, uint8_t* id, ErrorBuffer* error) const {
    if (t.scheme_tables == nullptr) return Fail(error, Code::kInternal, "the lookup table was not opened");
    ScopedCursor ids;
    int rc = mdb_cursor_open(t.txn, t.scheme_tables[1], &ids.cursor);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening the lookup table: %s", mdb_strerror(rc));
    uint64_t next = 0;
    const Code counted = ReadNextId(ids.cursor, &next, error);
    if (counted != Code::kOk) return counted;
    uint8_t index_key[kMaxHashBytes + kClashBytes];
    WriteHash(key, index_key);
    PutU16(index_key + hash_bytes_, 0);
    MDB_val ik{hash_bytes_ + kClashBytes, index_key};
    MDB_val iv{kIdBytes + key.size, nullptr};
    if (next >= kIdCount) {  // the key may still be there: only a new one needs an id
      uint32_t clash = 0;
      const Code found = Find(t, key, id, &clash, error);
      if (found != Code::kNotFound) return found;
      return Fail(error, Code::kFull, "the lookup table is full (%llu ids)", static_cast<unsigned long long>(kIdCount));
    }
    rc = mdb_put(t.txn, t.scheme_tables[0], &ik, &iv, MDB_NOOVERWRITE | MDB_RESERVE);
    if (rc == MDB_KEYEXIST) {
      uint32_t clash = 0;
      const Code found = Find(t, key, id, &clash, error);
      if (found != Code::kNotFound) return found;
      if (clash > kMaxClash) {
        return Fail(error, Code::kFull,
                    "more than %u keys share one %u-bit hash in the lookup table; raise hash_bits", kMaxClash + 1,
                    hash_bits_);
      }
      PutU16(index_key + hash_bytes_, static_cast<uint16_t>(clash));
      iv = MDB_val{kIdBytes + key.size, nullptr};
      rc = mdb_put(t.txn, t.scheme_tables[0], &ik, &iv, MDB_NOOVERWRITE | MDB_RESERVE);
    }
    PutU32(id, static_cast<uint32_t>(next));
    if (rc == MDB_SUCCESS) {
      std::memcpy(iv.mv_data, id, kIdBytes);
      if (key.size != 0) std::memcpy(static_cast<uint8_t*>(iv.mv_data) + kIdBytes, key.data, key.size);
      MDB_val idk{kIdBytes, id};
      MDB_val idv = key.mdb();
      rc = mdb_cursor_put(ids.cursor, &idk, &idv, 0);
    }
    if (rc == MDB_SUCCESS) {
      uint8_t following[kCounterBytes];
      PutU64(following, next + 1);
      MDB_val fv{kCounterBytes, following};
      MDB_val next_key = NextIdKey();
      rc = mdb_cursor_put(ids.cursor, &next_key, &fv, 0);
    }
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "writing the lookup table: %s", mdb_strerror(rc));
    return Code::kOk;
  }

  // The key an id stands for (decoding rows). The view is valid until the transaction ends.
  Code KeyOf(const Table& t, const uint8_t* id, Bytes* key, ErrorBuffer* error) const {
    if (t.scheme_tables == nullptr) return Fail(error, Code::kInternal, "the lookup table was not opened");
    MDB_val k{kIdBytes, const_cast<uint8_t*>(id)};
    MDB_val v;
    const int rc = mdb_get(t.txn, t.scheme_tables[1], &k, &v);
    if (rc == MDB_NOTFOUND) {
      return Fail(error, Code::kCorruption, "row under id %u, which the lookup table does not hold", GetU32(id));
    }
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading the lookup table: %s", mdb_strerror(rc));
    *key = Bytes(v);
    return Code::kOk;
  }

  // Forgets every id under which `t`'s data table (rows: `tag` + id + `suffix_size` bytes) has no row: one seek of
  // `t.cursor` per id. The id leaves `ids` and the index, where the hash's last clash entry moves into the freed
  // number so that clash numbers stay dense. The counter is left alone: ids are never handed out twice. Counts
  // the ids forgotten into `*removed`. Write transactions only; allocates (maintenance, not lookups).
  Code Sweep(const Table& t, Bytes tag, uint32_t suffix_size, uint64_t* removed, ErrorBuffer* error) const {
    if (t.scheme_tables == nullptr) return Fail(error, Code::kInternal, "the lookup table was not opened");
    MDB_cursor* ids = nullptr;
    int rc = mdb_cursor_open(t.txn, t.scheme_tables[1], &ids);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "opening the lookup table: %s", mdb_strerror(rc));
    const Code code = Guard(error, [&] {
      std::string key;  // the swept id's key, copied: its bytes live in the entry being deleted
      MDB_val k;
      MDB_val v;
      int at = mdb_cursor_get(ids, &k, &v, MDB_FIRST);
      while (at == MDB_SUCCESS) {
        if (k.mv_size == kIdBytes) {  // not the counter
          uint8_t id[kIdBytes];
          std::memcpy(id, k.mv_data, kIdBytes);
          bool used = false;
          Code found = HasRows(t, tag, id, suffix_size, &used, error);
          if (found != Code::kOk) return found;
          if (!used) {
            key.assign(static_cast<const char*>(v.mv_data), v.mv_size);
            at = mdb_cursor_del(ids, 0);
            if (at != MDB_SUCCESS) return Fail(error, Code::kIOError, "deleting an id: %s", mdb_strerror(at));
            found = Unindex(t, Bytes(key), id, error);
            if (found != Code::kOk) return found;
            ++*removed;
          }
        }
        at = mdb_cursor_get(ids, &k, &v, MDB_NEXT);  // after a delete: the entry that followed it
      }
      if (at != MDB_NOTFOUND) return Fail(error, Code::kIOError, "reading the lookup table: %s", mdb_strerror(at));
      return Code::kOk;
    });
    mdb_cursor_close(ids);
    return code;
  }

 private:
  // Whether the data table has a row under `tag` + `id` (with a suffix of `suffix_size` bytes).
  static Code HasRows(const Table& t, Bytes tag, const uint8_t* id, uint32_t suffix_size, bool* used,
                      ErrorBuffer* error) {
    uint8_t prefix[8 + kIdBytes];
    if (tag.size > 8) return Fail(error, Code::kInternal, "a %zu-byte id tag", tag.size);
    if (tag.size != 0) std::memcpy(prefix, tag.data, tag.size);
    std::memcpy(prefix + tag.size, id, kIdBytes);
    const size_t prefix_size = tag.size + kIdBytes;
    MDB_val k{prefix_size, prefix};
    MDB_val v;
    const int rc = mdb_cursor_get(t.cursor, &k, &v, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND) {
      *used = false;
      return Code::kOk;
    }
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "seeking an id's rows: %s", mdb_strerror(rc));
    *used = k.mv_size == prefix_size + suffix_size && std::memcmp(k.mv_data, prefix, prefix_size) == 0;
    return Code::kOk;
  }

  // Removes `key` (id `id`) from the index, moving its hash's last clash entry into the freed number.
  Code Unindex(const Table& t, Bytes key, const uint8_t* id, ErrorBuffer* error) const {
    uint8_t probe[kMaxHashBytes + kClashBytes];
    WriteHash(key, probe);
    const uint32_t probe_size = hash_bytes_ + kClashBytes;
    uint32_t freed = kMaxClash + 1;
    uint32_t last = 0;  // the greatest clash number present
    for (uint32_t clash = 0; clash <= kMaxClash; ++clash) {
      PutU16(probe + hash_bytes_, static_cast<uint16_t>(clash));
      MDB_val k{probe_size, probe};
      MDB_val v;
      const int rc = mdb_get(t.txn, t.scheme_tables[0], &k, &v);
      if (rc == MDB_NOTFOUND) break;
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading the lookup table: %s", mdb_strerror(rc));
      if (v.mv_size >= kIdBytes && std::memcmp(v.mv_data, id, kIdBytes) == 0) freed = clash;
      last = clash;
    }
    if (freed > kMaxClash) {
      return Fail(error, Code::kCorruption, "id %u is in the lookup table's ids but not in its index", GetU32(id));
    }
    PutU16(probe + hash_bytes_, static_cast<uint16_t>(last));
    MDB_val last_key{probe_size, probe};
    int rc = MDB_SUCCESS;
    if (last != freed) {
      MDB_val moved;
      rc = mdb_get(t.txn, t.scheme_tables[0], &last_key, &moved);
      if (rc == MDB_SUCCESS) {
        const std::string entry(static_cast<const char*>(moved.mv_data), moved.mv_size);
        uint8_t freed_key[kMaxHashBytes + kClashBytes];
        std::memcpy(freed_key, probe, hash_bytes_);
        PutU16(freed_key + hash_bytes_, static_cast<uint16_t>(freed));
        MDB_val fk{probe_size, freed_key};
        MDB_val fv{entry.size(), const_cast<char*>(entry.data())};
        rc = mdb_put(t.txn, t.scheme_tables[0], &fk, &fv, 0);
      }
    }
    if (rc == MDB_SUCCESS) rc = mdb_del(t.txn, t.scheme_tables[0], &last_key, nullptr);
    if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "rewriting the lookup table: %s", mdb_strerror(rc));
    return Code::kOk;
  }

  void WriteHash(Bytes key, uint8_t* out) const { WriteHashBytes(HashOf(key), out); }

  const uint32_t hash_bits_;
  const uint32_t hash_bytes_;
};

}  // namespace planb::scheme_parts
