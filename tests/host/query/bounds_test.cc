// Expression::Bounds() (host/query/bounds.cc): what the top-level AND-ed conditions imply for a scan.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "host/query/expression.h"
#include "tests/host/query/query_test_util.h"

namespace planb {
namespace {

using query_test::kAllFields;
using query_test::MustParse;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k2024 = 1704067200000;  // 2024-01-01T00:00:00.000Z
constexpr int64_t kDay = 86400000;

// The bounds of `text`, with `key` cleared: its view would outlive the expression (see KeyOf).
ScanBounds BoundsOf(const std::string& text) {
  auto e = MustParse(text, kAllFields);
  ScanBounds b = e ? e->Bounds() : ScanBounds{};
  b.key = Bytes();
  return b;
}

// The exact key `text` implies, copied while the expression lives; "<none>" without one.
std::string KeyOf(const std::string& text) {
  auto e = MustParse(text, kAllFields);
  return e && e->Bounds().has_key ? std::string(e->Bounds().key.view()) : "<none>";
}

bool NoBounds(const ScanBounds& b) { return !b.has_key && !b.has_number_bounds && !b.has_time_bounds; }

::testing::AssertionResult NumberBounds(const std::string& text, int64_t lo, int64_t hi) {
  const ScanBounds b = BoundsOf(text);
  if (!b.has_number_bounds) return ::testing::AssertionFailure() << text << ": no number bounds";
  if (b.number_min != lo || b.number_max != hi) {
    return ::testing::AssertionFailure() << text << ": [" << b.number_min << ", " << b.number_max << "]";
  }
  if (b.has_key || b.has_time_bounds) return ::testing::AssertionFailure() << text << ": other bounds too";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TimeBounds(const std::string& text, int64_t lo, int64_t hi) {
  const ScanBounds b = BoundsOf(text);
  if (!b.has_time_bounds) return ::testing::AssertionFailure() << text << ": no time bounds";
  if (b.time_min != lo || b.time_max != hi) {
    return ::testing::AssertionFailure() << text << ": [" << b.time_min << ", " << b.time_max << "]";
  }
  if (b.has_key || b.has_number_bounds) return ::testing::AssertionFailure() << text << ": other bounds too";
  return ::testing::AssertionSuccess();
}

TEST(Bounds, ExactKey) {
  auto e = MustParse("Key = 'user''s key'", kAllFields);
  const ScanBounds b = e->Bounds();
  ASSERT_TRUE(b.has_key);
  EXPECT_EQ(b.key.view(), "user's key");
  EXPECT_FALSE(b.has_number_bounds);
  EXPECT_FALSE(b.has_time_bounds);
  EXPECT_EQ(KeyOf("Key in ('k')"), "k");
  EXPECT_EQ(KeyOf("Value = 'v' and KEY = 'k'"), "k");
  EXPECT_EQ(KeyOf("Key = ''"), "");
}

TEST(Bounds, KeyConditionsThatAreNotExact) {
  for (const char* text :
       {"Key != 'k'", "Key < 'k'", "Key <= 'k'", "Key > 'k'", "Key >= 'k'", "Key between 'a' and 'a'",
        "Key in ('a', 'b')", "Key startsWith 'k'", "Key contains 'k'", "Value = 'k'", "ValueType = 'xml'"}) {
    EXPECT_TRUE(NoBounds(BoundsOf(text))) << text;
  }
}

TEST(Bounds, KeyPrefixIsTheLongestTopLevelStartsWith) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Key startsWith 'ab'", "ab"},
      {"Key startsWith 'ab' and Value = 'v'", "ab"},
      {"Key startsWith 'a' and Key startsWith 'abc'", "abc"},
      {"Key startsWith 'it''s'", "it's"},
      {"Key startsWith ''", ""},
      {"Key startsWith 'ab' or Value = 'v'", ""},  // an or says nothing about every row
      {"not Key startsWith 'ab'", ""},
      {"Value startsWith 'ab'", ""},
      {"Key contains 'ab'", ""},
  };
  for (const auto& [text, prefix] : cases) {
    auto e = MustParse(text, kAllFields);
    EXPECT_EQ(e->KeyPrefix(), prefix) << text;
  }
}

TEST(Bounds, TwoDifferentKeysKeepTheFirstAndMatchNothing) {
  auto e = MustParse("Key = 'a' and Key = 'b'", kAllFields);
  EXPECT_EQ(e->Bounds().key.view(), "a");
  Row row;
  row.key = Bytes(std::string_view("a"));
  EXPECT_FALSE(e->Matches(row));
  row.key = Bytes(std::string_view("b"));
  EXPECT_FALSE(e->Matches(row));
}

TEST(Bounds, KeyStartComparisons) {
  EXPECT_TRUE(NumberBounds("KeyStart = 5", 5, 5));
  EXPECT_TRUE(NumberBounds("KeyStart = -5", -5, -5));
  EXPECT_TRUE(NumberBounds("KeyStart < 5", kMin, 4));
  EXPECT_TRUE(NumberBounds("KeyStart <= 5", kMin, 5));
  EXPECT_TRUE(NumberBounds("KeyStart > 5", 6, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart >= 5", 5, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart between -1 and 9", -1, 9));
  EXPECT_TRUE(NumberBounds("KeyStart in (3, -1, 7)", -1, 7));
  EXPECT_TRUE(NumberBounds("KeyStart in (3)", 3, 3));
  EXPECT_TRUE(NoBounds(BoundsOf("KeyStart != 5")));
  // A range starts at or before its end: an upper bound on KeyEnd bounds KeyStart; a lower one says nothing.
  EXPECT_TRUE(NumberBounds("KeyEnd = 5", kMin, 5));
  EXPECT_TRUE(NumberBounds("KeyEnd between 1 and 2", kMin, 2));
  EXPECT_TRUE(NumberBounds("KeyStart <= 7 and KeyEnd >= 7", kMin, 7));
  EXPECT_TRUE(NoBounds(BoundsOf("KeyEnd >= 5")));
}

TEST(Bounds, KeyStartAtTheInt64Edges) {
  EXPECT_TRUE(NumberBounds("KeyStart <= -9223372036854775808", kMin, kMin));
  EXPECT_TRUE(NumberBounds("KeyStart >= 9223372036854775807", kMax, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart < 9223372036854775807", kMin, kMax - 1));
  EXPECT_TRUE(NumberBounds("KeyStart > -9223372036854775808", kMin + 1, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart > 9223372036854775806", kMax, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart < -9223372036854775807", kMin, kMin));
  // Nothing is below the minimum or above the maximum: empty (min > max), not wrapped around.
  const ScanBounds below = BoundsOf("KeyStart < -9223372036854775808");
  EXPECT_TRUE(below.has_number_bounds);
  EXPECT_GT(below.number_min, below.number_max);
  const ScanBounds above = BoundsOf("KeyStart > 9223372036854775807");
  EXPECT_TRUE(above.has_number_bounds);
  EXPECT_GT(above.number_min, above.number_max);
  // An empty condition keeps the intersection empty whatever comes after it.
  const ScanBounds still = BoundsOf("KeyStart < -9223372036854775808 and KeyStart >= -9223372036854775808");
  EXPECT_GT(still.number_min, still.number_max);
}

TEST(Bounds, ConditionsIntersect) {
  EXPECT_TRUE(NumberBounds("KeyStart > 1 and KeyStart <= 9 and KeyStart between 0 and 5", 2, 5));
  EXPECT_TRUE(NumberBounds("KeyStart >= 1 and not KeyStart = 3", 1, kMax));
  EXPECT_TRUE(NumberBounds("KeyStart in (1, 5, 9) and KeyStart < 7", 1, 6));
  EXPECT_TRUE(NumberBounds("(KeyStart >= 0 and KeyStart <= 10) and (KeyStart >= 5 and KeyEnd = 1)", 5, 1));
  const ScanBounds empty = BoundsOf("KeyStart > 5 and KeyStart < 3");
  EXPECT_TRUE(empty.has_number_bounds);
  EXPECT_EQ(empty.number_min, 6);
  EXPECT_EQ(empty.number_max, 2);
  const ScanBounds reversed = BoundsOf("KeyStart between 9 and 1");
  EXPECT_TRUE(reversed.has_number_bounds);
  EXPECT_GT(reversed.number_min, reversed.number_max);
  EXPECT_GT(BoundsOf("KeyStart = 1 and KeyStart = 2").number_min, BoundsOf("KeyStart = 1 and KeyStart = 2").number_max);
}

TEST(Bounds, Times) {
  EXPECT_TRUE(TimeBounds("EffectiveTime = '2024-01-01'", k2024, k2024));
  EXPECT_TRUE(TimeBounds("EffectiveTime < '2024-01-01'", kMin, k2024 - 1));
  EXPECT_TRUE(TimeBounds("EffectiveTime <= '2024-01-01'", kMin, k2024));
  EXPECT_TRUE(TimeBounds("EffectiveTime > '2024-01-01'", k2024 + 1, kMax));
  EXPECT_TRUE(TimeBounds("EffectiveTime >= '2024-01-01'", k2024, kMax));
  EXPECT_TRUE(TimeBounds("EffectiveTime between '2024-01-01' and '2024-01-02'", k2024, k2024 + kDay));
  EXPECT_TRUE(TimeBounds("EffectiveTime in ('2024-01-02', '2024-01-01')", k2024, k2024 + kDay));
  EXPECT_TRUE(TimeBounds("Start >= '2024-01-01' and Start < '2024-01-02'", k2024, k2024 + kDay - 1));
  EXPECT_TRUE(TimeBounds("Start > '2024-01-01' and EffectiveTime < '2024-01-02'", k2024 + 1, k2024 + kDay - 1));
  EXPECT_TRUE(NoBounds(BoundsOf("EffectiveTime != '2024-01-01'")));
  EXPECT_TRUE(NoBounds(BoundsOf("End >= '2024-01-01'")));  // only an upper bound on End bounds Start
  const ScanBounds empty = BoundsOf("EffectiveTime > '2024-01-02' and EffectiveTime < '2024-01-01'");
  EXPECT_TRUE(empty.has_time_bounds);
  EXPECT_GT(empty.time_min, empty.time_max);
}

TEST(Bounds, AllThreeAtOnce) {
  const ScanBounds b = BoundsOf(
      "Value contains 'x' and Key = 'k' and (KeyStart between 1 and 10 and EffectiveTime >= '2024-01-01') and "
      "KeyStart != 4 and (Value = 'a' or KeyStart = 100)");
  EXPECT_EQ(KeyOf("Value contains 'x' and Key = 'k' and (KeyStart between 1 and 10)"), "k");
  EXPECT_TRUE(b.has_key);
  ASSERT_TRUE(b.has_number_bounds);
  EXPECT_EQ(b.number_min, 1);
  EXPECT_EQ(b.number_max, 10);
  ASSERT_TRUE(b.has_time_bounds);
  EXPECT_EQ(b.time_min, k2024);
  EXPECT_EQ(b.time_max, kMax);
}

TEST(Bounds, NothingFromOrOrNot) {
  for (const char* text : {
           "Key = 'a' or Key = 'b'",
           "Key = 'a' or Value = 'x'",
           "KeyStart = 1 or KeyStart = 2",
           "KeyStart between 1 and 5 or KeyStart between 2 and 3",
           "EffectiveTime > '2024-01-01' or Value = 'x'",
           "not Key = 'a'",
           "not Key != 'a'",
           "not KeyStart < 5",
           "not (KeyStart = 1 and Key = 'a')",
           "not not KeyStart = 1",
           "(Key = 'a' and KeyStart = 1) or (Key = 'a' and KeyStart = 2)",
           "Key = 'a' and KeyStart = 1 or Start = '2024-01-01'",
       }) {
    EXPECT_TRUE(NoBounds(BoundsOf(text))) << text;
  }
  // An or beside the conjunction's other members takes nothing away from them.
  const ScanBounds b = BoundsOf("Key = 'a' and (KeyStart = 1 or KeyStart = 2) and not Start = '2024-01-01'");
  EXPECT_TRUE(b.has_key);
  EXPECT_FALSE(b.has_number_bounds);
  EXPECT_FALSE(b.has_time_bounds);
}

TEST(Bounds, SingleParenthesizedCondition) {
  EXPECT_TRUE(NumberBounds("((KeyStart = 3))", 3, 3));
  EXPECT_TRUE(BoundsOf("(Key = 'k')").has_key);
}

}  // namespace
}  // namespace planb
