#include "host/query/expression.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "host/common/iso_time.h"
#include "tests/host/query/query_test_util.h"

namespace planb {
namespace {

using query_test::kAllFields;
using query_test::kRangedFields;
using query_test::kSessionFields;
using query_test::kStateFields;
using query_test::kTemporalFields;
using query_test::MustParse;
using query_test::ParseError;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k2024 = 1704067200000;  // 2024-01-01T00:00:00.000Z

Row TextRow(std::string_view key, std::string_view value = "", ValueType type = ValueType::kString) {
  Row row;
  row.key = Bytes(key);
  row.value = Bytes(value);
  row.value_type = type;
  return row;
}

Row NumberRow(int64_t from, int64_t to) {
  Row row;
  row.range_from = from;
  row.range_to = to;
  return row;
}

Row TimeRow(int64_t effective, int64_t start = 0, int64_t end = 0) {
  Row row;
  row.effective_time_ms = effective;
  row.session_start_ms = start;
  row.session_end_ms = end;
  return row;
}

template <size_t N>
bool Match(const std::string& text, const FieldSpec (&fields)[N], const Row& row) {
  auto e = MustParse(text, fields);
  return e != nullptr && e->Matches(row);
}

TEST(Expression, TextComparisons) {
  const Row b = TextRow("b");
  EXPECT_TRUE(Match("Key = 'b'", kStateFields, b));
  EXPECT_FALSE(Match("Key = 'a'", kStateFields, b));
  EXPECT_FALSE(Match("Key = 'B'", kStateFields, b));  // literals are case-sensitive
  EXPECT_TRUE(Match("Key != 'a'", kStateFields, b));
  EXPECT_TRUE(Match("Key <> 'a'", kStateFields, b));
  EXPECT_FALSE(Match("Key != 'b'", kStateFields, b));
  EXPECT_TRUE(Match("Key < 'c'", kStateFields, b));
  EXPECT_FALSE(Match("Key < 'b'", kStateFields, b));
  EXPECT_TRUE(Match("Key <= 'b'", kStateFields, b));
  EXPECT_FALSE(Match("Key <= 'a'", kStateFields, b));
  EXPECT_TRUE(Match("Key > 'a'", kStateFields, b));
  EXPECT_TRUE(Match("Key > 'B'", kStateFields, b));  // bytes: 'B' (0x42) < 'b' (0x62)
  EXPECT_FALSE(Match("Key > 'b'", kStateFields, b));
  EXPECT_TRUE(Match("Key >= 'b'", kStateFields, b));
  EXPECT_FALSE(Match("Key >= 'ba'", kStateFields, b));  // a prefix sorts first
  EXPECT_TRUE(Match("Key between 'a' and 'c'", kStateFields, b));
  EXPECT_TRUE(Match("Key between 'b' and 'b'", kStateFields, b));
  EXPECT_FALSE(Match("Key between 'c' and 'a'", kStateFields, b));
  EXPECT_FALSE(Match("Key between 'ba' and 'c'", kStateFields, b));
  EXPECT_TRUE(Match("Key in ('a', 'b')", kStateFields, b));
  EXPECT_TRUE(Match("Key in ('b')", kStateFields, b));
  EXPECT_FALSE(Match("Key in ('a', 'bb', '')", kStateFields, b));
  // Bytes above 0x7f sort after ASCII (unsigned, as memcmp and LMDB order them).
  EXPECT_TRUE(Match("Key > 'z'", kStateFields, TextRow("\xc3\xa9")));
  EXPECT_TRUE(Match("Key = ''", kStateFields, TextRow("")));
  EXPECT_TRUE(Match("Key < 'a'", kStateFields, TextRow("")));
  EXPECT_TRUE(Match("Key = 'it''s'", kStateFields, TextRow("it's")));
  EXPECT_TRUE(Match("Key = 'a b'", kStateFields, TextRow("a b")));
}

TEST(Expression, ContainsAndStartsWith) {
  const Row row = TextRow("user-42", "<a>hello world</a>", ValueType::kXmlFragment);
  EXPECT_TRUE(Match("Key contains '-4'", kStateFields, row));
  EXPECT_TRUE(Match("Key contains 'user-42'", kStateFields, row));
  EXPECT_TRUE(Match("Key contains ''", kStateFields, row));
  EXPECT_FALSE(Match("Key contains 'user-420'", kStateFields, row));
  EXPECT_FALSE(Match("Key contains 'USER'", kStateFields, row));
  EXPECT_TRUE(Match("Key startsWith 'user'", kStateFields, row));
  EXPECT_TRUE(Match("Key startsWith ''", kStateFields, row));
  EXPECT_TRUE(Match("Key startsWith 'user-42'", kStateFields, row));
  EXPECT_FALSE(Match("Key startsWith 'user-42-'", kStateFields, row));
  EXPECT_FALSE(Match("Key startsWith '42'", kStateFields, row));
  EXPECT_TRUE(Match("Value contains 'lo wo'", kStateFields, row));
  EXPECT_TRUE(Match("Value startsWith '<a>'", kStateFields, row));
  EXPECT_TRUE(Match("ValueType startsWith 'x'", kStateFields, row));
  // An empty key (a view with no data pointer): found by the query fuzzer once contains used memmem.
  const Row empty = TextRow("", "v", ValueType::kString);
  EXPECT_FALSE(Match("Key contains 'k'", kStateFields, empty));
  EXPECT_TRUE(Match("Key contains ''", kStateFields, empty));
  // Linear in the value and the needle: a long needle of repeats against a long value of repeats (minutes with
  // string_view::find) answers at once.
  const std::string long_key(1 << 18, 'a');  // the row points into it
  const std::string needle(1 << 16, 'a');
  const Row repeats = TextRow(long_key, "v", ValueType::kString);
  EXPECT_FALSE(Match("Key contains '" + needle + "b'", kStateFields, repeats));
  EXPECT_TRUE(Match("Key contains '" + needle + "'", kStateFields, repeats));
  EXPECT_TRUE(Match("ValueType contains 'm'", kStateFields, row));
}

TEST(Expression, ValueTypeComparesItsName) {
  const Row s = TextRow("k", "v", ValueType::kString);
  const Row x = TextRow("k", "<v/>", ValueType::kXmlFragment);
  EXPECT_TRUE(Match("ValueType = 'string'", kStateFields, s));
  EXPECT_FALSE(Match("ValueType = 'string'", kStateFields, x));
  EXPECT_TRUE(Match("ValueType = 'xml'", kStateFields, x));
  EXPECT_TRUE(Match("ValueType != 'xml'", kStateFields, s));
  EXPECT_TRUE(Match("ValueType in ('xml', 'other')", kRangedFields, x));
  EXPECT_TRUE(Match("ValueType < 'xml'", kTemporalFields, s));
  EXPECT_TRUE(Match("ValueType > 'string'", kTemporalFields, x));
  EXPECT_TRUE(Match("ValueType between 'a' and 'x'", kStateFields, s));
  EXPECT_FALSE(Match("ValueType between 'a' and 'x'", kStateFields, x));
  EXPECT_TRUE(Match("Value = '<v/>'", kStateFields, x));
  EXPECT_TRUE(Match("Value <= 'v'", kStateFields, s));
}

TEST(Expression, NumberComparisons) {
  const Row r = NumberRow(-5, 10);
  EXPECT_TRUE(Match("KeyStart = -5", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart = 5", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart != 5", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart != -5", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart < -4", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart < -5", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart <= -5", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart <= -6", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart > -6", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart > -5", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart >= -5", kRangedFields, r));
  EXPECT_FALSE(Match("KeyStart >= 0", kRangedFields, r));
  EXPECT_TRUE(Match("KeyEnd between 10 and 10", kRangedFields, r));
  EXPECT_TRUE(Match("KeyEnd between -100 and 100", kRangedFields, r));
  EXPECT_FALSE(Match("KeyEnd between 11 and 100", kRangedFields, r));
  EXPECT_FALSE(Match("KeyEnd between 100 and -100", kRangedFields, r));
  EXPECT_TRUE(Match("KeyEnd in (1, 10, 100)", kRangedFields, r));
  EXPECT_FALSE(Match("KeyEnd in (1, -10)", kRangedFields, r));
  // Numbers compare numerically, not as text: 9 < 10.
  EXPECT_FALSE(Match("KeyStart < 9", kRangedFields, NumberRow(10, 0)));
  EXPECT_TRUE(Match("KeyStart > 9", kRangedFields, NumberRow(10, 0)));
}

TEST(Expression, NumberExtremes) {
  const Row lo = NumberRow(kMin, kMax);
  EXPECT_TRUE(Match("KeyStart = -9223372036854775808", kRangedFields, lo));
  EXPECT_TRUE(Match("KeyEnd = 9223372036854775807", kRangedFields, lo));
  EXPECT_FALSE(Match("KeyStart < -9223372036854775808", kRangedFields, lo));
  EXPECT_TRUE(Match("KeyStart <= -9223372036854775808", kRangedFields, lo));
  EXPECT_FALSE(Match("KeyEnd > 9223372036854775807", kRangedFields, lo));
  EXPECT_TRUE(Match("KeyEnd >= 9223372036854775807", kRangedFields, lo));
  EXPECT_TRUE(Match("KeyStart between -9223372036854775808 and 9223372036854775807", kRangedFields, lo));
  EXPECT_TRUE(Match("KeyEnd between -9223372036854775808 and 9223372036854775807", kRangedFields, lo));
}

TEST(Expression, DateComparisons) {
  const int64_t t = k2024 + 8 * 3600000 + 10 * 60000 + 22023;  // 2024-01-01T08:10:22.023Z
  const Row r = TimeRow(t, t - 1000, t + 1000);
  EXPECT_TRUE(Match("EffectiveTime = '2024-01-01T08:10:22.023Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime = '2024-01-01T09:10:22.023+01:00'", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime = '2024-01-01T08:10:22Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime != '2024-01-01T08:10:22Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime > '2024-01-01'", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime < '2024-01-01'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime < '2024-01-01T08:10:22.024Z'", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime < '2024-01-01T08:10:22.023Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime <= '2024-01-01T08:10:22.023Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime >= '2024-01-01T08:10:22.023Z'", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime > '2024-01-01T08:10:22.023Z'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime between '2024-01-01' and '2024-01-02'", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime between '2024-01-02' and '2024-01-03'", kTemporalFields, r));
  EXPECT_TRUE(Match("EffectiveTime in ('2024-01-01', '2024-01-01T08:10:22.023Z')", kTemporalFields, r));
  EXPECT_FALSE(Match("EffectiveTime in ('2024-01-01')", kTemporalFields, r));
  EXPECT_TRUE(Match("Start = '2024-01-01T08:10:21.023Z' and End = '2024-01-01T08:10:23.023Z'", kSessionFields, r));
  EXPECT_TRUE(Match("Start < '2024-01-01T08:10:22Z' and End > '2024-01-01T08:10:23Z'", kSessionFields, r));
  EXPECT_FALSE(Match("Start >= '2024-01-01T08:10:22Z'", kSessionFields, r));
  EXPECT_TRUE(Match("End between '2024-01-01T08:10:23.023Z' and '2024-01-01T08:10:23.023Z'", kSessionFields, r));
  // Before the epoch.
  EXPECT_TRUE(Match("EffectiveTime < '1970-01-01'", kTemporalFields, TimeRow(-1)));
  EXPECT_TRUE(Match("EffectiveTime = '1969-12-31T23:59:59.999Z'", kTemporalFields, TimeRow(-1)));
}

TEST(Expression, Precedence) {
  // a: Key = 'a', b: Value = 'b', c: ValueType = 'xml'; rows for each combination.
  for (int bits = 0; bits < 8; ++bits) {
    const bool a = bits & 1, b = bits & 2, c = bits & 4;
    const Row row = TextRow(a ? "a" : "-", b ? "b" : "-", c ? ValueType::kXmlFragment : ValueType::kString);
    const std::string A = "Key = 'a'", B = "Value = 'b'", C = "ValueType = 'xml'";
    SCOPED_TRACE(bits);
    EXPECT_EQ(Match(A + " or " + B + " and " + C, kStateFields, row), a || (b && c));
    EXPECT_EQ(Match(A + " and " + B + " or " + C, kStateFields, row), (a && b) || c);
    EXPECT_EQ(Match("(" + A + " or " + B + ") and " + C, kStateFields, row), (a || b) && c);
    EXPECT_EQ(Match("not " + A + " and " + B, kStateFields, row), !a && b);
    EXPECT_EQ(Match("not " + A + " or " + B, kStateFields, row), !a || b);
    EXPECT_EQ(Match("not (" + A + " or " + B + ")", kStateFields, row), !(a || b));
    EXPECT_EQ(Match("not not " + A, kStateFields, row), a);
    EXPECT_EQ(Match("not " + A + " and not " + B + " or not " + C, kStateFields, row), (!a && !b) || !c);
    EXPECT_EQ(Match("((" + A + ")) and ((" + B + ") or (" + C + "))", kStateFields, row), a && (b || c));
    EXPECT_EQ(Match(A + " or " + B + " or " + C, kStateFields, row), a || b || c);
    EXPECT_EQ(Match(A + " and " + B + " and " + C, kStateFields, row), a && b && c);
  }
}

TEST(Expression, BetweenTakesOneAnd) {
  // `between 1 and 5 and ...`: the first `and` belongs to between, the second joins conditions.
  EXPECT_TRUE(Match("KeyStart between 1 and 5 and Value = 'x'", kRangedFields, [] {
    Row r = NumberRow(3, 0);
    r.value = Bytes(std::string_view("x"));
    return r;
  }()));
  EXPECT_FALSE(Match("KeyStart between 1 and 5 and Value = 'y'", kRangedFields, NumberRow(3, 0)));
  EXPECT_TRUE(Match("KeyStart between 1 and 5 or KeyEnd = 7", kRangedFields, NumberRow(9, 7)));
}

TEST(Expression, KeywordsAndFieldsIgnoreCase) {
  Row row = TextRow("k1", "hello", ValueType::kXmlFragment);
  row.range_from = 3;
  row.effective_time_ms = k2024;
  EXPECT_TRUE(Match("KEY = 'k1' AnD value STARTSWITH 'he' Or NOT keystart BETWEEN 1 AND 2", kAllFields, row));
  EXPECT_TRUE(Match("kEy In ('k1') aNd VALUE Contains 'ell' and effectivetime = '2024-01-01'", kAllFields, row));
  EXPECT_TRUE(Match("NOT key startswith 'x' AND keyStart BeTwEeN 3 AnD 3", kAllFields, row));
  EXPECT_TRUE(Match("valuetype = 'xml'", kAllFields, row));
  EXPECT_FALSE(Match("valuetype = 'XML'", kAllFields, row));
}

TEST(Expression, WhitespaceIsFree) {
  const Row r = NumberRow(3, 4);
  EXPECT_TRUE(Match("KeyStart>=3 and KeyEnd<=4", kRangedFields, r));
  EXPECT_TRUE(Match("(KeyStart>=3)and(KeyEnd<=4)", kRangedFields, r));
  EXPECT_TRUE(Match("\tKeyStart\n=\r3 ", kRangedFields, r));
  EXPECT_TRUE(Match("KeyStart in(3,4)and KeyEnd in ( 4 )", kRangedFields, r));
}

TEST(Expression, FieldsAreReadOnlyForThisMap) {
  // A field another store type has is unknown here.
  EXPECT_EQ(ParseError("KeyStart = 1", kStateFields),
            "--where: column 1: unknown field 'KeyStart' (fields: Key, ValueType, Value)");
  EXPECT_EQ(ParseError("EffectiveTime = '2024-01-01'", kSessionFields),
            "--where: column 1: unknown field 'EffectiveTime' (fields: Key, Start, End)");
}

TEST(Expression, NoFieldsAtAll) {
  std::unique_ptr<Expression> e;
  Status s = Expression::Parse("Key = 'a'", nullptr, 0, &e);
  EXPECT_EQ(s.message(), "--where: column 1: unknown field 'Key' (this map has no fields)");
}

}  // namespace
}  // namespace planb
