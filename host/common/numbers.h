// Strict parsing of signed 64-bit decimal numbers ("-42"; no spaces, no '+', no junk, no overflow).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace planb {

inline bool ParseInt64(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace planb
