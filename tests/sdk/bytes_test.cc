// planb::CopyBytes (sdk/include/planb/bytes.h): every size from 0 to past its short-copy range copies exactly the
// bytes asked for, from buffers of exactly that size on the heap (ASan catches a read past either end), and writes
// nothing outside them.
#include "planb/bytes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace planb {
namespace {

TEST(CopyBytesTest, CopiesExactlyTheBytesAskedForAtEverySize) {
  constexpr size_t kGuard = 40;  // bytes either side of the target that must stay as they were
  for (size_t n = 0; n <= 80; ++n) {
    std::unique_ptr<uint8_t[]> from(new uint8_t[n == 0 ? 1 : n]);  // exactly n bytes (1 for n == 0)
    for (size_t i = 0; i < n; ++i) from[i] = static_cast<uint8_t>(i * 7 + n + 1);
    std::vector<uint8_t> to(n + 2 * kGuard, 0xEE);
    CopyBytes(to.data() + kGuard, from.get(), n);
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(to[i], 0xEE) << "wrote before the target, size " << n;
      ASSERT_EQ(to[kGuard + n + i], 0xEE) << "wrote past the target, size " << n;
    }
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(to[kGuard + i], from[i]) << "byte " << i << " of " << n;
  }
}

}  // namespace
}  // namespace planb
