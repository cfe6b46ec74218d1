// The key formats of the ranged store types (map option key_format): what a bound is and how it is written.
//   number  signed 64-bit decimal text; on disk ordered i64 (8 bytes per bound)
//   ipv4    IPv4 text (a.b.c.d, a CIDR block for <key>, or a decimal 0..4294967295); on disk the number
//           0..2^32-1, exactly as the number format stores it (8 bytes per bound)
//   ip      IPv4 or IPv6 text (IPv4 as ::ffff:a.b.c.d), CIDR blocks for <key>; on disk the 16-byte big-endian
//           address (16 bytes per bound)
// Internally a bound is an unsigned 128-bit number in on-disk byte order: a number n is the unsigned 64-bit
// n ^ 2^63 (what PutOrderedI64 writes), so bounds compare like the values they stand for, in every format.
#pragma once

#include <cstdint>
#include <cstring>

#include "planb/bytes.h"
#include "planb/encoding.h"
#include "planb/plugin.h"
#include "planb/status.h"

namespace planb::ranged {

using Bound = unsigned __int128;

enum class KeyFormat : uint8_t { kNumber, kIpv4, kIp };

// The option's value: "number", "ipv4" or "ip"; null (not given) is number. False for anything else.
bool ParseKeyFormat(const char* text, KeyFormat* out);
// The store's key_format from `args`; false (and kInvalidArgument in `error`, naming the map, the value and the
// accepted ones) for any other value.
bool ParseKeyFormat(const PluginArgs* args, KeyFormat* out, ErrorBuffer* error);
inline constexpr OptionSpec kKeyFormatSpec = {
    kKeyFormatOption, "number", "what a range bound is: number (signed 64-bit), ipv4 or ip (IPv4/IPv6 addresses)"};
inline uint32_t BoundWidth(KeyFormat f) { return f == KeyFormat::kIp ? 16 : 8; }

inline Bound MaxBound(uint32_t width) { return width == 16 ? ~Bound{0} : Bound{UINT64_MAX}; }
inline void PutBound(uint8_t* out, Bound b, uint32_t width) {
  if (width == 16) {
    PutU64(out, static_cast<uint64_t>(b >> 64));
    out += 8;
  }
  PutU64(out, static_cast<uint64_t>(b));
}
inline Bound GetBound(const uint8_t* in, uint32_t width) {
  return width == 16 ? (Bound{GetU64(in)} << 64) | GetU64(in + 8) : Bound{GetU64(in)};
}
// Equal range keys (from + to, 2 x width bytes): memcmp of a constant size, which compilers inline, where a
// run-time size would be a library call on the lookup path.
inline bool SameRangeKey(const void* a, const void* b, uint32_t width) {
  return width == 8 ? std::memcmp(a, b, 16) == 0 : std::memcmp(a, b, 32) == 0;
}
inline Bound FromNumber(int64_t n) { return static_cast<uint64_t>(n) ^ (uint64_t{1} << 63); }
inline int64_t ToNumber(Bound b) { return static_cast<int64_t>(static_cast<uint64_t>(b) ^ (uint64_t{1} << 63)); }

inline constexpr size_t kBoundText = 64;
// `b` as its format writes it ("-5", "10.0.0.1", "2001:db8::"), NUL-terminated into out[kBoundText].
const char* FormatBound(Bound b, KeyFormat format, char* out);
// For messages about stored bounds where only the width is known (ipv4 bounds print as numbers).
inline const char* FormatStored(Bound b, uint32_t width, char* out) {
  return FormatBound(b, width == 16 ? KeyFormat::kIp : KeyFormat::kNumber, out);
}

// One bound (<from>, <to>, a lookup key): a number, or an address. `element` names it in messages.
Code ParseBound(Bytes text, KeyFormat format, const char* element, Bound* out, ErrorBuffer* error);
// A <key>: one bound [b, b], or for the address formats also a CIDR block [first, last].
Code ParseKeyBounds(Bytes text, KeyFormat format, const char* element, Bound* first, Bound* last,
                    ErrorBuffer* error);

// The 16-byte address of a bound of an address format (ipv4: IPv4-mapped), for Row and ScanBounds.
void BoundAddress(Bound b, KeyFormat format, uint8_t* out16);
// The bound of a 16-byte address in `format` (ipv4: only IPv4-mapped addresses have one): below / above say on
// which side of every bound the address lies when it has none.
bool AddressBound(const uint8_t* in16, KeyFormat format, Bound* out, bool* below);

}  // namespace planb::ranged
