// An unowned view of bytes: pointer plus length, the only byte container that crosses the plugin boundary.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <lmdb.h>

namespace planb {

namespace bytes_detail {
template <typename Word>
inline Word Load(const uint8_t* p) {
  Word w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
}  // namespace bytes_detail

// Whether `n` bytes at `a` and `b` are equal, as memcmp(a, b, n) == 0. For the same reason as CopyBytes: the
// prefixes and keys a lookup compares are mostly short, and up to 32 bytes this is a few overlapping loads where
// memcmp of a size known only at run time is a call into libc.
// Since SDK 7.6.
inline bool SameBytes(const uint8_t* a, const uint8_t* b, size_t n) {
  using bytes_detail::Load;
  if (n >= 8 && n <= 16) {
    return ((Load<uint64_t>(a) ^ Load<uint64_t>(b)) | (Load<uint64_t>(a + n - 8) ^ Load<uint64_t>(b + n - 8))) == 0;
  }
  if (n > 16 && n <= 32) {
    return ((Load<uint64_t>(a) ^ Load<uint64_t>(b)) | (Load<uint64_t>(a + 8) ^ Load<uint64_t>(b + 8)) |
            (Load<uint64_t>(a + n - 16) ^ Load<uint64_t>(b + n - 16)) |
            (Load<uint64_t>(a + n - 8) ^ Load<uint64_t>(b + n - 8))) == 0;
  }
  if (n >= 4 && n < 8) {
    return ((Load<uint32_t>(a) ^ Load<uint32_t>(b)) | (Load<uint32_t>(a + n - 4) ^ Load<uint32_t>(b + n - 4))) == 0;
  }
  if (n > 32) return std::memcmp(a, b, n) == 0;
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);  // 1-3 bytes
}

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
  friend bool operator==(Bytes a, Bytes b) { return a.size == b.size && SameBytes(a.data, b.data, a.size); }
  friend bool operator!=(Bytes a, Bytes b) { return !(a == b); }
};

// Copies `n` bytes between buffers that do not overlap, without reading or writing past either end. Keys on the
// lookup path are mostly short (a zone, a user id): up to 32 bytes this is two overlapping fixed-size moves, where
// memcpy of a size known only at run time is a call into libc on every lookup.
// Since SDK 7.2.
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
