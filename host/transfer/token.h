// The handle a storage node gives an upload or a served snapshot: 128 bits from the OS's CSPRNG, so that a peer
// cannot guess (and hijack or read) another's by trying. On the wire as two u64 (high, then low); in file names
// and log lines as 32 hex digits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace planb {

struct Token {
  // Constructors (not an aggregate) so that `{5, 0}` cannot brace-elide into a token and a neighbouring field.
  constexpr Token() = default;
  constexpr explicit Token(uint64_t high_bits, uint64_t low_bits) : high(high_bits), low(low_bits) {}

  uint64_t high = 0;
  uint64_t low = 0;

  // 128 bits from getrandom(2) (which blocks only until the kernel's pool is first seeded).
  static Token Random();

  std::string Hex() const;
  // The first 8 hex digits and "...": enough to match log lines with each other, never enough to use the token
  // (a bearer of a whole token could fetch or feed what it names). Log lines and errors show only this.
  std::string Shown() const;
  bool operator==(const Token& other) const { return high == other.high && low == other.low; }
  bool operator!=(const Token& other) const { return !(*this == other); }
  bool operator<(const Token& other) const { return high != other.high ? high < other.high : low < other.low; }
};

// For test failures and debugging: the hex form.
inline void PrintTo(const Token& token, std::ostream* out) { *out << token.Hex(); }

// For unordered containers: the bits are random already, so mixing the halves is enough.
struct TokenHash {
  size_t operator()(const Token& token) const { return static_cast<size_t>(token.high ^ (token.low * 0x9e3779b97f4a7c15ULL)); }
};

}  // namespace planb
