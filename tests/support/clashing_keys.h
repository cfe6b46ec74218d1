// Keys that share a hash under the `hashed` scheme, for tests that force clashes (hash_bits = 8).
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace planb::testing {

// The top `bits` bits of XXH3-64, big-endian in ceil(bits / 8) bytes: the on-disk hash part of a prefix.
inline std::string ExpectedHash(std::string_view key, unsigned bits) {
  uint64_t hash = XXH3_64bits(key.data(), key.size()) >> (64 - bits);
  std::string out((bits + 7) / 8, '\0');
  for (int i = static_cast<int>(out.size()) - 1; i >= 0; --i, hash >>= 8) out[i] = static_cast<char>(hash & 0xFF);
  return out;
}

// `count` distinct keys (`base` + "<n>", "clash-<n>" by default) whose top 8 hash bits are the same.
inline std::vector<std::string> ClashingKeys(size_t count, const std::string& base = "clash-") {
  std::vector<std::string> keys{base + "0"};
  const std::string target = ExpectedHash(keys[0], 8);
  for (int i = 1; keys.size() < count; ++i) {
    std::string key = base + std::to_string(i);
    if (ExpectedHash(key, 8) == target) keys.push_back(key);
  }
  return keys;
}

}  // namespace planb::testing
