// The byte forms of the built-in key schemes' prefixes and stored keys (KeyForm, ABI 7.6), as inline code: the
// schemes write their keys with it, and a store type's lookups run it in place of calls into the scheme
// (FindKeyedRow with the scheme's LookupForm). One implementation of each form, so the two cannot disagree.
// Allocates nothing. Needs xxhash (XXH3-64), which the SDK's CMake package links.
// Since SDK 7.6 (all of this header unless noted).
#pragma once

#include <xxhash.h>

#include <cstring>

#include "planb/bytes.h"
#include "planb/encoding.h"
#include "planb/key_scheme.h"
#include "planb/status.h"

namespace planb::key_form {

inline constexpr uint32_t kClashBytes = 2;          // a hashed prefix's clash number, big-endian
inline constexpr uint32_t kMaxHashBytes = 8;
inline constexpr uint32_t kDirectLengthBytes = 2;   // a direct prefix's key length, when length-prefixed
// Since SDK 7.7, down to kTagBytes: the tagged forms' bytes.
inline constexpr uint8_t kHybridDirectTag = 0x00;    // kHybrid: the tag byte before each of its two forms
inline constexpr uint8_t kHybridHashedTag = 0x01;
inline constexpr uint8_t kVariableDirectTag = 0x00;  // kVariable: the tag bytes of its three forms
inline constexpr uint8_t kVariableIdTag = 0x01;
inline constexpr uint8_t kVariableHashedTag = 0x02;
inline constexpr uint32_t kVariableIdMax = kMaxLmdbKeySize;  // kVariable: the longest key of the id form
inline constexpr uint32_t kTagBytes = 1;

inline uint32_t HashBytes(uint32_t hash_bits) { return (hash_bits + 7) / 8; }

// Writes the top `hash_bits` (8 to 64) of XXH3-64(key) big-endian at `out`, then clash number 0; returns the
// bytes written.
inline uint32_t WriteHashedFirst(uint32_t hash_bits, Bytes key, uint8_t* out) {
  uint64_t hash = XXH3_64bits(key.data, key.size) >> (64 - hash_bits);
  const uint32_t hash_bytes = HashBytes(hash_bits);
  if (hash_bytes == 8) {
    PutU64(out, hash);  // the default 64 bits: one store
  } else {
    for (int i = static_cast<int>(hash_bytes) - 1; i >= 0; --i, hash >>= 8) out[i] = static_cast<uint8_t>(hash);
  }
  PutU16(out + hash_bytes, 0);
  return hash_bytes + kClashBytes;
}

// Writes the direct form of `key` at `out` (its length first when `length_prefixed`); returns the bytes written.
// REQUIRES: room for them.
inline uint32_t WriteDirect(bool length_prefixed, Bytes key, uint8_t* out) {
  uint32_t head = 0;
  if (length_prefixed) {
    PutU16(out, static_cast<uint16_t>(key.size));
    head = kDirectLengthBytes;
  }
  CopyBytes(out + head, key.data, key.size);
  return head + static_cast<uint32_t>(key.size);
}

// The stored key of hashed rows: the key's length as a LEB128 varint (7 bits a byte, low bits first, the top bit
// set on every byte but the last: one byte for keys under 128 bytes, at most five) + the key's bytes.
inline uint32_t StoredKeyLengthSize(uint32_t length) {
  uint32_t size = 1;
  for (; length >= 0x80; length >>= 7) ++size;
  return size;
}

inline uint32_t HashedStoredKeySize(Bytes key) {
  const auto length = static_cast<uint32_t>(key.size);
  return StoredKeyLengthSize(length) + length;
}

inline void WriteHashedStoredKey(Bytes key, uint8_t* out) {
  auto length = static_cast<uint32_t>(key.size);
  for (; length >= 0x80; length >>= 7) *out++ = static_cast<uint8_t>(length | 0x80);
  *out++ = static_cast<uint8_t>(length);
  if (key.size != 0) std::memcpy(out, key.data, key.size);
}

// The stored key's length and the bytes it takes, read from the start of `value`; false when the varint is cut
// off, longer than five bytes, not the shortest form, or past 32 bits.
inline bool ReadStoredKeyLength(Bytes value, uint32_t* length, uint32_t* length_size) {
  if (value.size != 0 && value.data[0] < 0x80) {  // keys under 128 bytes: the common case
    *length = value.data[0];
    *length_size = 1;
    return true;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < 5 && i < value.size; ++i) {
    const uint8_t byte = value.data[i];
    total |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if (byte < 0x80) {
      if (byte == 0 || total > 0xFFFFFFFFu) return false;  // a zero last byte: not the shortest form
      *length = static_cast<uint32_t>(total);
      *length_size = i + 1;
      return true;
    }
  }
  return false;
}

// Whether `value` starts with `key` as a hashed row's stored key; if so, `*stored_key_size` is what it takes.
inline bool MatchHashedStoredKey(Bytes value, Bytes key, uint32_t* stored_key_size) {
  uint32_t length = 0;
  uint32_t length_size = 0;
  if (!ReadStoredKeyLength(value, &length, &length_size) || length != key.size ||
      value.size - length_size < key.size ||
      !SameBytes(value.data + length_size, key.data, key.size)) {
    return false;
  }
  *stored_key_size = length_size + length;
  return true;
}

// A hashed-form row's key and the sizes of its parts, as the hashed scheme's DecodeRow gives them (a merge reads
// every batch row so); false when the row is malformed (the scheme's DecodeRow then says what is wrong).
// Since SDK 7.7.
inline bool DecodeHashedRow(uint32_t hash_bits, Bytes lmdb_key, Bytes value, Bytes* key, uint32_t* prefix_size,
                            uint32_t* stored_key_size) {
  const uint32_t size = HashBytes(hash_bits) + kClashBytes;
  uint32_t length = 0;
  uint32_t length_size = 0;
  if (lmdb_key.size < size || !ReadStoredKeyLength(value, &length, &length_size) || value.size - length_size < length) {
    return false;
  }
  *key = Bytes(value.data + length_size, length);
  *prefix_size = size;
  *stored_key_size = length_size + length;
  return true;
}

// The hashed form's next candidate after `prefix` (a hash and a clash number, behind any tag bytes), given
// `after`, the first LMDB key past every row under `prefix`: the clash number of `after` when it is under the same
// hash (kOk, `prefix` updated), else kNotFound (no later key shares the hash; `prefix` unchanged).
inline Code NextHashedCandidate(Bytes after, KeyPrefix* prefix) {
  const uint32_t head = prefix->size - kClashBytes;
  if (after.size < prefix->size || !SameBytes(after.data, prefix->bytes, head)) return Code::kNotFound;
  std::memcpy(prefix->bytes + head, after.data + head, kClashBytes);
  return Code::kOk;
}

// Whether `form`'s uncertain candidates are hashed ones, whose rows start their values with the stored key.
// Since SDK 7.7.
inline bool StoresHashedKeys(const KeyForm& form) {
  return form.kind == KeyFormKind::kHashed || form.kind == KeyFormKind::kHybrid ||
         form.kind == KeyFormKind::kVariable;
}

// Whether a Valid `form` other than kCallScheme computes `key`'s first candidate itself. Every key but
// kVariable's of the id form, which only the scheme can resolve (its own table).
// Since SDK 7.7.
inline bool Computes(const KeyForm& form, Bytes key) {
  return form.kind != KeyFormKind::kVariable || key.size <= form.max_key || key.size > kVariableIdMax;
}

// Whether `form` is one this SDK computes, with sane parameters (the host checks a scheme's form with this).
inline bool Valid(const KeyForm& form) {
  const bool direct_fits = form.length_prefixed <= 1 && form.max_key <= kMaxLmdbKeySize &&
                           form.max_key + form.length_prefixed * kDirectLengthBytes <= kMaxLmdbKeySize;
  switch (form.kind) {
    case KeyFormKind::kHashed:
      return form.hash_bits >= 8 && form.hash_bits <= 64;
    case KeyFormKind::kDirect:
      return direct_fits && form.max_key >= 1;
    case KeyFormKind::kHybrid:
    case KeyFormKind::kVariable:
      return form.hash_bits >= 8 && form.hash_bits <= 64 && direct_fits &&
             kTagBytes + form.max_key + form.length_prefixed * kDirectLengthBytes <= kMaxLmdbKeySize;
    default:
      return false;
  }
}

// A read's first candidate for `key` under a Valid form other than kCallScheme that Computes it, as the scheme's
// FirstCandidate with Intent::kRead gives it: kOk and `out`, or kNotFound for a key the form cannot hold (direct:
// empty or longer than max_key).
inline Code FirstCandidate(const KeyForm& form, Bytes key, Candidate* out) {
  if (form.kind == KeyFormKind::kHashed) {
    out->prefix.size = WriteHashedFirst(form.hash_bits, key, out->prefix.bytes);
    out->certain = false;  // another key may hold clash 0 of this hash
    return Code::kOk;
  }
  if (form.kind == KeyFormKind::kHybrid || form.kind == KeyFormKind::kVariable) {
    // Which form a key takes depends only on its length; kVariable's id form is the scheme's (Computes).
    const bool hybrid = form.kind == KeyFormKind::kHybrid;
    out->certain = key.size <= form.max_key;
    if (out->certain) {
      out->prefix.bytes[0] = hybrid ? kHybridDirectTag : kVariableDirectTag;
      out->prefix.size = kTagBytes + WriteDirect(form.length_prefixed != 0, key, out->prefix.bytes + kTagBytes);
    } else {
      out->prefix.bytes[0] = hybrid ? kHybridHashedTag : kVariableHashedTag;
      out->prefix.size = kTagBytes + WriteHashedFirst(form.hash_bits, key, out->prefix.bytes + kTagBytes);
    }
    return Code::kOk;
  }
  if (key.size == 0 || key.size > form.max_key) return Code::kNotFound;
  out->prefix.size = WriteDirect(form.length_prefixed != 0, key, out->prefix.bytes);
  out->certain = true;
  return Code::kOk;
}

}  // namespace planb::key_form
