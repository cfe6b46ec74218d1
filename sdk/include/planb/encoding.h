// Fixed-width big-endian encodings used in LMDB keys, so that LMDB's byte order is numeric order.
// On-disk format: changing any of these changes every shard.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstdint>
#include <cstring>

namespace planb {

inline void PutU16(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v >> 8);
  out[1] = static_cast<uint8_t>(v);
}
inline uint16_t GetU16(const uint8_t* in) { return static_cast<uint16_t>((in[0] << 8) | in[1]); }

// Big-endian through one load or store and a byte swap where the compiler offers it: GCC 12 at -O2 leaves the
// byte-at-a-time loops as loops, and times and hashes are encoded on every lookup.
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline void PutU32(uint8_t* out, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(out, &v, sizeof(v));
}
inline uint32_t GetU32(const uint8_t* in) {
  uint32_t v;
  std::memcpy(&v, in, sizeof(v));
  return __builtin_bswap32(v);
}
inline void PutU64(uint8_t* out, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(out, &v, sizeof(v));
}
inline uint64_t GetU64(const uint8_t* in) {
  uint64_t v;
  std::memcpy(&v, in, sizeof(v));
  return __builtin_bswap64(v);
}
#else
inline void PutU32(uint8_t* out, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
inline uint32_t GetU32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | in[i];
  return v;
}
inline void PutU64(uint8_t* out, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
inline uint64_t GetU64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}
#endif

// Signed 64-bit with the sign bit flipped: negative numbers sort before positive ones byte-wise.
inline void PutOrderedI64(uint8_t* out, int64_t v) {
  PutU64(out, static_cast<uint64_t>(v) ^ (uint64_t{1} << 63));
}
inline int64_t GetOrderedI64(const uint8_t* in) {
  return static_cast<int64_t>(GetU64(in) ^ (uint64_t{1} << 63));
}

}  // namespace planb
