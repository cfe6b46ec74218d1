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

#include "scheme_parts.h"
#include "value_table.h"

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

  // The key's id, found or newly allocated (write transactions).
  Code FindOrAdd(const Table& t, Bytes key, uint8_t* id, ErrorBuffer* error) const {
    uint32_t clash = 0;
    const Code found = Find(t, key, id, &clash, error);
    if (found != Code::kNotFound) return found;
    if (clash > kMaxClash) {
      return Fail(error, Code::kFull, "more than %u keys share one %u-bit hash in the lookup table; raise hash_bits",
                  kMaxClash + 1, hash_bits_);
    }
    static constexpr uint8_t kNextIdKey[] = {'n'};
    MDB_val next_key{sizeof(kNextIdKey), const_cast<uint8_t*>(kNextIdKey)};
    MDB_val v;
    uint64_t next = 0;
    int rc = mdb_get(t.txn, t.scheme_tables[1], &next_key, &v);
    if (rc == MDB_SUCCESS && v.mv_size == kCounterBytes) {
      next = GetU64(static_cast<const uint8_t*>(v.mv_data));
    } else if (rc != MDB_NOTFOUND) {
      return Fail(error, Code::kCorruption, "the lookup table's next id is unreadable");
    }
    if (next >= kIdCount) {
      return Fail(error, Code::kFull, "the lookup table is full (%llu ids)", static_cast<unsigned long long>(kIdCount));
    }
    PutU32(id, static_cast<uint32_t>(next));
    uint8_t index_key[kMaxHashBytes + kClashBytes];
    WriteHash(key, index_key);
    PutU16(index_key + hash_bytes_, static_cast<uint16_t>(clash));
    MDB_val ik{hash_bytes_ + kClashBytes, index_key};
    MDB_val iv{kIdBytes + key.size, nullptr};
    rc = mdb_put(t.txn, t.scheme_tables[0], &ik, &iv, MDB_RESERVE);
    if (rc == MDB_SUCCESS) {
      std::memcpy(iv.mv_data, id, kIdBytes);
      if (key.size != 0) std::memcpy(static_cast<uint8_t*>(iv.mv_data) + kIdBytes, key.data, key.size);
      MDB_val idk{kIdBytes, id};
      MDB_val idv = key.mdb();
      rc = mdb_put(t.txn, t.scheme_tables[1], &idk, &idv, 0);
    }
    if (rc == MDB_SUCCESS) {
      uint8_t following[kCounterBytes];
      PutU64(following, next + 1);
      MDB_val fv{kCounterBytes, following};
      rc = mdb_put(t.txn, t.scheme_tables[1], &next_key, &fv, 0);
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

 private:
  void WriteHash(Bytes key, uint8_t* out) const {
    uint64_t hash = XXH3_64bits(key.data, key.size) >> (64 - hash_bits_);
    for (int i = static_cast<int>(hash_bytes_) - 1; i >= 0; --i, hash >>= 8) out[i] = static_cast<uint8_t>(hash);
  }

  const uint32_t hash_bits_;
  const uint32_t hash_bytes_;
};

}  // namespace planb::scheme_parts
