// The `lookup_table` key scheme: each key gets a small id from the scheme's own tables (id_index.h) and rows use
// the id as their prefix. Ids are local to each LMDB file: a merge resolves every key of the batch again in the
// shard (found, or allocated there), so streams that allocate ids independently never collide.
//
// On-disk format (version 1; bump kVersion if it changes):
//   prefix     = id (4 bytes, big-endian: rows are in id order, i.e. first-seen order)
//   stored key = nothing
//   tables     = index, ids (see id_index.h)
// Keys of any length. A lookup is one mdb_get in the index (plus one per key sharing its hash) and then the row
// read the store type makes anyway; a miss in the index is a miss, read-only.
#include <new>
#include <string>

#include "id_merge_plan.h"

namespace planb {
namespace {

using scheme_parts::IdIndex;
using scheme_parts::kIdBytes;

constexpr uint32_t kVersion = 1;

class LookupTableKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  LookupTableKeyScheme(uint32_t hash_bits, bool value_dedup)
      : SchemeWithValues(scheme_parts::kIdIndexTableCount, value_dedup),
        index_(hash_bits),
        layout_("hash_bits=" + std::to_string(hash_bits) + ",id_bytes=4" + value_dedup::LayoutSuffix(value_dedup)) {}

  Code FirstCandidate(const Table& table, Bytes key, Intent, Candidate* out,
                      ErrorBuffer* error) const noexcept override {
    uint32_t free_clash = 0;
    const Code code = index_.Find(table, key, out->prefix.bytes, &free_clash, error);
    if (code != Code::kOk) return code;  // kNotFound: reads miss, writes get NewPrefix
    out->prefix.size = kIdBytes;
    out->certain = true;  // an id stands for one key only
    return Code::kOk;
  }

  bool RowHasKey(Bytes, Bytes) const noexcept override { return true; }
  Code NextCandidate(const Table&, Bytes, Bytes, KeyPrefix*, ErrorBuffer*) const noexcept override {
    return Code::kNotFound;
  }

  Code NewPrefix(const Table& table, Bytes key, bool, KeyPrefix* prefix, ErrorBuffer* error) const noexcept override {
    const Code code = index_.FindOrAdd(table, key, prefix->bytes, error);
    if (code == Code::kOk) prefix->size = kIdBytes;
    return code;
  }

  uint32_t StoredKeySize(const KeyPrefix&, Bytes) const noexcept override { return 0; }
  void WriteStoredKey(const KeyPrefix&, Bytes, uint8_t*) const noexcept override {}

  Code DecodeRow(const Table& table, Bytes lmdb_key, Bytes, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    if (lmdb_key.size < kIdBytes) {
      return Fail(error, Code::kCorruption, "lookup_table row key of %zu bytes is shorter than its %u-byte id",
                  lmdb_key.size, kIdBytes);
    }
    *prefix_size = kIdBytes;
    *stored_key_size = 0;
    return index_.KeyOf(table, lmdb_key.data, key, error);
  }

  // Ids whose rows all went leave the tables (docs/schemes.md "Reclaiming ids").
  Code SweepUnusedKeys(const Table& table, uint32_t suffix_size, uint64_t* removed,
                       ErrorBuffer* error) const noexcept override {
    return index_.Sweep(table, Bytes(), suffix_size, removed, error);
  }

  // Every key of the batch placed at once, in the index's order (id_merge_plan.h).
  Code PlanMerge(const Table& batch, const Table& shard, MergePlan** plan, ErrorBuffer* error) const noexcept override {
    return scheme_parts::PlanIdMerge(index_, batch, shard, Bytes(), 0, UINT32_MAX, plan, error);
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

 private:
  const IdIndex index_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  uint32_t hash_bits = 64;
  bool dedup = false;
  if (scheme_parts::ParseNumberOption(*args, "hash_bits", 8, 64, &hash_bits, error) != Code::kOk ||
      value_dedup::ParseOption(*args, &dedup, error) != Code::kOk ||
      scheme_parts::CheckRoom(args->key_suffix_size, kIdBytes, error) != Code::kOk) {
    return nullptr;
  }
  return scheme_parts::NewScheme<LookupTableKeyScheme>(error, hash_bits, dedup);
}

const OptionSpec kOptions[] = {
    {"hash_bits", "64", "bits of XXH3-64 the lookup table's index is keyed by (8-64); fewer = more clashes"},
    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = scheme_parts::SchemeDescriptor<LookupTableKeyScheme>(
    "lookup_table", kVersion,
    "each key gets a 4-byte id from the map's lookup table; rows carry the id; any key length",
    kOptions, scheme_parts::kIdIndexTables, scheme_parts::kDeclaredTableCount, &Create);

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
