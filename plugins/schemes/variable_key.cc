// The `variable` key scheme (as Stroom's Plan B): short keys direct, longer keys through the lookup table, keys
// longer than LMDB's key limit hashed. One map holds all three forms; a tag byte before the prefix tells them apart.
//
// On-disk format (version 2; bump kVersion if it changes; version 1 stored the key length in 4 bytes):
//   key up to direct_max bytes:     prefix = 0x00 + key (State) or 0x00 + key length (2 bytes, BE) + key
//                                   stored key = nothing
//   key up to 511 bytes:            prefix = 0x01 + id (4 bytes, BE; tables as lookup_table, id_index.h)
//                                   stored key = nothing
//   longer keys:                    prefix = 0x02 + top hash_bits of XXH3-64(key) + clash number (2 bytes, BE)
//                                   stored key = key length (LEB128 varint) + key
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "id_merge_plan.h"

namespace planb {
namespace {

using scheme_parts::DirectForm;
using scheme_parts::HashForm;
using scheme_parts::IdIndex;
using scheme_parts::kIdBytes;

constexpr uint32_t kVersion = 2;
constexpr uint8_t kDirectTag = key_form::kVariableDirectTag;
constexpr uint8_t kIdTag = key_form::kVariableIdTag;
constexpr uint8_t kHashedTag = key_form::kVariableHashedTag;
constexpr uint32_t kTagBytes = key_form::kTagBytes;
constexpr uint32_t kDefaultDirectMax = 32;
constexpr uint32_t kIdMax = key_form::kVariableIdMax;  // keys the lookup table takes: up to LMDB's key limit

class VariableKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  VariableKeyScheme(uint32_t suffix_size, uint32_t direct_max, uint32_t hash_bits, bool value_dedup)
      : SchemeWithValues(scheme_parts::kIdIndexTableCount, value_dedup),
        direct_(kTagBytes, suffix_size),
        direct_max_(direct_max),
        index_(hash_bits),
        hash_(kTagBytes, hash_bits),
        layout_("direct_max=" + std::to_string(direct_max) + ",id_max=" + std::to_string(kIdMax) +
                ",hash_bits=" + std::to_string(hash_bits) + ",id_bytes=4" +
                (direct_.length_prefixed() ? ",length_prefixed" : ",raw") + value_dedup::LayoutSuffix(value_dedup)) {}

  static uint32_t MaxDirect(uint32_t suffix_size) { return DirectForm::MaxKey(kTagBytes, suffix_size); }

