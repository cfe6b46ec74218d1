// IPv4 and IPv6 addresses and CIDR blocks as text, for the ip key formats of ranged maps (key_format = ipv4 or
// ip): parsed and printed in one place for the plugins and the host. Header-only; allocates nothing.
//
// An Address is 16 bytes, big-endian, IPv6 order; IPv4 a.b.c.d is the IPv4-mapped ::ffff:a.b.c.d and prints back
// as dotted IPv4. Text is taken exactly: no surrounding whitespace, no zone ids ("fe80::1%eth0"), IPv4 only as
// four dotted decimals without leading zeros (what inet_pton accepts). A CIDR block "a/n" must have no host bits
// set ("10.0.0.1/8" is refused, naming "10.0.0.0/8"): a block with host bits set is almost always a typo, and
// silently widening it would load a range other than the one written.
// Since SDK 7.2 (all of this header unless noted).
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace planb::ip {

struct Address {
  uint8_t bytes[16] = {};
  friend bool operator==(const Address& a, const Address& b) { return std::memcmp(a.bytes, b.bytes, 16) == 0; }
};

// The inclusive range a text names: an address is [a, a], a block "a/n" its first and last address.
struct Block {
  Address first;
  Address last;
  bool ipv4 = false;  // written as IPv4 (first and last are then IPv4-mapped)
};

inline constexpr size_t kMaxText = 64;  // enough for any address or block this prints, with its NUL

// IPv4-mapped (::ffff:0:0/96).
inline bool IsMapped(const Address& a) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(a.bytes, kPrefix, 12) == 0;
}

inline Address MapIpv4(uint32_t v4) {
  Address a;
  a.bytes[10] = a.bytes[11] = 0xff;
  for (int i = 0; i < 4; ++i) a.bytes[12 + i] = static_cast<uint8_t>(v4 >> (24 - 8 * i));
  return a;
}

inline uint32_t Ipv4Of(const Address& a) {
  return (uint32_t{a.bytes[12]} << 24) | (uint32_t{a.bytes[13]} << 16) | (uint32_t{a.bytes[14]} << 8) | a.bytes[15];
}

// One address, IPv4 dotted or IPv6 text. Null on success, else why not ("is not an IP address").
inline const char* ParseAddress(std::string_view text, Address* out, bool* ipv4) {
  char buffer[kMaxText];
  if (text.empty() || text.size() >= sizeof(buffer)) return "is not an IP address";
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) return "is not an IP address";
  in_addr v4;
  if (text.find(':') == std::string_view::npos) {
    if (inet_pton(AF_INET, buffer, &v4) != 1) return "is not an IP address";
    *out = MapIpv4(ntohl(v4.s_addr));
    *ipv4 = true;
    return nullptr;
  }
  if (inet_pton(AF_INET6, buffer, out->bytes) != 1) return "is not an IP address";
  *ipv4 = false;
  return nullptr;
}

// An address or a CIDR block. Null on success, else why not.
inline const char* ParseBlock(std::string_view text, Block* out) {
  const size_t slash = text.find('/');
  const char* why = ParseAddress(text.substr(0, slash), &out->first, &out->ipv4);
  if (why != nullptr) return why;
  out->last = out->first;
  if (slash == std::string_view::npos) return nullptr;
  const std::string_view digits = text.substr(slash + 1);
  const unsigned limit = out->ipv4 ? 32 : 128;
  unsigned length = 0;
  if (digits.empty() || digits.size() > 3) return "has no valid prefix length after '/'";
  for (char c : digits) {
    if (c < '0' || c > '9') return "has no valid prefix length after '/'";
    length = length * 10 + static_cast<unsigned>(c - '0');
  }
  if (digits.size() > 1 && digits[0] == '0') return "has no valid prefix length after '/'";
  if (length > limit) return out->ipv4 ? "has a prefix length over 32" : "has a prefix length over 128";
  const unsigned bits = length + (out->ipv4 ? 96 : 0);  // of the 128-bit address
  for (unsigned i = bits; i < 128; ++i) {
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (i % 8));
    if (out->first.bytes[i / 8] & mask) return "has host bits set after the prefix length";
    out->last.bytes[i / 8] |= mask;
  }
  return nullptr;
}

// Writes `a` as text (NUL-terminated) into out[kMaxText]: dotted IPv4 for a mapped address, else RFC 5952 IPv6
// (inet_ntop: lower case, longest zero run as ::). Returns the length.
inline size_t Format(const Address& a, char* out) {
  if (IsMapped(a)) {
    const uint32_t v = Ipv4Of(a);
    return static_cast<size_t>(
        std::snprintf(out, kMaxText, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255));
  }
  if (inet_ntop(AF_INET6, a.bytes, out, kMaxText) == nullptr) {
    out[0] = '\0';
    return 0;
  }
  return std::strlen(out);
}

// A plain decimal 0..4294967295 (the ipv4 format also takes these: the tor-geoip IPv4 file writes them).
inline bool ParseDecimalIpv4(std::string_view text, uint32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace planb::ip
