// Lower-case hex of bytes, for messages and dumps (LMDB keys, routing ids).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace planb {

inline std::string HexString(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// A 64-bit number as 16 lower-case hex digits (checksums, content version digests): "00ab34cd56ef7890".
inline std::string Hex16(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<size_t>(i)] = kDigits[value & 15];
  return out;
}

}  // namespace planb
