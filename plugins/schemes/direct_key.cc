// The `direct` key scheme: the key bytes are the LMDB key. Fastest, but LMDB caps keys at 511 bytes, so a longer
// key is refused with the map's name and the key's length.
//
// On-disk format (version 1; bump kVersion if it changes):
//   prefix = key bytes                                  when the store appends nothing (State)
//   prefix = key length (2 bytes, big-endian) + key     when the store appends a suffix, so that the suffix of a
//            short key can never be mistaken for more key bytes of a longer one
//   stored key = nothing
#include <cstring>
#include <string>

#include "planb/encoding.h"
#include "planb/plugin.h"
#include "scheme_parts.h"
#include "scheme_with_values.h"

namespace planb {
namespace {

constexpr uint32_t kVersion = 1;

class DirectKeyScheme final : public value_dedup::SchemeWithValues {
 public:
  DirectKeyScheme(uint32_t suffix_size, bool value_dedup)
      : SchemeWithValues(0, value_dedup),
        direct_(0, suffix_size),
        max_key_size_(scheme_parts::DirectForm::MaxKey(0, suffix_size)),
        layout_(std::string(direct_.length_prefixed() ? "length_prefixed" : "raw") +
                value_dedup::LayoutSuffix(value_dedup)) {}

  Code FirstCandidate(const Table&, Bytes key, Intent intent, Candidate* out,
                      ErrorBuffer* error) const noexcept override {
    // A key that could never be stored is simply absent when read; writing one is an error (the host adds the
    // map's name and the input position).
    if (key.size == 0) {
      return intent == Intent::kRead ? Code::kNotFound : Fail(error, Code::kInvalidArgument, "empty key");
    }
    if (key.size > max_key_size_) {
      if (intent == Intent::kRead) return Code::kNotFound;
      return Fail(error, Code::kInvalidArgument,
                  "key of %zu bytes is too long for the direct scheme (at most %u bytes); "
                  "use scheme = hashed for longer keys",
                  key.size, max_key_size_);
    }
    direct_.Write(key, &out->prefix);
    out->certain = true;  // the prefix is the key: no row to check, no other candidate
    return Code::kOk;
  }

  bool RowHasKey(Bytes, Bytes) const noexcept override { return true; }
  Code NextCandidate(const Table&, Bytes, Bytes, KeyPrefix*, ErrorBuffer*) const noexcept override {
    return Code::kNotFound;
  }
  Code NewPrefix(const Table&, Bytes, bool, KeyPrefix*, ErrorBuffer* error) const noexcept override {
    return Fail(error, Code::kInternal, "the direct scheme always knows a key's prefix");  // never called
  }

  uint32_t StoredKeySize(const KeyPrefix&, Bytes) const noexcept override { return 0; }
  void WriteStoredKey(const KeyPrefix&, Bytes, uint8_t*) const noexcept override {}

  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    *stored_key_size = 0;
    return direct_.Read("direct", lmdb_key, key, prefix_size, error);
  }

  // Nothing is kept per key: no table to sweep.
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t* removed, ErrorBuffer*) const noexcept override {
    *removed = 0;
    return Code::kOk;
  }

  Bytes Layout() const noexcept override { return Bytes(layout_); }

  KeyForm LookupForm() const noexcept override {
    KeyForm form;
    form.kind = KeyFormKind::kDirect;
    form.max_key = max_key_size_;
    form.length_prefixed = direct_.length_prefixed() ? 1 : 0;
    return form;
  }

 private:
  const scheme_parts::DirectForm direct_;
  const uint32_t max_key_size_;
  const std::string layout_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  bool dedup = false;
  // At least a one-byte key, behind its length when the store appends a suffix.
  const uint32_t smallest = (args->key_suffix_size > 0 ? scheme_parts::kDirectLengthBytes : 0) + 1;
  if (value_dedup::ParseOption(*args, &dedup, error) != Code::kOk ||
      scheme_parts::CheckRoom(args->key_suffix_size, smallest, error) != Code::kOk) {
    return nullptr;
  }
  return scheme_parts::NewScheme<DirectKeyScheme>(error, args->key_suffix_size, dedup);
}

const OptionSpec kOptions[] = {

    value_dedup::kOption,
};

const PluginDescriptor kDescriptor = scheme_parts::SchemeDescriptor<DirectKeyScheme>(
    "direct", kVersion,
    "the key bytes are the LMDB key: fastest; keys up to 511 bytes less the store type's suffix and its length "
    "(state 511, temporal 501, session 493)",
    kOptions, value_dedup::kValueTables, value_dedup::kValueTableCount, &Create);

}  // namespace
}  // namespace planb

PLANB_PLUGIN(planb::kDescriptor)
