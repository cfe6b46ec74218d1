// An unowned view of bytes: pointer plus length, the only byte container that crosses the plugin boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <lmdb.h>

namespace planb {

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;

  constexpr Bytes() = default;
  constexpr Bytes(const uint8_t* d, size_t n) : data(d), size(n) {}
  Bytes(const char* d, size_t n) : data(reinterpret_cast<const uint8_t*>(d)), size(n) {}
  Bytes(std::string_view s) : Bytes(s.data(), s.size()) {}  // NOLINT: implicit by design
  explicit Bytes(const MDB_val& v) : data(static_cast<const uint8_t*>(v.mv_data)), size(v.mv_size) {}

  std::string_view view() const { return {reinterpret_cast<const char*>(data), size}; }
  MDB_val mdb() const { return MDB_val{size, const_cast<uint8_t*>(data)}; }
  bool empty() const { return size == 0; }
  friend bool operator==(Bytes a, Bytes b) {
    return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
  }
  friend bool operator!=(Bytes a, Bytes b) { return !(a == b); }
};

// Copies `n` bytes between buffers that do not overlap, without reading or writing past either end. Keys on the
// lookup path are mostly short (a zone, a user id): up to 32 bytes this is two overlapping fixed-size moves, where
// memcpy of a size known only at run time is a call into libc on every lookup.
inline void CopyBytes(uint8_t* to, const uint8_t* from, size_t n) {
  if (n >= 16 && n <= 32) {
    std::memcpy(to, from, 16);
    std::memcpy(to + n - 16, from + n - 16, 16);
  } else if (n >= 8 && n < 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else if (n > 32) {
    std::memcpy(to, from, n);  // long keys: memcpy's own loop is as good
  } else if (n != 0) {
    // 1-3 bytes: first, middle and last cover them all
    to[0] = from[0];
    to[n / 2] = from[n / 2];
    to[n - 1] = from[n - 1];
  }
}

}  // namespace planb
