// ParsePlainIpv6 (host/reader/ipv6_text.h) beside inet_pton: whatever it reads, inet_pton reads to the same bytes;
// it reads every plain form (groups of one to four hex digits in any case, "::" anywhere); the forms it leaves to
// inet_pton are left, not misread. Addresses are generated (every compression of random groups) and mutated (a
// character inserted, removed or replaced).
#include "host/reader/ipv6_text.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace planb {
namespace {

// inet_pton's reading of `text`, as ParsePlainIpv6 gives it; false when it refuses the text.
bool Pton(const std::string& text, unsigned __int128* out) {
  uint8_t bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return false;
  unsigned __int128 a = 0;
  for (uint8_t b : bytes) a = (a << 8) | b;
  *out = a;
  return true;
}

// `v` (below 65536) as `digits` (1 to 4, at least what it needs) hex digits, in upper or lower case.
std::string Hex(unsigned v, unsigned digits, bool upper) {
  static const char* kLower = "0123456789abcdef";
  static const char* kUpper = "0123456789ABCDEF";
  // Lowest digit first, then reversed: no shift by a variable count (gcc 12's -fsanitize=shift at -O1 reports a
  // bogus exponent for the shift this loop first had).
  std::string s;
  for (unsigned d = 0; d < digits; ++d, v /= 16) s += (upper ? kUpper : kLower)[v % 16];
  return std::string(s.rbegin(), s.rend());
}

// Eight random groups written with random widths and case, and "::" in place of the run [from, to) when from < to.
std::string Write(const std::vector<unsigned>& groups, int from, int to, std::mt19937_64& random) {
  std::string s;
  for (int g = 0; g < 8; ++g) {
    if (g == from && from < to) {
      s += "::";
      g = to - 1;
      continue;
    }
    if (!s.empty() && s.back() != ':') s += ":";
    const unsigned v = groups[g];
    const unsigned needed = v > 0xFFF ? 4 : v > 0xFF ? 3 : v > 0xF ? 2 : 1;
    const unsigned digits = needed + static_cast<unsigned>(random() % (5 - needed));  // leading zeros up to four
    s += Hex(v, digits, random() % 2 == 0);
  }
  return s;
}

TEST(PlainIpv6, ReadsEveryPlainFormAsInetPtonDoes) {
  std::mt19937_64 random(3);
  size_t read = 0;
  for (int n = 0; n < 3000; ++n) {
    std::vector<unsigned> groups(8);
    for (unsigned& g : groups) g = random() % 4 == 0 ? 0 : static_cast<unsigned>(random() % 65536);
    const int from = static_cast<int>(random() % 9);
    const int to = from + static_cast<int>(random() % (9 - from));
    for (int zero = from; zero < to; ++zero) groups[zero] = random() % 8 == 0 ? groups[zero] : 0;
    const std::string text = Write(groups, from, to, random);
    unsigned __int128 expected = 0;
    unsigned __int128 got = 0;
    const bool pton = Pton(text, &expected);
    const bool plain = ParsePlainIpv6(text, &got);
    EXPECT_EQ(plain, pton) << text;  // every generated form is plain
    if (plain && pton) {
      EXPECT_TRUE(got == expected) << text;
      ++read;
    }
  }
  EXPECT_GT(read, 2500u);
  for (const char* text : {"::", "::1", "1::", "1::2", "0:0:0:0:0:0:0:0", "FFFF:ffff:FfFf:0:0:0:0:1", "2001:db8::"}) {
    unsigned __int128 a = 0;
    unsigned __int128 b = 0;
    ASSERT_TRUE(Pton(text, &a)) << text;
    ASSERT_TRUE(ParsePlainIpv6(text, &b)) << text;
    EXPECT_TRUE(a == b) << text;
  }
}

TEST(PlainIpv6, NeverReadsWhatInetPtonRefusesOrReadsOtherwise) {
  std::mt19937_64 random(4);
  const std::string alphabet = "0123456789abcdefABCDEFgG:.% \n";
  size_t read = 0;
  for (int n = 0; n < 20000; ++n) {
    std::vector<unsigned> groups(8);
    for (unsigned& g : groups) g = static_cast<unsigned>(random() % 65536);
    const int from = static_cast<int>(random() % 9);
    std::string text = Write(groups, from, from + static_cast<int>(random() % (9 - from)), random);
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      const size_t at = random() % (text.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          text.insert(at, 1, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    unsigned __int128 expected = 0;
    unsigned __int128 got = 0;
    const bool pton = Pton(text, &expected);
    if (ParsePlainIpv6(text, &got)) {
      EXPECT_TRUE(pton) << "read what inet_pton refuses: '" << text << "'";
      EXPECT_TRUE(got == expected) << text;
      ++read;
    }
  }
  for (const char* text : {"", ":", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":1::", "1::2:", "1::2::3",
                           "12345::", "1:2:3:4:5:6:7::8", "::ffff:1.2.3.4", "fe80::1%eth0", " ::1", "::1 ", "g::"}) {
    unsigned __int128 a = 0;
    unsigned __int128 b = 0;
    const bool plain = ParsePlainIpv6(text, &b);
    EXPECT_TRUE(!plain || (Pton(text, &a) && a == b)) << text;
  }
  unsigned __int128 a = 0;
  EXPECT_FALSE(ParsePlainIpv6("::ffff:1.2.3.4", &a)) << "embedded IPv4 is inet_pton's";
  ASSERT_TRUE(Pton("::ffff:1.2.3.4", &a)) << "inet_pton's form, left to it";
  EXPECT_FALSE(ParsePlainIpv6("1:2:3:4:5:6:7::8", &a)) << "'::' for no group at all";
  EXPECT_GT(read, 1000u) << "some edits leave a plain address (a digit replaced by a digit)";
}

}  // namespace
}  // namespace planb
