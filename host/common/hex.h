// Lower-case hex of bytes, for messages and dumps (LMDB keys, routing ids).
#pragma once

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

}  // namespace planb
