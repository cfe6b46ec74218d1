// IPv6 address text read without inet_pton, for the read index's lookups (range_answer_index.h), where inet_pton
// was a third of the cost. Only the plain forms: hex groups of one to four digits, any case, with at most one
// "::". Anything else (embedded IPv4, a zone, a blank) is left to inet_pton through the store type's parser:
// false here means "not read", never "not an address". What it accepts, inet_pton accepts with the same bytes
// (tests/host/reader/ipv6_text_test.cc compares them).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace planb {

// Each byte's value as a hex digit, -1 for any other byte: one load instead of three range tests per character,
// whose branches random hex text mispredicts (the table made the parser about twice as fast: bench/ip_text_bench).
inline constexpr std::array<int8_t, 256> kHexDigitValue = [] {
  std::array<int8_t, 256> table{};
  for (int8_t& value : table) value = -1;
  for (int c = '0'; c <= '9'; ++c) table[c] = static_cast<int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) table[c] = static_cast<int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) table[c] = static_cast<int8_t>(c - 'A' + 10);
  return table;
}();

// On true, `*out` is the address, most significant byte first as an unsigned 128-bit number.
inline bool ParsePlainIpv6(std::string_view s, unsigned __int128* out) {
  if (s.size() < 2 || s.size() > 39) return false;
  uint16_t groups[8];
  int count = 0;
  int gap = -1;  // how many groups come before "::"
  size_t i = 0;
  if (s[0] == ':') {
    if (s[1] != ':') return false;
    gap = 0;
    i = 2;
  }
  while (i < s.size()) {
    uint32_t value = 0;
    size_t digits = 0;
    for (; i < s.size() && digits < 5; ++i, ++digits) {
      const int8_t d = kHexDigitValue[static_cast<unsigned char>(s[i])];
      if (d < 0) break;
      value = value * 16 + static_cast<uint32_t>(d);
    }
    if (digits == 0 || digits > 4 || count == 8) return false;
    groups[count++] = static_cast<uint16_t>(value);
    if (i == s.size()) break;
    if (s[i] != ':') return false;
    ++i;
    if (i == s.size()) return false;  // one ':' at the end
    if (s[i] == ':') {
      if (gap >= 0) return false;
      gap = count;
      ++i;
    }
  }
  // "::" stands for at least one group of zeros; without it there are exactly eight.
  if (gap < 0 ? count != 8 : count > 7) return false;
  uint16_t full[8] = {};
  const int before = gap < 0 ? count : gap;
  for (int g = 0; g < before; ++g) full[g] = groups[g];
  for (int g = before; g < count; ++g) full[8 - (count - g)] = groups[g];  // after "::": at the end
  unsigned __int128 a = 0;
  for (uint16_t group : full) a = (a << 16) | group;
  *out = a;
  return true;
}

}  // namespace planb
