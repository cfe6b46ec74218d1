#include "planb/ip_address.h"

#include <gtest/gtest.h>

#include <string>

namespace planb::ip {
namespace {

std::string Text(const Address& a) {
  char out[kMaxText];
  const size_t n = Format(a, out);
  return std::string(out, n);
}

std::string RoundTrip(std::string_view text) {
  Address a;
  bool v4 = false;
  const char* why = ParseAddress(text, &a, &v4);
  return why == nullptr ? Text(a) : std::string("error: ") + why;
}

TEST(IpAddress, ParsesIpv4AsMapped) {
  Address a;
  bool v4 = false;
  ASSERT_EQ(ParseAddress("10.1.2.3", &a, &v4), nullptr);
  EXPECT_TRUE(v4);
  EXPECT_TRUE(IsMapped(a));
  EXPECT_EQ(Ipv4Of(a), 0x0a010203u);
  EXPECT_EQ(Text(a), "10.1.2.3");
  EXPECT_EQ(RoundTrip("0.0.0.0"), "0.0.0.0");
  EXPECT_EQ(RoundTrip("255.255.255.255"), "255.255.255.255");
}

TEST(IpAddress, ParsesEveryIpv6Form) {
  EXPECT_EQ(RoundTrip("::"), "::");
  EXPECT_EQ(RoundTrip("::1"), "::1");
  EXPECT_EQ(RoundTrip("2001:db8::"), "2001:db8::");
  EXPECT_EQ(RoundTrip("2001:0DB8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
  EXPECT_EQ(RoundTrip("2001:DB8::A"), "2001:db8::a");
  EXPECT_EQ(RoundTrip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  // A mapped address is IPv4 however it was written.
  Address a;
  bool v4 = true;
  ASSERT_EQ(ParseAddress("::ffff:1.2.3.4", &a, &v4), nullptr);
  EXPECT_FALSE(v4);
  EXPECT_EQ(Text(a), "1.2.3.4");
  Address b;
  ASSERT_EQ(ParseAddress("1.2.3.4", &b, &v4), nullptr);
  EXPECT_EQ(a, b);
}

TEST(IpAddress, ParsesBlocks) {
  Block b;
  ASSERT_EQ(ParseBlock("10.0.0.0/8", &b), nullptr);
  EXPECT_TRUE(b.ipv4);
  EXPECT_EQ(Text(b.first), "10.0.0.0");
  EXPECT_EQ(Text(b.last), "10.255.255.255");
  ASSERT_EQ(ParseBlock("0.0.0.0/0", &b), nullptr);
  EXPECT_EQ(Text(b.first), "0.0.0.0");
  EXPECT_EQ(Text(b.last), "255.255.255.255");
  ASSERT_EQ(ParseBlock("1.2.3.4/32", &b), nullptr);
  EXPECT_EQ(Text(b.first), "1.2.3.4");
  EXPECT_EQ(Text(b.last), "1.2.3.4");
  ASSERT_EQ(ParseBlock("1.2.3.4", &b), nullptr);
  EXPECT_EQ(b.first, b.last);
  ASSERT_EQ(ParseBlock("2001:db8::/32", &b), nullptr);
  EXPECT_FALSE(b.ipv4);
  EXPECT_EQ(Text(b.first), "2001:db8::");
  EXPECT_EQ(Text(b.last), "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
  ASSERT_EQ(ParseBlock("::/0", &b), nullptr);
  EXPECT_EQ(Text(b.first), "::");
  EXPECT_EQ(Text(b.last), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  ASSERT_EQ(ParseBlock("2001:db8::1/128", &b), nullptr);
  EXPECT_EQ(b.first, b.last);
}

TEST(IpAddress, RefusesHostBitsAfterThePrefix) {
  Block b;
  EXPECT_STREQ(ParseBlock("10.0.0.1/8", &b), "has host bits set after the prefix length");
  EXPECT_STREQ(ParseBlock("2001:db8::1/32", &b), "has host bits set after the prefix length");
}

TEST(IpAddress, RefusesMalformedText) {
  Block b;
  for (const char* bad : {"1.2.3", "256.1.1.1", ":::", "", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4x", "01.2.3.4",
                          "1.2.3.4.5", "2001:db8::g", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", "abc"}) {
    EXPECT_STREQ(ParseBlock(bad, &b), "is not an IP address") << "'" << bad << "'";
  }
  EXPECT_STREQ(ParseBlock("1.2.3.4/33", &b), "has a prefix length over 32");
  EXPECT_STREQ(ParseBlock("2001:db8::/129", &b), "has a prefix length over 128");
  for (const char* bad : {"1.2.3.4/", "1.2.3.4/x", "1.2.3.4/ 8", "1.2.3.4/08", "1.2.3.4/8/8", "::/1000"}) {
    EXPECT_STREQ(ParseBlock(bad, &b), "has no valid prefix length after '/'") << "'" << bad << "'";
  }
  EXPECT_STREQ(ParseBlock(std::string_view("1.2.3.4\0", 8), &b), "is not an IP address");
  EXPECT_STREQ(ParseBlock(std::string(100, '1'), &b), "is not an IP address");
}

TEST(IpAddress, DecimalIpv4) {
  uint32_t v = 1;
  EXPECT_TRUE(ParseDecimalIpv4("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseDecimalIpv4("4294967295", &v));
  EXPECT_EQ(v, 4294967295u);
  EXPECT_TRUE(ParseDecimalIpv4("16777216", &v));
  EXPECT_EQ(v, 16777216u);
  for (const char* bad : {"", "4294967296", "-1", "+1", "1.5", "99999999999", " 1"}) {
    EXPECT_FALSE(ParseDecimalIpv4(bad, &v)) << bad;
  }
}

}  // namespace
}  // namespace planb::ip
