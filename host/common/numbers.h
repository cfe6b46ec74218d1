// Strict parsing of signed 64-bit decimal numbers ("-42", "+7"; no spaces, no junk, no overflow), as the
// ranged store types read <from>, <to> and <key>.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace planb {

inline bool ParseInt64(std::string_view text, int64_t* value) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace planb
