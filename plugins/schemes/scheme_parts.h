// Parts shared by the key schemes: the hashed form of a prefix behind an optional tag byte (hashed, hybrid,
// variable), the stored key of hashed rows, option parsing and the room a store type's suffix leaves. Internal
// to plugins/schemes; not part of the SDK.
#pragma once

#include <xxhash.h>

#include <cerrno>
#include <cstdlib>
#include <cstddef>
#include <cstring>
#include <utility>

#include "planb/encoding.h"
#include "planb/key_form.h"
#include "planb/plugin.h"

namespace planb::scheme_parts {

// The byte forms themselves are the SDK's (planb/key_form.h), which lookups also run without calling a scheme.
using key_form::kClashBytes;
using key_form::kDirectLengthBytes;  // the direct form's key length, when the store appends a suffix
using key_form::kMaxHashBytes;
using key_form::HashedStoredKeySize;
using key_form::MatchHashedStoredKey;
using key_form::ReadStoredKeyLength;
using key_form::StoredKeyLengthSize;
using key_form::WriteHashedStoredKey;
inline constexpr uint32_t kMaxClash = 0xFFFF;

// A cursor closed when it goes out of scope (LMDB would keep a write transaction's cursor until the end of it).
struct ScopedCursor {
  MDB_cursor* cursor = nullptr;
  ScopedCursor() = default;
  ScopedCursor(const ScopedCursor&) = delete;
  ScopedCursor& operator=(const ScopedCursor&) = delete;
  ~ScopedCursor() {
    if (cursor != nullptr) mdb_cursor_close(cursor);
  }
};

// Puts in increasing key order through one cursor, each tried first with MDB_APPEND (no search, and a full page
// split off rather than half of one) until one does not go past the table's last key. A new shard's tables are
// thus written like a bulk load (and so are a lookup table's ids from 0x6E000000 on, which sort after its
// counter's key 'n').
struct SortedPuts {
  MDB_cursor* cursor;
  bool append = true;

  int Put(MDB_val* k, MDB_val* v, unsigned flags) {
    if (append) {
      const MDB_val size = *v;
      const int rc = mdb_cursor_put(cursor, k, v, flags | MDB_APPEND);
      if (rc != MDB_KEYEXIST) return rc;
      append = false;  // not past the last key: search from now on
      *v = size;
    }
    return mdb_cursor_put(cursor, k, v, flags);
  }
};

// ---- The plugin entry points every scheme has.

// `new Scheme(args...)` with any exception turned into a message in `error` (null returned then).
template <typename Scheme, typename... Args>
KeyScheme* NewScheme(ErrorBuffer* error, Args&&... args) noexcept {
  KeyScheme* scheme = nullptr;
  (void)Guard(error, [&] {
    scheme = new Scheme(std::forward<Args>(args)...);
    return Code::kOk;
  });
  return scheme;
}

template <typename Scheme>
void DeleteScheme(KeyScheme* scheme) noexcept {
  delete static_cast<Scheme*>(scheme);
}

// A key scheme's descriptor: its options (all of them), its declared tables, and its entry points.
template <typename Scheme, size_t kOptionCount>
PluginDescriptor SchemeDescriptor(const char* name, uint32_t version, const char* summary,
                                  const OptionSpec (&options)[kOptionCount], const char* const* tables,
                                  uint32_t table_count,
                                  KeyScheme* (*create)(const PluginArgs*, ErrorBuffer*) noexcept) {
  PluginDescriptor d;
  d.kind = PluginKind::kKeyScheme;
  d.name = name;
  d.version = version;
  d.summary = summary;
  d.options = options;
  d.option_count = static_cast<uint32_t>(kOptionCount);
  d.tables = tables;
  d.table_count = table_count;
  d.create_scheme = create;
  d.destroy_scheme = &DeleteScheme<Scheme>;
  return d;
}

// Parses a whole decimal number from `low` to `high` given as option `name` (absent: `*out` unchanged).
inline Code ParseNumberOption(const PluginArgs& args, const char* name, uint32_t low, uint32_t high, uint32_t* out,
                              ErrorBuffer* error) {
  const char* text = FindOption(args, name);
  if (text == nullptr) return Code::kOk;
  char* end = nullptr;
  errno = 0;
  const unsigned long parsed = std::strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ' ||
      parsed < low || parsed > high) {
    return Fail(error, Code::kInvalidArgument, "%s: '%s' is not a whole number from %u to %u", name, text, low,
                high);
  }
  *out = static_cast<uint32_t>(parsed);
  return Code::kOk;
}

