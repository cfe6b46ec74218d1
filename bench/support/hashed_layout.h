// Rows in the hashed scheme's layout (plugins/schemes/hashed_key.cc, version 2, hash_bits 64), written and read by
// hand: the floors that the benches set beside a hashed shard (what the layout alone costs a raw LMDB writer or
// reader). Keep in step with the scheme's and the store types' formats.
//   LMDB key = XXH3-64 of the key, big-endian, + clash number 0 (2 bytes) [+ the store type's suffix: Temporal
//              State's time, Session's start and end]
//   value    = key length (LEB128 varint) + key [+ type byte + value: State, Temporal State]
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "planb/bytes.h"
#include "planb/encoding.h"

namespace planb::bench {

inline constexpr size_t kHashedLayoutKeySize = 10;

inline void HashedLayoutKey(std::string_view key, uint8_t out[kHashedLayoutKeySize]) {
  PutU64(out, XXH3_64bits(key.data(), key.size()));
  out[8] = out[9] = 0;
}

inline std::string HashedLayoutKey(std::string_view key) {
  uint8_t bytes[kHashedLayoutKeySize];
  HashedLayoutKey(key, bytes);
  return std::string(reinterpret_cast<const char*>(bytes), sizeof(bytes));
}

// A hashed row's stored key: the key's length (LEB128 varint), then the key. A Session row's whole value.
inline std::string HashedLayoutStoredKey(std::string_view key) {
  std::string out;
  out.reserve(5 + key.size());
  for (auto n = static_cast<uint32_t>(key.size()); ; n >>= 7) {
    if (n < 0x80) {
      out.push_back(static_cast<char>(n));
      break;
    }
    out.push_back(static_cast<char>((n & 0x7F) | 0x80));
  }
  out.append(key);
  return out;
}

// The row's value (State, Temporal State): the stored key, the type byte, the value.
inline std::string HashedLayoutValue(std::string_view key, char type_byte, std::string_view value) {
  std::string out = HashedLayoutStoredKey(key);
  out.push_back(type_byte);
  out.append(value);
  return out;
}

// The value after the stored key and type byte of `stored`, when the stored key is `key`.
inline bool HashedLayoutMatch(Bytes stored, std::string_view key, Bytes* value) {
  uint32_t length = 0;
  size_t at = 0;
  for (int shift = 0; at < stored.size && shift < 35; shift += 7) {
    const uint8_t byte = stored.data[at++];
    length |= static_cast<uint32_t>(byte & 0x7F) << shift;
    if (byte < 0x80) break;
  }
  if (length != key.size() || stored.size < at + key.size() + 1 ||
      std::memcmp(stored.data + at, key.data(), key.size()) != 0) {
    return false;
  }
  *value = Bytes(stored.data + at + key.size() + 1, stored.size - at - key.size() - 1);
  return true;
}

}  // namespace planb::bench
