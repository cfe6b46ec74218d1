// The `hashed` key scheme: the LMDB key prefix is the top `hash_bits` bits of XXH3-64 of the key plus a clash
// number; the full key is stored at the start of the value so that clashing keys are told apart.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 stored the key length in 4 bytes):
//   prefix     = hash (ceil(hash_bits / 8) bytes, big-endian) + clash number (2 bytes, big-endian)
//   stored key = key length (LEB128 varint: 1 byte under 128) + key bytes
// Keys that share a hash get clash numbers 0, 1, 2... in arrival order (a new key takes one past the greatest
// in use, so numbers freed by deletions are skipped, never reused while a greater one lives). The clash number
// lives in the LMDB key rather than in DUPSORT duplicates because LMDB caps duplicate values at 511 bytes;
// values here are unbounded. The form's code is scheme_parts::HashForm (offset 0), shared with hybrid and
// variable.
#include <cstring>
#include <string>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "scheme_parts.h"
#include "scheme_with_values.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 2;

using scheme_parts::HashForm;

class HashedKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  HashedKeyScheme(uint32_t hash_bits, bool value_dedup)
      : SchemeWithValues(0, value_dedup),
        hash_(0, hash_bits),
        layout_("hash_bits=" + std::to_string(hash_bits) + value_dedup::LayoutSuffix(value_dedup)) {}

  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const noexcept override {
    hash_.First(key, &out->prefix);
    out->certain = false;  // another key may hold clash 0 of this hash
    return Code::kOk;
  }

  bool RowHasKey(Bytes key, Bytes value) const noexcept override {
    return scheme_parts::HashedStoredKeyMatches(value, key);
  }

  bool MatchStoredKey(const KeyPrefix&, Bytes key, Bytes value, uint32_t* stored_key_size) const noexcept override {
    return scheme_parts::MatchHashedStoredKey(value, key, stored_key_size);
  }

  // The next clash number under the hash that has rows: from `after` when given (the first row past the
  // candidate's), else one MDB_SET_RANGE past the candidate. Numbers left unused by deleted keys are skipped.
  Code NextCandidate(const Table& table, Bytes, Bytes after, KeyPrefix* prefix,
                     ErrorBuffer* error) const noexcept override {
    return hash_.Next(table, after, prefix, error);
  }

  // One past the greatest clash number in use (`prefix`, when `taken`); clash 0 when the hash has no rows.
  Code NewPrefix(const Table&, Bytes key, bool taken, KeyPrefix* prefix, ErrorBuffer* error) const noexcept override {
    if (prefix->size == 0) hash_.First(key, prefix);
    return taken ? hash_.Bump(prefix, error) : Code::kOk;
  }

  uint32_t StoredKeySize(const KeyPrefix&, Bytes key) const noexcept override {
    return scheme_parts::HashedStoredKeySize(key);
  }

  void WriteStoredKey(const KeyPrefix&, Bytes key, uint8_t* out) const noexcept override {
    scheme_parts::WriteHashedStoredKey(key, out);
  }

  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    if (lmdb_key.size < hash_.prefix_size()) {
      return Fail(error, Code::kCorruption, "hashed row key of %zu bytes is shorter than its %u-byte prefix",
                  lmdb_key.size, hash_.prefix_size());
    }
    *prefix_size = hash_.prefix_size();
    return scheme_parts::ReadHashedStoredKey("hashed", value, key, stored_key_size, error);
  }

  // Nothing is kept per key: no table to sweep.
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t* removed, ErrorBuffer*) const noexcept override {
    *removed = 0;
    return Code::kOk;
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

  KeyForm LookupForm() const noexcept override {
    KeyForm form;
    form.kind = KeyFormKind::kHashed;
    form.hash_bits = hash_.hash_bits();
    return form;
  }

 private:
  const HashForm hash_;
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
  return scheme_parts::NewScheme<HashedKeyScheme>(error, bits, dedup);
}

const OptionSpec kOptions[] = {
    {"hash_bits", "64", "bits of XXH3-64 kept in the LMDB key (8-64); fewer bits = smaller keys, more clashes"},
    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = scheme_parts::SchemeDescriptor<HashedKeyScheme>(
    "hashed", kVersion,
    "XXH3-64 of the key (clash number after it), full key stored before the value; any key length",
    kOptions, value_dedup::kValueTables, value_dedup::kValueTableCount, &Create);

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