  Code FirstCandidate(const Table& table, Bytes key, Intent, Candidate* out,
                      ErrorBuffer* error) const noexcept override {
    if (key.size <= direct_max_) {
      out->prefix.bytes[0] = kDirectTag;
      direct_.Write(key, &out->prefix);
      out->certain = true;
      return Code::kOk;
    }
    if (key.size <= kIdMax) {
      uint32_t free_clash = 0;
      const Code code = index_.Find(table, key, out->prefix.bytes + kTagBytes, &free_clash, error);
      if (code != Code::kOk) return code;  // kNotFound: reads miss, writes get NewPrefix
      out->prefix.bytes[0] = kIdTag;
      out->prefix.size = kTagBytes + kIdBytes;
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

  Code NewPrefix(const Table& table, Bytes key, bool taken, KeyPrefix* prefix,
                 ErrorBuffer* error) const noexcept override {
    if (prefix->size == 0 && key.size > direct_max_ && key.size <= kIdMax) {
      const Code code = index_.FindOrAdd(table, key, prefix->bytes + kTagBytes, error);
      if (code != Code::kOk) return code;
      prefix->bytes[0] = kIdTag;
      prefix->size = kTagBytes + kIdBytes;
      return Code::kOk;
    }
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

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    const uint8_t tag = lmdb_key.size >= kTagBytes ? lmdb_key.data[0] : 0xFF;
    if (tag == kHashedTag && lmdb_key.size >= hash_.prefix_size()) {
      *prefix_size = hash_.prefix_size();
      return scheme_parts::ReadHashedStoredKey("variable", value, key, stored_key_size, error);
    }
    if (tag == kIdTag && lmdb_key.size >= kTagBytes + kIdBytes) {
      *prefix_size = kTagBytes + kIdBytes;
      *stored_key_size = 0;
      return index_.KeyOf(table, lmdb_key.data + kTagBytes, key, error);
    }
    if (tag != kDirectTag) {
      return Fail(error, Code::kCorruption, "variable row key of %zu bytes has no valid tag", lmdb_key.size);
    }
    *stored_key_size = 0;
    return direct_.Read("variable", lmdb_key, key, prefix_size, error);
  }

  // Ids whose rows all went leave the tables (docs/schemes.md "Reclaiming ids"); the direct and hashed forms
  // keep nothing per key.
  Code SweepUnusedKeys(const Table& table, uint32_t suffix_size, uint64_t* removed,
                       ErrorBuffer* error) const noexcept override {
    return index_.Sweep(table, Bytes(&kIdTag, kTagBytes), suffix_size, removed, error);
  }

  // The batch's id-form keys placed at once, in the index's order (id_merge_plan.h); direct and hashed keys are
  // placed as their rows come.
  Code PlanMerge(const Table& batch, const Table& shard, MergePlan** plan, ErrorBuffer* error) const noexcept override {
    return scheme_parts::PlanIdMerge(index_, batch, shard, Bytes(&kIdTag, kTagBytes), direct_max_ + 1, kIdMax, plan,
                                     error);
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

  // The direct and hashed forms are planb/key_form.h's kVariable: lookups of those keys make no call here (keys
  // of the id form still do: only this scheme reads its table).
  KeyForm LookupForm() const noexcept override {
    return scheme_parts::TaggedLookupForm(KeyFormKind::kVariable, hash_, direct_, direct_max_);
  }

 private:
  const DirectForm direct_;
  const uint32_t direct_max_;
  const IdIndex index_;
  const HashForm hash_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  uint32_t hash_bits = 64;
  bool dedup = false;
  // Room for the longest of its prefixes (hashed or id form) first: then MaxDirect cannot underflow.
  const auto longest = [&] {
    return std::max(scheme_parts::HashFormSize(kTagBytes, hash_bits), kTagBytes + scheme_parts::kIdBytes);
  };
  if (scheme_parts::ParseNumberOption(*args, "hash_bits", 8, 64, &hash_bits, error) != Code::kOk ||
      scheme_parts::CheckRoom(args->key_suffix_size, longest(), error) != Code::kOk) {
    return nullptr;
  }
  const uint32_t max_direct = VariableKeyScheme::MaxDirect(args->key_suffix_size);
  uint32_t direct_max = std::min(kDefaultDirectMax, max_direct);
  if (scheme_parts::ParseNumberOption(*args, "direct_max", 0, max_direct, &direct_max, error) != Code::kOk ||
      value_dedup::ParseOption(*args, &dedup, error) != Code::kOk) {
    return nullptr;
  }
  return scheme_parts::NewScheme<VariableKeyScheme>(error, args->key_suffix_size, direct_max, hash_bits, dedup);
}

const OptionSpec kOptions[] = {
    {"direct_max", "32",
     "keys up to this many bytes are stored directly (at most state 510, temporal 500, session 492); longer ones "
     "up to 511 bytes get a lookup-table id, longer still are hashed"},
    {"hash_bits", "64", "bits of XXH3-64 in the lookup table's index and in hashed keys (8-64)"},
    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = scheme_parts::SchemeDescriptor<VariableKeyScheme>(
    "variable", kVersion,
    "as Stroom's Plan B: short keys direct, longer ones a lookup-table id, longer than 511 bytes hashed",
    kOptions, scheme_parts::kIdIndexTables, scheme_parts::kDeclaredTableCount, &Create);

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
