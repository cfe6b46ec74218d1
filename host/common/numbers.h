// Strict parsing of decimal numbers: no spaces, no junk, no overflow. ParseInt64 reads signed 64-bit numbers
// ("-42", "+7") as the ranged store types read <from>, <to> and <key>; ParseCount reads config counts.
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

// Digits only (no sign, no spaces), at most `max`: counts and limits in the config.
inline bool ParseCount(std::string_view text, uint64_t max, uint64_t* value) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && *value <= max;
}

}  // namespace planb
