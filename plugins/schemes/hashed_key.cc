// The `hashed` key scheme: the LMDB key prefix is the top `hash_bits` bits of XXH3-64 of the key plus a clash
// number; the full key is stored at the start of the value so that clashing keys are told apart.
//
// On-disk format (version 1; bump kVersion if it changes):
//   prefix     = hash (ceil(hash_bits / 8) bytes, big-endian) + clash number (2 bytes, big-endian)
//   stored key = key length (4 bytes, big-endian) + key bytes
// Keys that share a hash get clash numbers 0, 1, 2... in arrival order. The clash number lives in the LMDB key
// rather than in DUPSORT duplicates because LMDB caps duplicate values at 511 bytes; values here are unbounded.
#include <xxhash.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "planb/encoding.h"
#include "planb/plugin.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kClashBytes = 2;
constexpr uint32_t kMaxClash = 0xFFFF;
constexpr uint32_t kKeyLengthBytes = 4;

class HashedKeyScheme final : public KeyScheme {
 public:
  HashedKeyScheme(uint32_t hash_bits, uint32_t suffix_size)
      : hash_bits_(hash_bits),
        hash_bytes_((hash_bits + 7) / 8),
        single_row_per_key_(suffix_size == 0),
        layout_("hash_bits=" + std::to_string(hash_bits)) {}

  Code Resolve(const Table& table, Bytes key, Intent intent, Resolved* out,
               ErrorBuffer* error) const noexcept override {
    uint8_t* prefix = out->prefix.bytes;
    WriteHash(key, prefix);
    out->prefix.size = hash_bytes_ + kClashBytes;
    out->first_value = Bytes();

    // Fast path (State): one row per key, almost never a clash, so one mdb_get answers.
    if (single_row_per_key_) {
      PutU16(prefix + hash_bytes_, 0);
      MDB_val k = out->prefix.view().mdb();
      MDB_val v;
      int rc = mdb_get(table.txn, table.dbi, &k, &v);
      if (rc == MDB_NOTFOUND) return Absent(intent, 0, out);
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading hashed key: %s", mdb_strerror(rc));
      Bytes value(v);
      if (StoredKeyMatches(value, key)) {
        out->first_value = value;
        return Code::kOk;
      }
    }

    // Walk the rows under this hash, one clash number at a time, skipping the other rows of each key.
    uint32_t next_clash = 0;
    bool any = false;
    while (next_clash <= kMaxClash) {
      PutU16(prefix + hash_bytes_, static_cast<uint16_t>(next_clash));
      MDB_val k = out->prefix.view().mdb();
      MDB_val v;
      int rc = mdb_cursor_get(table.cursor, &k, &v, MDB_SET_RANGE);
      if (rc == MDB_NOTFOUND) break;
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading hashed key: %s", mdb_strerror(rc));
      if (k.mv_size < hash_bytes_ + kClashBytes || std::memcmp(k.mv_data, prefix, hash_bytes_) != 0) break;
      uint32_t clash = GetU16(static_cast<const uint8_t*>(k.mv_data) + hash_bytes_);
      any = true;
      if (StoredKeyMatches(Bytes(v), key)) {
        PutU16(prefix + hash_bytes_, static_cast<uint16_t>(clash));
        out->first_value = Bytes(v);
        return Code::kOk;
      }
      next_clash = clash + 1;
    }
    if (intent == Intent::kWrite && next_clash > kMaxClash) {
      return Fail(error, Code::kFull, "more than %u keys share one %u-bit hash; raise hash_bits", kMaxClash + 1,
                  hash_bits_);
    }
    return Absent(intent, any ? next_clash : 0, out);
  }

  uint32_t StoredKeySize(const Resolved&, Bytes key) const noexcept override {
    return kKeyLengthBytes + static_cast<uint32_t>(key.size);
  }

  void WriteStoredKey(const Resolved&, Bytes key, uint8_t* out) const noexcept override {
    PutU32(out, static_cast<uint32_t>(key.size));
    if (key.size != 0) std::memcpy(out + kKeyLengthBytes, key.data, key.size);
  }

  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    if (lmdb_key.size < hash_bytes_ + kClashBytes) {
      return Fail(error, Code::kCorruption, "hashed row key of %zu bytes is shorter than its %u-byte prefix",
                  lmdb_key.size, hash_bytes_ + kClashBytes);
    }
    if (value.size < kKeyLengthBytes || value.size - kKeyLengthBytes < GetU32(value.data)) {
      return Fail(error, Code::kCorruption, "hashed row value of %zu bytes is too short for its stored key",
                  value.size);
    }
    uint32_t length = GetU32(value.data);
    *key = Bytes(value.data + kKeyLengthBytes, length);
    *prefix_size = hash_bytes_ + kClashBytes;
    *stored_key_size = kKeyLengthBytes + length;
    return Code::kOk;
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

 private:
  void WriteHash(Bytes key, uint8_t* out) const {
    uint64_t hash = XXH3_64bits(key.data, key.size) >> (64 - hash_bits_);
    for (int i = static_cast<int>(hash_bytes_) - 1; i >= 0; --i, hash >>= 8) out[i] = static_cast<uint8_t>(hash);
  }

  bool StoredKeyMatches(Bytes value, Bytes key) const {
    return value.size >= kKeyLengthBytes + key.size && GetU32(value.data) == key.size &&
           (key.size == 0 || std::memcmp(value.data + kKeyLengthBytes, key.data, key.size) == 0);
  }

  // The key has no rows: a miss for reads; for writes the prefix gets `clash`, the first unused number.
  Code Absent(Intent intent, uint32_t clash, Resolved* out) const {
    if (intent == Intent::kRead) return Code::kNotFound;
    PutU16(out->prefix.bytes + hash_bytes_, static_cast<uint16_t>(clash));
    out->first_value = Bytes();
    return Code::kOk;
  }

  const uint32_t hash_bits_;
  const uint32_t hash_bytes_;
  const bool single_row_per_key_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  uint32_t bits = 64;
  if (const char* text = FindOption(*args, "hash_bits")) {
    char* end = nullptr;
    errno = 0;
    unsigned long parsed = std::strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || parsed < 8 || parsed > 64 || text[0] == '-') {
      Fail(error, Code::kInvalidArgument, "hash_bits: '%s' is not a whole number from 8 to 64", text);
      return nullptr;
    }
    bits = static_cast<uint32_t>(parsed);
  }
  KeyScheme* scheme = nullptr;
  (void)Guard(error, [&] {
    scheme = new HashedKeyScheme(bits, args->key_suffix_size);
    return Code::kOk;
  });
  return scheme;
}

void Destroy(KeyScheme* scheme) noexcept { delete static_cast<HashedKeyScheme*>(scheme); }

const OptionSpec kOptions[] = {
    {"hash_bits", "64", "bits of XXH3-64 kept in the LMDB key (8-64); fewer bits = smaller keys, more clashes"},
};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kKeyScheme;
  d.name = "hashed";
  d.version = kVersion;
  d.summary = "XXH3-64 of the key (clash number after it), full key stored before the value; any key length";
  d.options = kOptions;
  d.option_count = 1;
  d.create_scheme = &Create;
  d.destroy_scheme = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
