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

}  // namespace planb
