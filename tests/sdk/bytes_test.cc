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

// Every size from 0 to 80 (each branch and its edges), on buffers of exactly that size (ASan sees a read past
// either end): equal runs, and runs that differ in one byte at every position, by one bit or by all of them.
TEST(SameBytesTest, AgreesWithMemcmpAtEverySizeAndEveryDifferingByte) {
  for (size_t n = 0; n <= 80; ++n) {
    std::unique_ptr<uint8_t[]> a(new uint8_t[n == 0 ? 1 : n]);
    std::unique_ptr<uint8_t[]> b(new uint8_t[n == 0 ? 1 : n]);
    for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<uint8_t>(i * 13 + n);
    ASSERT_TRUE(SameBytes(a.get(), b.get(), n)) << "size " << n;
    for (size_t at = 0; at < n; ++at) {
      for (const uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        b[at] ^= flip;
        ASSERT_FALSE(SameBytes(a.get(), b.get(), n)) << "byte " << at << " of " << n;
        ASSERT_FALSE(Bytes(a.get(), n) == Bytes(b.get(), n));
        b[at] ^= flip;
      }
    }
    ASSERT_TRUE(Bytes(a.get(), n) == Bytes(b.get(), n));
  }
  EXPECT_FALSE(Bytes("abc") == Bytes("abcd"));  // sizes differ
}

}  // namespace
}  // namespace planb
