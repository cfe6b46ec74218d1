// The `hybrid` key scheme: keys up to `direct_max` bytes are their own prefix (as `direct`), longer keys are hashed
// (as `hashed`); one map holds both forms and a tag byte before the prefix tells them apart.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 stored the key length in 4 bytes):
//   direct form: prefix = 0x00 + key                               (State: the store appends nothing)
//                prefix = 0x00 + key length (2 bytes, BE) + key     (stores that append a suffix)
//                stored key = nothing
//   hashed form: prefix = 0x01 + top hash_bits of XXH3-64(key) (ceil(hash_bits / 8) bytes, BE) + clash (2, BE)
//                stored key = key length (LEB128 varint) + key
// Which form a key takes depends only on its length and direct_max, so a lookup computes its one candidate form.
#include <cstring>
#include <new>
#include <string>

#include "scheme_parts.h"
#include "scheme_with_values.h"

namespace planb {
namespace {

using scheme_parts::DirectForm;
using scheme_parts::HashForm;

constexpr uint32_t kVersion = 2;
constexpr uint8_t kDirectTag = key_form::kHybridDirectTag;
constexpr uint8_t kHashedTag = key_form::kHybridHashedTag;
constexpr uint32_t kTagBytes = key_form::kTagBytes;

class HybridKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  HybridKeyScheme(uint32_t suffix_size, uint32_t direct_max, uint32_t hash_bits, bool value_dedup)
      : SchemeWithValues(0, value_dedup),
        direct_(kTagBytes, suffix_size),
        direct_max_(direct_max),
        hash_(kTagBytes, hash_bits),
        layout_("direct_max=" + std::to_string(direct_max) + ",hash_bits=" + std::to_string(hash_bits) +
                (direct_.length_prefixed() ? ",length_prefixed" : ",raw") + value_dedup::LayoutSuffix(value_dedup)) {}

  // The largest direct_max a store appending `suffix_size` bytes allows: the tag, the length and the key fit in
  // LMDB's key limit.
  static uint32_t MaxDirect(uint32_t suffix_size) { return DirectForm::MaxKey(kTagBytes, suffix_size); }

  Code FirstCandidate(const Table&, Bytes key, Intent, Candidate* out, ErrorBuffer*) const noexcept override {
    if (key.size <= direct_max_) {
      out->prefix.bytes[0] = kDirectTag;
      direct_.Write(key, &out->prefix);
      out->certain = true;
      return Code::kOk;
    }
    out->prefix.bytes[0] = kHashedTag;
    hash_.First(key, &out->prefix);
    out->certain = false;
    return Code::kOk;
  }

  // Only hashed-form candidates are ever uncertain.
  bool RowHasKey(Bytes key, Bytes value) const noexcept override {
    return scheme_parts::HashedStoredKeyMatches(value, key);
  }

  bool MatchStoredKey(const KeyPrefix&, Bytes key, Bytes value, uint32_t* stored_key_size) const noexcept override {
    return scheme_parts::MatchHashedStoredKey(value, key, stored_key_size);
  }

  Code NextCandidate(const Table& table, Bytes, Bytes after, KeyPrefix* prefix,
                     ErrorBuffer* error) const noexcept override {
    if (prefix->size == 0 || prefix->bytes[0] != kHashedTag) return Code::kNotFound;
    return hash_.Next(table, after, prefix, error);
  }

  Code NewPrefix(const Table&, Bytes key, bool taken, KeyPrefix* prefix, ErrorBuffer* error) const noexcept override {
    if (prefix->size == 0) {
      prefix->bytes[0] = kHashedTag;
      hash_.First(key, prefix);
    }
    return taken ? hash_.Bump(prefix, error) : Code::kOk;
  }

  uint32_t StoredKeySize(const KeyPrefix& prefix, Bytes key) const noexcept override {
    return prefix.bytes[0] == kHashedTag ? scheme_parts::HashedStoredKeySize(key) : 0;
  }

  void WriteStoredKey(const KeyPrefix& prefix, Bytes key, uint8_t* out) const noexcept override {
    if (prefix.bytes[0] == kHashedTag) scheme_parts::WriteHashedStoredKey(key, out);
  }

  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    if (lmdb_key.size >= hash_.prefix_size() && lmdb_key.data[0] == kHashedTag) {
      *prefix_size = hash_.prefix_size();
      return scheme_parts::ReadHashedStoredKey("hybrid", value, key, stored_key_size, error);
    }
    if (lmdb_key.size < kTagBytes || lmdb_key.data[0] != kDirectTag) {
      return Fail(error, Code::kCorruption, "hybrid row key of %zu bytes has no valid tag", lmdb_key.size);
    }
    *stored_key_size = 0;
    return direct_.Read("hybrid", lmdb_key, key, prefix_size, error);
  }

  // Nothing is kept per key: no table to sweep.
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t* removed, ErrorBuffer*) const noexcept override {
    *removed = 0;
    return Code::kOk;
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

  // Both forms are planb/key_form.h's kHybrid: lookups compute them without calling here.
  KeyForm LookupForm() const noexcept override {
    return scheme_parts::TaggedLookupForm(KeyFormKind::kHybrid, hash_, direct_, direct_max_);
  }

 private:
  const DirectForm direct_;
  const uint32_t direct_max_;
  const HashForm hash_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  uint32_t hash_bits = 64;
  bool dedup = false;
  // The hashed form is the longest prefix (the direct form of an empty key is shorter): with room for it,
  // MaxDirect cannot underflow.
  if (scheme_parts::ParseNumberOption(*args, "hash_bits", 8, 64, &hash_bits, error) != Code::kOk ||
      scheme_parts::CheckRoom(args->key_suffix_size, scheme_parts::HashFormSize(kTagBytes, hash_bits), error) !=
          Code::kOk) {
    return nullptr;
  }
  const uint32_t max_direct = HybridKeyScheme::MaxDirect(args->key_suffix_size);
  uint32_t direct_max = max_direct;
  if (scheme_parts::ParseNumberOption(*args, "direct_max", 0, max_direct, &direct_max, error) != Code::kOk ||
      value_dedup::ParseOption(*args, &dedup, error) != Code::kOk) {
    return nullptr;
  }
  return scheme_parts::NewScheme<HybridKeyScheme>(error, args->key_suffix_size, direct_max, hash_bits, dedup);
}

const OptionSpec kOptions[] = {
    {"direct_max", nullptr,
     "keys up to this many bytes are stored directly, longer ones hashed (default: the most the store type "
     "allows: state 510, temporal 500, session 492)"},
    {"hash_bits", "64", "bits of XXH3-64 kept in the LMDB key of hashed keys (8-64)"},
    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = scheme_parts::SchemeDescriptor<HybridKeyScheme>(
    "hybrid", kVersion,
    "keys up to direct_max bytes stored directly (in key order), longer ones hashed; any key length",
    kOptions, value_dedup::kValueTables, value_dedup::kValueTableCount, &Create);

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