// Fails (kNotSupported) when a store type appending `suffix` bytes to each key leaves no room in LMDB's key for
// `prefix_size` bytes of this scheme: the host then names the schemes that can serve that store type.
inline Code CheckRoom(uint32_t suffix, uint32_t prefix_size, ErrorBuffer* error) {
  if (static_cast<uint64_t>(suffix) + prefix_size <= kMaxLmdbKeySize) return Code::kOk;
  return Fail(error, Code::kNotSupported,
              "cannot serve a store type that appends %u bytes to each key: with this scheme's %u-byte prefix, "
              "keys would exceed LMDB's %u-byte limit",
              suffix, prefix_size, kMaxLmdbKeySize);
}

// The bytes a hashed form of `hash_bits` takes after `offset` tag bytes.
inline uint32_t HashFormSize(uint32_t offset, uint32_t hash_bits) { return offset + (hash_bits + 7) / 8 + kClashBytes; }

// The hashed form: `offset` bytes the caller owns (a tag), then the top `hash_bits` of XXH3-64(key) big-endian in
// ceil(hash_bits / 8) bytes, then a 2-byte big-endian clash number. Rows of this form store their key.
class HashForm {
 public:
  HashForm(uint32_t offset, uint32_t hash_bits)
      : offset_(offset), hash_bits_(hash_bits), hash_bytes_((hash_bits + 7) / 8) {}

  uint32_t prefix_size() const { return offset_ + hash_bytes_ + kClashBytes; }
  uint32_t hash_bits() const { return hash_bits_; }

  // Writes hash and clash 0 after the caller's `offset` bytes of `prefix`, and sets its size.
  void First(Bytes key, KeyPrefix* prefix) const {
    prefix->size = offset_ + key_form::WriteHashedFirst(hash_bits_, key, prefix->bytes + offset_);
  }

  // The next clash number under `prefix`'s hash that has rows (see KeyScheme::NextCandidate).
  Code Next(const Table& table, Bytes after, KeyPrefix* prefix, ErrorBuffer* error) const {
    const uint32_t head = offset_ + hash_bytes_;
    if (after.data == nullptr) {
      const uint32_t clash = GetU16(prefix->bytes + head);
      if (clash == kMaxClash) return Code::kNotFound;
      uint8_t probe[kMaxLmdbKeySize];
      std::memcpy(probe, prefix->bytes, head);
      PutU16(probe + head, static_cast<uint16_t>(clash + 1));
      MDB_val k{head + kClashBytes, probe};
      MDB_val v;
      const int rc = mdb_cursor_get(table.cursor, &k, &v, MDB_SET_RANGE);
      if (rc == MDB_NOTFOUND) return Code::kNotFound;
      if (rc != MDB_SUCCESS) return Fail(error, Code::kIOError, "reading hashed key: %s", mdb_strerror(rc));
      after = Bytes(k);
    }
    return key_form::NextHashedCandidate(after, prefix);  // kNotFound: past the hash's rows
  }

  // One past the clash number of `prefix` (which holds another key's rows).
  Code Bump(KeyPrefix* prefix, ErrorBuffer* error) const {
    const uint32_t head = offset_ + hash_bytes_;
    const uint32_t clash = GetU16(prefix->bytes + head);
    if (clash >= kMaxClash) {
      return Fail(error, Code::kFull, "more than %u keys share one %u-bit hash; raise hash_bits", kMaxClash + 1,
                  hash_bits_);
    }
    PutU16(prefix->bytes + head, static_cast<uint16_t>(clash + 1));
    return Code::kOk;
  }

