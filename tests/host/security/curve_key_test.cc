#include "host/security/curve_key.h"

#include <zmq.h>

#include <string>

#include <gtest/gtest.h>

namespace planb {
namespace {

TEST(CurveKey, LibzmqHasCurve) { EXPECT_TRUE(RequireCurve().ok()); }

TEST(CurveKey, GeneratesValidPairsWhosePublicKeyDerives) {
  CurveKeyPair a;
  CurveKeyPair b;
  ASSERT_TRUE(GenerateKeyPair(&a).ok());
  ASSERT_TRUE(GenerateKeyPair(&b).ok());
  EXPECT_NE(a.secret_key, b.secret_key);
  for (const CurveKeyPair* pair : {&a, &b}) {
    EXPECT_TRUE(IsValidZ85Key(pair->public_key)) << pair->public_key;
    EXPECT_TRUE(IsValidZ85Key(pair->secret_key));
    std::string derived;
    ASSERT_TRUE(DerivePublicKey(pair->secret_key, &derived).ok());
    EXPECT_EQ(derived, pair->public_key);
  }
}

TEST(CurveKey, AcceptsEveryZ85Character) {
  // ZeroMQ's own test vector (RFC 32 / Z85): a real key using '#', '=', '[', ']' and friends.
  EXPECT_TRUE(IsValidZ85Key("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"));
  EXPECT_TRUE(IsValidZ85Key("JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"));
  EXPECT_TRUE(IsValidZ85Key(std::string(40, '0')));
  // Each special character as the last of every 5-character group (a value below 85: always in range).
  for (char c : std::string(".-:+=^!/*?&<>()[]{}@%$#")) {
    std::string key;
    for (int group = 0; group < 8; ++group) key += std::string("0000") + c;
    EXPECT_TRUE(IsValidZ85Key(key)) << key;
  }
}

TEST(CurveKey, RefusesMalformedKeysSayingWhy) {
  EXPECT_EQ(Z85KeyProblem(""), "is 0 characters, not a Z85 key of 40");
  EXPECT_EQ(Z85KeyProblem(std::string(39, '0')), "is 39 characters, not a Z85 key of 40");
  EXPECT_EQ(Z85KeyProblem(std::string(41, '0')), "is 41 characters, not a Z85 key of 40");
  for (char bad : {' ', ',', ';', '"', '\'', '\\', '_', '|', '~', '`', '\n', '\0'}) {
    std::string key(40, 'a');
    key[7] = bad;
    EXPECT_EQ(Z85KeyProblem(key), "has a character outside the Z85 alphabet at position 8") << int(bad);
    EXPECT_FALSE(IsValidZ85Key(key));
  }
  // "#####" is 84 * (85^4 + ... + 1) = 85^5 - 1 > 2^32 - 1: valid characters, no 32-bit value.
  const std::string overflow = "#####" + std::string(35, '0');
  EXPECT_EQ(Z85KeyProblem(overflow), "is not valid Z85 (a group encodes more than 32 bits)");
  EXPECT_FALSE(IsValidZ85Key(overflow));
  std::string derived;
  EXPECT_FALSE(DerivePublicKey(overflow, &derived).ok());
}

}  // namespace
}  // namespace planb
