// Issue 11, defect 13: upload and snapshot tokens were 64 bits from an mt19937_64 seeded with 32 bits (about 4e9
// possible sequences, so a peer could replay the generator). They are 128 bits from getrandom(2) now.
#include "host/transfer/token.h"

#include <gtest/gtest.h>

#include <set>

namespace planb {
namespace {

TEST(Token, RandomTokensAreDistinctAndUseBothHalves) {
  std::set<Token> seen;
  bool high_top_bit = false;
  bool low_top_bit = false;
  for (int i = 0; i < 1000; ++i) {
    const Token token = Token::Random();
    EXPECT_TRUE(seen.insert(token).second) << token.Hex();
    high_top_bit |= (token.high >> 63) != 0;
    low_top_bit |= (token.low >> 63) != 0;
  }
  // Each is false for 1000 random draws with probability 2^-1000: a half left at zero would show.
  EXPECT_TRUE(high_top_bit);
  EXPECT_TRUE(low_top_bit);
}

TEST(Token, HexIsThirtyTwoDigitsHighHalfFirst) {
  EXPECT_EQ(Token(0x0123456789abcdefull, 0xabull).Hex(), "0123456789abcdef00000000000000ab");
  EXPECT_EQ(Token(0x0123456789abcdefull, 0xabull).Shown(), "01234567...");  // what logs and errors show
  EXPECT_EQ(Token().Hex(), std::string(32, '0'));
}

TEST(Token, OrderAndEqualityUseBothHalves) {
  EXPECT_LT(Token(0, ~0ull), Token(1, 0));
  EXPECT_NE(Token(1, 2), Token(2, 1));
  EXPECT_EQ(Token(1, 2), Token(1, 2));
}

}  // namespace
}  // namespace planb
