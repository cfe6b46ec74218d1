// The `hashed` key scheme: the LMDB key prefix is the top `hash_bits` bits of XXH3-64 of the key plus a clash
// number; the full key is stored at the start of the value so that clashing keys are told apart.
//
// On-disk format (version 1; bump kVersion if it changes):
//   prefix     = hash (ceil(hash_bits / 8) bytes, big-endian) + clash number (2 bytes, big-endian)
//   stored key = key length (4 bytes, big-endian) + key bytes
// Keys that share a hash get clash numbers 0, 1, 2... in arrival order (a new key takes one past the greatest
// in use, so numbers freed by deletions are skipped, never reused while a greater one lives). The clash number lives in the LMDB key
// rather than in DUPSORT duplicates because LMDB caps duplicate values at 511 bytes; values here are unbounded.
#include <xxhash.h>

#include <cstring>
#include <iterator>
#include <string>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "scheme_parts.h"
#include "value_table.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kClashBytes = 2;
constexpr uint32_t kMaxClash = 0xFFFF;
constexpr uint32_t kKeyLengthBytes = 4;
constexpr uint32_t kMaxHashBytes = 8;

class HashedKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  HashedKeyScheme(uint32_t hash_bits, bool value_dedup)
      : SchemeWithValues(0, value_dedup),
        hash_bits_(hash_bits),
        hash_bytes_((hash_bits + 7) / 8),
        layout_("hash_bits=" + std::to_string(hash_bits) + value_dedup::LayoutSuffix(value_dedup)) {}

  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const noexcept override {
    WriteHash(key, out->prefix.bytes);
    PutU16(out->prefix.bytes + hash_bytes_, 0);
    out->prefix.size = hash_bytes_ + kClashBytes;
    out->certain = false;  // another key may hold clash 0 of this hash
    return Code::kOk;
  }

  bool RowHasKey(Bytes key, Bytes value) const noexcept override { return StoredKeyMatches(value, key); }

  // The next clash number under the hash that has rows: from `after` when given (the first row past the
  // candidate's), else one MDB_SET_RANGE past the candidate. Numbers left unused by deleted keys are skipped.
  Code NextCandidate(const Table& table, Bytes, Bytes after, KeyPrefix* prefix,
                     ErrorBuffer* error) const noexcept override {
    if (after.data == nullptr) {
      const uint32_t clash = GetU16(prefix->bytes + hash_bytes_);
      if (clash == kMaxClash) return Code::kNotFound;
      uint8_t probe[kMaxHashBytes + kClashBytes];
      std::memcpy(probe, prefix->bytes, hash_bytes_);
      PutU16(probe + hash_bytes_, static_cast<uint16_t>(clash + 1));
      MDB_val k{hash_bytes_ + kClashBytes, probe};
      MDB_val v;
      const int rc = mdb_cursor_get(table.cursor, &k, &v, MDB_SET_RANGE);
      if (rc == MDB_NOTFOUND) return Code::kNotFound;
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading hashed key: %s", mdb_strerror(rc));
      after = Bytes(k);
    }
    if (after.size < hash_bytes_ + kClashBytes || std::memcmp(after.data, prefix->bytes, hash_bytes_) != 0) {
      return Code::kNotFound;  // past the hash's rows
    }
    std::memcpy(prefix->bytes + hash_bytes_, after.data + hash_bytes_, kClashBytes);
    return Code::kOk;
  }

  // One past the greatest clash number in use (`prefix`, when `taken`); clash 0 when the hash has no rows.
  Code NewPrefix(const Table&, Bytes key, bool taken, KeyPrefix* prefix, ErrorBuffer* error) const noexcept override {
    if (!taken) {
      if (prefix->size == 0) {
        WriteHash(key, prefix->bytes);
        PutU16(prefix->bytes + hash_bytes_, 0);
        prefix->size = hash_bytes_ + kClashBytes;
      }
      return Code::kOk;
    }
    const uint32_t clash = GetU16(prefix->bytes + hash_bytes_);
    if (clash >= kMaxClash) {
      return Fail(error, Code::kFull, "more than %u keys share one %u-bit hash; raise hash_bits", kMaxClash + 1,
                  hash_bits_);
    }
    PutU16(prefix->bytes + hash_bytes_, static_cast<uint16_t>(clash + 1));
    return Code::kOk;
  }

  uint32_t StoredKeySize(const KeyPrefix&, Bytes key) const noexcept override {
    return kKeyLengthBytes + static_cast<uint32_t>(key.size);
  }

  void WriteStoredKey(const KeyPrefix&, Bytes key, uint8_t* out) const noexcept override {
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

  const uint32_t hash_bits_;
  const uint32_t hash_bytes_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  uint32_t bits = 64;
  bool dedup = false;
  if (scheme_parts::ParseNumberOption(*args, "hash_bits", 8, 64, &bits, error) != Code::kOk ||
      value_dedup::ParseOption(*args, &dedup, error) != Code::kOk ||
      scheme_parts::CheckRoom(args->key_suffix_size, scheme_parts::HashFormSize(0, bits), error) != Code::kOk) {
    return nullptr;
  }
  KeyScheme* scheme = nullptr;
  (void)Guard(error, [&] {
    scheme = new HashedKeyScheme(bits, dedup);
    return Code::kOk;
  });
  return scheme;
}

void Destroy(KeyScheme* scheme) noexcept { delete static_cast<HashedKeyScheme*>(scheme); }

const OptionSpec kOptions[] = {
    {"hash_bits", "64", "bits of XXH3-64 kept in the LMDB key (8-64); fewer bits = smaller keys, more clashes"},
    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;
  d.kind = PluginKind::kKeyScheme;
  d.name = "hashed";
  d.version = kVersion;
  d.summary = "XXH3-64 of the key (clash number after it), full key stored before the value; any key length";
  d.options = kOptions;
  d.option_count = static_cast<uint32_t>(std::size(kOptions));
  d.tables = value_dedup::kValueTables;
  d.table_count = value_dedup::kValueTableCount;
  d.create_scheme = &Create;
  d.destroy_scheme = &Destroy;
  return d;
}();

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
