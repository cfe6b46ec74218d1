// Example key scheme `casefold`: like `direct`, but ASCII letters are folded to lower case, so that lookups of
// "WEB-01.Example.NET" and "web-01.example.net" find the same row (host names, e-mail domains...).
// It uses nothing but the installed SDK headers; see README.md beside it.
//
// On-disk format (version 1): prefix = folded key (+ 2-byte big-endian length first when the store type
// appends a suffix); the value holds no stored key, so decoded keys come back folded.
#include <planb/encoding.h>
#include <planb/plugin.h>

namespace {

using namespace planb;

class CasefoldKeyScheme final : public KeyScheme {
 public:
  explicit CasefoldKeyScheme(uint32_t suffix_size)
      : length_prefixed_(suffix_size > 0), max_key_size_(kMaxLmdbKeySize - suffix_size - (suffix_size ? 2 : 0)) {}

  // The folded key is the prefix: certain, so lookups need no row check and there is no other candidate.
  Code FirstCandidate(const Table&, Bytes key, Intent intent, Candidate* out,
                      ErrorBuffer* error) const noexcept override {
    if (intent == Intent::kRead && (key.size == 0 || key.size > max_key_size_)) return Code::kNotFound;
    if (key.size == 0 || key.size > max_key_size_) {
      return Fail(error, Code::kInvalidArgument, "casefold keys are 1 to %u bytes, got %zu", max_key_size_,
                  key.size);
    }
    uint8_t* p = out->prefix.bytes;
    if (length_prefixed_) {
      PutU16(p, static_cast<uint16_t>(key.size));
      p += 2;
    }
    for (size_t i = 0; i < key.size; ++i) {
      uint8_t c = key.data[i];
      p[i] = (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c - 'A' + 'a') : c;
    }
    out->prefix.size = static_cast<uint32_t>(key.size + (length_prefixed_ ? 2 : 0));
    out->certain = true;
    return Code::kOk;
  }
  bool RowHasKey(Bytes, Bytes) const noexcept override { return true; }
  Code NextCandidate(const Table&, Bytes, Bytes, KeyPrefix*, ErrorBuffer*) const noexcept override {
    return Code::kNotFound;
  }
  Code NewPrefix(const Table&, Bytes, bool, KeyPrefix*, ErrorBuffer* error) const noexcept override {
    return Fail(error, Code::kInternal, "casefold always knows a key's prefix");
  }

  uint32_t StoredKeySize(const KeyPrefix&, Bytes) const noexcept override { return 0; }
  void WriteStoredKey(const KeyPrefix&, Bytes, uint8_t*) const noexcept override {}

  // Values are stored as they are.
  Code EncodeValue(const Table&, Bytes value, uint8_t*, Bytes* stored, ErrorBuffer*) const noexcept override {
    *stored = value;
    return Code::kOk;
  }
  Code DecodeValue(const Table&, Bytes stored, Bytes* value, ErrorBuffer*) const noexcept override {
    *value = stored;
    return Code::kOk;
  }
  Code ReleaseValue(const Table&, Bytes, ErrorBuffer*) const noexcept override { return Code::kOk; }

  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes, Bytes* key, uint32_t* prefix_size,
                 uint32_t* stored_key_size, ErrorBuffer* error) const noexcept override {
    *stored_key_size = 0;
    size_t skip = length_prefixed_ ? 2 : 0;
    if (lmdb_key.size < skip) return Fail(error, Code::kCorruption, "casefold row key too short");
    size_t length = length_prefixed_ ? GetU16(lmdb_key.data) : lmdb_key.size;
    if (lmdb_key.size < skip + length) return Fail(error, Code::kCorruption, "casefold row key too short");
    *key = Bytes(lmdb_key.data + skip, length);
    *prefix_size = static_cast<uint32_t>(skip + length);
    return Code::kOk;
  }

  // Nothing is kept per key: no table to sweep.
  Code SweepUnusedKeys(const Table&, uint32_t, uint64_t* removed, ErrorBuffer*) const noexcept override {
    *removed = 0;
    return Code::kOk;
  }

  Bytes Layout() const noexcept override { return Bytes(length_prefixed_ ? "ascii,length_prefixed" : "ascii"); }
  uint32_t TablesInUse() const noexcept override { return 0; }  // no tables of its own

 private:
  const bool length_prefixed_;
  const uint32_t max_key_size_;
};

KeyScheme* Create(const PluginArgs* args, ErrorBuffer* error) noexcept {
  KeyScheme* scheme = nullptr;
  (void)Guard(error, [&] {
    scheme = new CasefoldKeyScheme(args->key_suffix_size);
    return Code::kOk;
  });
  return scheme;
}

void Destroy(KeyScheme* scheme) noexcept { delete static_cast<CasefoldKeyScheme*>(scheme); }

const PluginDescriptor kDescriptor = [] {
  PluginDescriptor d;  // abi_major/abi_minor default to the SDK's kAbiMajor/kAbiMinor
  d.kind = PluginKind::kKeyScheme;
  d.name = "casefold";
  d.version = 1;
  d.summary = "example: ASCII case-insensitive keys stored directly";
  d.create_scheme = &Create;
  d.destroy_scheme = &Destroy;
  return d;
}();

}  // namespace

PLANB_PLUGIN(kDescriptor)
