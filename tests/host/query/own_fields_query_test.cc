// `--where` on fields of a store type's own (RowField::kOwn, SDK 7.1) of every kind: literals, errors, matching,
// and that such fields filter but never narrow a scan.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "host/query/lexer.h"
#include "tests/host/query/query_test_util.h"

namespace planb {
namespace {

using query_test::MustParse;
using query_test::ParseError;

// As the "scores" test fixture declares them (tests/fixtures/own_fields.cc), with a standard date field beside.
constexpr FieldSpec kScores[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup | kFieldZeroWhenAbsent},
    {"Ratio", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Active", FieldKind::kBool, RowField::kOwn},
    {"Seen", FieldKind::kDate, RowField::kOwn},
    {"Note", FieldKind::kText, RowField::kOwn},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
};

struct ScoresRow {
  FieldValue own[7];
  Row row;
  ScoresRow(int64_t count, double ratio, bool active, int64_t seen, const char* note) {
    own[1].number = count;
    own[2].real = ratio;
    own[3].flag = active;
    own[4].number = seen;
    own[5].text = Bytes(std::string_view(note));
    row.key = Bytes(std::string_view("k"));
    row.own_fields = own;
    row.own_field_count = 7;
  }
};

bool Matches(const std::string& where, const Row& row) { return MustParse(where, kScores)->Matches(row); }

TEST(OwnFieldsQuery, EveryKindFilters) {
  const ScoresRow r(3, 0.25, true, 1704067200000, "hello");
  EXPECT_TRUE(Matches("Count = 3", r.row));
  EXPECT_FALSE(Matches("Count > 3", r.row));
  EXPECT_TRUE(Matches("Ratio = 0.25 and Ratio < 1 and Ratio > -1.5e3 and Ratio between 0 and 0.3", r.row));
  EXPECT_FALSE(Matches("Ratio > 0.5", r.row));
  EXPECT_TRUE(Matches("Ratio >= 2.5e-1 and Ratio in (1, 0.25)", r.row));
  EXPECT_FALSE(Matches("Ratio > 0", ScoresRow(3, 0, true, 0, "").row));
  EXPECT_TRUE(Matches("Active = true and not Active = false and Active != FALSE and Active in (true)", r.row));
  EXPECT_FALSE(Matches("Active = true", ScoresRow(3, 0.25, false, 0, "").row));
  EXPECT_TRUE(Matches("Seen = '2024-01-01' and Seen < '2024-01-01T00:00:00.001Z'", r.row));
  EXPECT_TRUE(Matches("Note contains 'ell' and Note startsWith 'he' and Note > 'a'", r.row));
  EXPECT_FALSE(Matches("Note = 'x'", r.row));
}

TEST(OwnFieldsQuery, AnIntegerLiteralComparesWithADoubleExactly) {
  EXPECT_TRUE(Matches("Ratio = 11498.189", ScoresRow(0, 11498.189, false, 0, "").row));
  EXPECT_FALSE(Matches("Ratio = 11498.188999999", ScoresRow(0, 11498.189, false, 0, "").row));
  EXPECT_TRUE(Matches("Ratio = 2 and Ratio = 2.0 and Ratio = 2e0", ScoresRow(0, 2, false, 0, "").row));
  EXPECT_TRUE(Matches("Ratio < -9223372036854775808", ScoresRow(0, -1e300, false, 0, "").row));
}

TEST(OwnFieldsQuery, ARowWithoutTheArrayReadsZeroValues) {
  Row row;  // a plugin built before 7.1 fills nothing; an absent entry is its kind's zero
  row.key = Bytes(std::string_view("k"));
  EXPECT_TRUE(Matches("Count = 0 and Ratio = 0 and Active = false and Seen = '1970-01-01' and Note = ''", row));
}

TEST(OwnFieldsQuery, ANanFromAPluginEqualsNothing) {
  const ScoresRow r(0, std::numeric_limits<double>::quiet_NaN(), false, 0, "");
  EXPECT_FALSE(Matches("Ratio = 0", r.row));
  EXPECT_FALSE(Matches("Ratio < 0 or Ratio >= 0 or Ratio between -1 and 1 or Ratio in (0)", r.row));
  EXPECT_TRUE(Matches("Ratio != 0", r.row));
}

TEST(OwnFieldsQuery, OwnFieldsNeverNarrow) {
  const ScanBounds b = MustParse("Count = 3 and Seen >= '2024-01-01' and Note = 'x' and Ratio < 1", kScores)->Bounds();
  EXPECT_FALSE(b.has_key);
  EXPECT_FALSE(b.has_number_bounds);
  EXPECT_FALSE(b.has_time_bounds);
  // The standard fields beside them still do.
  const ScanBounds c = MustParse("Key = 'a' and EffectiveTime >= '2024-01-01' and Seen < '2000-01-01'", kScores)->Bounds();
  EXPECT_TRUE(c.has_key);
  EXPECT_TRUE(c.has_time_bounds);
  EXPECT_EQ(c.time_min, 1704067200000);
}

TEST(OwnFieldsQuery, Errors) {
  EXPECT_EQ(ParseError("Active = 'x'", kScores),
            "--where: column 10: Active is a boolean; 'x' is text (write true or false, unquoted)");
  EXPECT_EQ(ParseError("Active = 1", kScores), "--where: column 10: Active is a boolean; 1 is a number (write true or false)");
  EXPECT_EQ(ParseError("Active = yes", kScores), "--where: column 10: expected true or false after '=', found 'yes'");
  EXPECT_EQ(ParseError("Active < true", kScores),
            "--where: column 8: Active is a boolean: only =, != and in apply to it, not '<'");
  EXPECT_EQ(ParseError("Active between false and true", kScores),
            "--where: column 8: Active is a boolean: only =, != and in apply to it, not 'between'");
  EXPECT_EQ(ParseError("Ratio > 'x'", kScores), "--where: column 9: Ratio is a decimal number; 'x' is text");
  EXPECT_EQ(ParseError("Ratio > nan", kScores),
            "--where: column 9: expected a number (e.g. 0.25 or -1.5e3) after '>', found 'nan'");
  EXPECT_EQ(ParseError("Ratio > inf", kScores),
            "--where: column 9: expected a number (e.g. 0.25 or -1.5e3) after '>', found 'inf'");
  EXPECT_EQ(ParseError("Ratio > 1e999", kScores),
            "--where: column 9: number 1e999 is out of range (decimal numbers are doubles)");
  EXPECT_EQ(ParseError("Ratio > 1.", kScores), "--where: column 9: bad number '1.'");
  EXPECT_EQ(ParseError("Ratio > 1.5e", kScores), "--where: column 9: bad number '1.5e'");
  EXPECT_EQ(ParseError("Ratio > 1.5.2", kScores), "--where: column 9: bad number '1.5.2'");
  EXPECT_EQ(ParseError("Ratio > 1.5x", kScores), "--where: column 9: bad number '1.5x'");
  EXPECT_EQ(ParseError("Count > 0.5", kScores),
            "--where: column 9: Count is a number; 0.5 is a decimal number (a whole number is needed)");
  EXPECT_EQ(ParseError("Seen > 5", kScores),
            "--where: column 8: Seen is a date; 5 is a number (write dates quoted, e.g. '2024-01-01T08:10:22.023Z')");
  EXPECT_EQ(ParseError("Note = 1.5", kScores),
            "--where: column 8: Note is text; 1.5 is a decimal number (quote text: '1.5')");
  EXPECT_EQ(ParseError("Count contains 'x'", kScores), "--where: column 7: contains applies to text fields; Count is a number");
  EXPECT_EQ(ParseError("Active startsWith 't'", kScores),
            "--where: column 8: startsWith applies to text fields; Active is a boolean");
}

TEST(OwnFieldsQuery, DecimalTokens) {
  std::vector<query::Token> t;
  ASSERT_TRUE(query::Tokenize("0.25 -1.5e3 2E+2 7", &t).ok());
  ASSERT_EQ(t.size(), 5u);
  EXPECT_TRUE(t[0].decimal);
  EXPECT_EQ(t[0].real, 0.25);
  EXPECT_EQ(t[1].real, -1500);
  EXPECT_EQ(t[2].real, 200);
  EXPECT_EQ(t[2].source, "2E+2");
  EXPECT_FALSE(t[3].decimal);
  EXPECT_EQ(t[3].number, 7);
  EXPECT_EQ(t[3].real, 7);
}

}  // namespace
}  // namespace planb