 private:
  const uint32_t offset_;
  const uint32_t hash_bits_;
  const uint32_t hash_bytes_;
};

// The direct form: `offset` bytes the caller owns (a tag), then, when the store type appends a suffix, the key's
// length (2 bytes, big-endian, so that the prefix is self-delimiting), then the key's bytes. Rows of this form
// store no key: the prefix is the key.
class DirectForm {
 public:
  DirectForm(uint32_t offset, uint32_t suffix_size) : offset_(offset), length_prefixed_(suffix_size > 0) {}

  // The longest key the form holds in front of a `suffix_size`-byte suffix. REQUIRES: CheckRoom passed for at
  // least offset + length bytes.
  static uint32_t MaxKey(uint32_t offset, uint32_t suffix_size) {
    return kMaxLmdbKeySize - suffix_size - offset - (suffix_size > 0 ? kDirectLengthBytes : 0);
  }

  bool length_prefixed() const { return length_prefixed_; }

  // Writes the form after the caller's `offset` bytes of `prefix`, and sets its size.
  void Write(Bytes key, KeyPrefix* prefix) const {
    prefix->size = offset_ + key_form::WriteDirect(length_prefixed_, key, prefix->bytes + offset_);
  }

  // The key of a row of this form (its tag, if any, already checked) and the prefix's size.
  Code Read(const char* scheme, Bytes lmdb_key, Bytes* key, uint32_t* prefix_size, ErrorBuffer* error) const {
    if (!length_prefixed_) {
      *key = Bytes(lmdb_key.data + offset_, lmdb_key.size - offset_);
      *prefix_size = static_cast<uint32_t>(lmdb_key.size);
      return Code::kOk;
    }
    const uint32_t head = offset_ + kDirectLengthBytes;
    if (lmdb_key.size < head || lmdb_key.size - head < GetU16(lmdb_key.data + offset_)) {
      return Fail(error, Code::kCorruption, "%s row key of %zu bytes is shorter than its length prefix", scheme,
                  lmdb_key.size);
    }
    *key = Bytes(lmdb_key.data + head, GetU16(lmdb_key.data + offset_));
    *prefix_size = static_cast<uint32_t>(head + key->size);
    return Code::kOk;
  }

 private:
  const uint32_t offset_;
  const bool length_prefixed_;
};

// The form of a scheme that tags a direct form and a hashed one (kHybrid, kVariable) for lookups.
inline KeyForm TaggedLookupForm(KeyFormKind kind, const HashForm& hash, const DirectForm& direct, uint32_t max_key) {
  KeyForm form;
  form.kind = kind;
  form.hash_bits = hash.hash_bits();
  form.max_key = max_key;
  form.length_prefixed = direct.length_prefixed() ? 1 : 0;
  return form;
}

inline bool HashedStoredKeyMatches(Bytes value, Bytes key) {
  uint32_t stored_key_size = 0;
  return MatchHashedStoredKey(value, key, &stored_key_size);
}

// Reads a hashed row's stored key from `value`.
inline Code ReadHashedStoredKey(const char* scheme, Bytes value, Bytes* key, uint32_t* stored_key_size,
                                ErrorBuffer* error) {
  uint32_t length = 0;
  uint32_t length_size = 0;
  if (!ReadStoredKeyLength(value, &length, &length_size)) {
    return Fail(error, Code::kCorruption, "%s row value of %zu bytes does not start with a valid key length",
                scheme, value.size);
  }
  if (value.size - length_size < length) {
    return Fail(error, Code::kCorruption, "%s row value of %zu bytes is too short for its %u-byte stored key",
                scheme, value.size, length);
  }
  *key = Bytes(value.data + length_size, length);
  *stored_key_size = length_size + length;
  return Code::kOk;
}

}  // namespace planb::scheme_parts
