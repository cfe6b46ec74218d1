// The SDK's fixed-width encodings are an on-disk format: big-endian bytes whatever the host, so that LMDB's byte
// order is numeric order. Checked byte for byte, and against the portable definition for many values.
#include "planb/encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace planb {
namespace {

TEST(Encoding, WritesBigEndianBytes) {
  uint8_t b[8];
  PutU32(b, 0x01020304u);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 4), (std::vector<uint8_t>{1, 2, 3, 4}));
  PutU64(b, 0x0102030405060708ull);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 8), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  PutU16(b, 0xA1B2);
  EXPECT_EQ(b[0], 0xA1);
  EXPECT_EQ(b[1], 0xB2);
}

TEST(Encoding, ReadsWhatItWritesAtAnyAlignment) {
  std::mt19937_64 rng(7);
  uint8_t buffer[16];
  for (int i = 0; i < 10000; ++i) {
    const uint64_t v = rng();
    const size_t at = static_cast<size_t>(i % 8);  // unaligned too
    PutU64(buffer + at, v);
    ASSERT_EQ(GetU64(buffer + at), v);
    uint64_t portable = 0;
    for (int j = 0; j < 8; ++j) portable = (portable << 8) | buffer[at + j];
    ASSERT_EQ(portable, v);
    PutU32(buffer + at, static_cast<uint32_t>(v));
    ASSERT_EQ(GetU32(buffer + at), static_cast<uint32_t>(v));
  }
}

TEST(Encoding, OrderedI64SortsBytewiseAsNumbers) {
  const std::vector<int64_t> values = {std::numeric_limits<int64_t>::min(), -1000000000000, -1, 0, 1, 255, 256,
                                       1700000000000, std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t a[8];
    PutOrderedI64(a, values[i]);
    EXPECT_EQ(GetOrderedI64(a), values[i]);
    if (i == 0) continue;
    uint8_t before[8];
    PutOrderedI64(before, values[i - 1]);
    EXPECT_LT(std::memcmp(before, a, 8), 0) << values[i - 1] << " vs " << values[i];
  }
}

}  // namespace
}  // namespace planb
