// KeyStart / KeyEnd as IP addresses (FieldKind::kAddress, what the host makes of them for key_format ipv4/ip maps):
// parsing quoted address literals, matching rows by their 16-byte addresses, and the address bounds a scan gets.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "host/query/expression.h"
#include "planb/ip_address.h"
#include "tests/host/query/query_test_util.h"

namespace planb {
namespace {

using query_test::MustParse;
using query_test::ParseError;

constexpr FieldSpec kAddressFields[] = {
    {"KeyStart", FieldKind::kAddress, RowField::kKeyStart},
    {"KeyEnd", FieldKind::kAddress, RowField::kKeyEnd},
    {"Value", FieldKind::kText, RowField::kValue},
};

ip::Address A(const char* text) {
  ip::Address a;
  bool v4 = false;
  EXPECT_EQ(ip::ParseAddress(text, &a, &v4), nullptr) << text;
  return a;
}

Row RangeRow(const char* from, const char* to) {
  Row row;
  row.has_addresses = true;
  std::memcpy(row.address_from, A(from).bytes, 16);
  std::memcpy(row.address_to, A(to).bytes, 16);
  return row;
}

std::string Text(const uint8_t* bytes) {
  ip::Address a;
  std::memcpy(a.bytes, bytes, 16);
  char out[ip::kMaxText];
  return std::string(out, ip::Format(a, out));
}

// "[min, max]" of the address bounds of `where`, "none" without.
std::string AddressBounds(const std::string& where) {
  auto e = MustParse(where, kAddressFields);
  if (!e) return "parse error";
  const ScanBounds b = e->Bounds();
  if (b.has_number_bounds || b.has_time_bounds) return "other bounds";
  if (!b.has_address_bounds) return "none";
  return "[" + Text(b.address_min) + ", " + Text(b.address_max) + "]";
}

TEST(AddressQuery, MatchesInAddressOrder) {
  const Row ten = RangeRow("10.0.0.0", "10.255.255.255");
  const Row doc = RangeRow("2001:db8::", "2001:db8::ffff");
  const auto matches = [](const std::string& where, const Row& row) {
    auto e = MustParse(where, kAddressFields);
    return e && e->Matches(row);
  };
  EXPECT_TRUE(matches("KeyStart = '10.0.0.0'", ten));
  EXPECT_TRUE(matches("KeyStart = '::ffff:10.0.0.0'", ten));  // the same address
  EXPECT_FALSE(matches("KeyStart = '10.0.0.1'", ten));
  EXPECT_TRUE(matches("KeyStart < '2001:db8::'", ten));  // IPv4 (mapped) sorts below 2000::/3
  EXPECT_FALSE(matches("KeyStart < '2001:db8::'", doc));
  EXPECT_TRUE(matches("KeyStart <= '2001:db8::' and KeyEnd >= '2001:db8::1'", doc));
  EXPECT_TRUE(matches("KeyEnd between '10.0.0.0' and '10.255.255.255'", ten));
  EXPECT_TRUE(matches("KeyStart in ('1.1.1.1', '2001:DB8::')", doc));
  EXPECT_TRUE(matches("KeyStart != '2001:db8::1'", doc));
  EXPECT_TRUE(matches("not KeyStart > '10.0.0.0'", ten));
}

TEST(AddressQuery, RefusesWhatIsNotAnAddress) {
  EXPECT_NE(ParseError("KeyStart = '10.0.0'", kAddressFields).find("'10.0.0' is not an IP address"),
            std::string::npos);
  EXPECT_NE(ParseError("KeyStart = '10.0.0.0/8'", kAddressFields).find("is not an IP address"), std::string::npos);
  EXPECT_NE(ParseError("KeyStart = 167772160", kAddressFields).find("write addresses quoted"), std::string::npos);
  EXPECT_NE(ParseError("KeyStart contains '10.'", kAddressFields).find("KeyStart is an IP address"),
            std::string::npos);
  EXPECT_NE(ParseError("KeyStart = ", kAddressFields).find("expected an IP address"), std::string::npos);
}

TEST(AddressQuery, KeyStartAndKeyEndBoundTheScan) {
  EXPECT_EQ(AddressBounds("KeyStart >= '10.0.0.0'"), "[10.0.0.0, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
  EXPECT_EQ(AddressBounds("KeyStart >= '10.0.0.0' and KeyStart < '11.0.0.0'"), "[10.0.0.0, 10.255.255.255]");
  EXPECT_EQ(AddressBounds("KeyStart > '::' and KeyStart <= '::2'"), "[::1, ::2]");
  EXPECT_EQ(AddressBounds("KeyStart between '::1' and '::5' and KeyStart in ('::3', '::9')"), "[::3, ::5]");
  EXPECT_EQ(AddressBounds("KeyStart = '2001:db8::'"), "[2001:db8::, 2001:db8::]");
  // An upper bound on the end bounds the start.
  EXPECT_EQ(AddressBounds("KeyStart <= '10.1.2.3' and KeyEnd >= '10.1.2.3'"), "[::, 10.1.2.3]");
  EXPECT_EQ(AddressBounds("KeyEnd < '10.0.0.0'"), "[::, 9.255.255.255]");
  EXPECT_EQ(AddressBounds("KeyEnd >= '10.0.0.0'"), "none");
  EXPECT_EQ(AddressBounds("KeyStart != '10.0.0.0'"), "none");
  EXPECT_EQ(AddressBounds("KeyStart = '10.0.0.0' or KeyStart = '11.0.0.0'"), "none");
  // Nothing is below :: or above the last address: min > max, read no rows.
  for (const char* empty : {"KeyStart < '::'", "KeyStart > 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'",
                            "KeyStart > '10.0.0.0' and KeyStart < '9.0.0.0'"}) {
    auto e = MustParse(empty, kAddressFields);
    ASSERT_TRUE(e);
    const ScanBounds b = e->Bounds();
    ASSERT_TRUE(b.has_address_bounds) << empty;
    EXPECT_GT(std::memcmp(b.address_min, b.address_max, 16), 0) << empty;
  }
}

}  // namespace
}  // namespace planb
