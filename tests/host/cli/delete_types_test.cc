// Deletion batches on every key scheme (State maps, with and without value_dedup) and on every other store type,
// through the real binary: the rows named go, the others stay and still look up, and the deleted keys load again
// (the scheme's tables keep no stale entry).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/scheme_matrix.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::ReferenceData;
using testing::SortedCsvColumn;
using testing::TimedRef;
using Strings = std::vector<std::string>;

// A value over 16 bytes (value_dedup stores it in the value table); `n` values shared by several keys.
std::string Value(int n) { return "a value long enough to be deduplicated #" + std::to_string(n % 4); }

class DeleteSchemesTest : public ::testing::TestWithParam<SchemeParam> {};

TEST_P(DeleteSchemesTest, DeletedKeysGoOthersStayAndDeletedKeysLoadAgain) {
  const SchemeParam& p = GetParam();
  CliEnv env("[map.m]\ntype = state\nscheme = " + std::string(p.scheme) + "\n" + p.ConfigLines());
  std::string body;
  for (int k = 0; k < 40; ++k) body += testing::Ref("m", "key" + std::to_string(k), Value(k)) + "\n";
  ASSERT_EQ(env.Load({env.Write("a.xml", ReferenceData(body))}).exit_code, 0);

  // key1 and key10..key19 (startsWith), key2..key4, and Value #2 (keys 2, 6, 10, ...).
  const ProcessResult r =
      env.Run({"delete", "m", "--where",
               "Key startsWith 'key1' or Key in ('key2', 'key3', 'key4') or Value = '" + Value(2) + "'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Strings expected;
  for (int k = 0; k < 40; ++k) {
    const std::string key = "key" + std::to_string(k);
    const bool gone = k == 1 || (k >= 10 && k <= 19) || (k >= 2 && k <= 4) || k % 4 == 2;
    const ProcessResult lookup = env.Lookup("m", key);
    EXPECT_EQ(lookup.exit_code, gone ? 1 : 0) << key << ": " << lookup.err;
    if (!gone) {
      EXPECT_EQ(lookup.out, Value(k) + "\n") << key;
      expected.push_back(key);
    }
  }
  const ProcessResult query = env.Run({"query", "m", "--format", "csv"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(SortedCsvColumn(query.out, "Key"), expected);

  // The deleted keys come back with new values; the kept ones keep theirs.
  std::string again;
  for (int k = 10; k < 20; ++k) again += testing::Ref("m", "key" + std::to_string(k), "back") + "\n";
  ASSERT_EQ(env.Load({env.Write("b.xml", ReferenceData(again))}).exit_code, 0);
  EXPECT_EQ(env.Lookup("m", "key13").out, "back\n");
  EXPECT_EQ(env.Lookup("m", "key5").out, Value(5) + "\n");

  // --all leaves nothing, and the map loads again from empty.
  ASSERT_EQ(env.Run({"delete", "m", "--all"}).exit_code, 0);
  EXPECT_EQ(env.Run({"query", "m", "--format", "csv"}).out, "Key,ValueType,Value\n");
  ASSERT_EQ(env.Load({env.Write("c.xml", ReferenceData(testing::Ref("m", "key1", Value(1))))}).exit_code, 0);
  EXPECT_EQ(env.Lookup("m", "key1").out, Value(1) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Schemes, DeleteSchemesTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

struct TypeCase {
  const char* map;     // of kTypedMapsConfig
  Strings rows;        // loaded
  const char* where;   // deletes exactly one of them
  const char* column;  // identifies the rows in query csv
  Strings remaining;   // of `column`, sorted
};

class DeleteTypesTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(DeleteTypesTest, DeletesTheRowsNamedAndKeepsTheOthers) {
  const TypeCase& t = GetParam();
  CliEnv env(testing::kTypedMapsConfig);
  ASSERT_EQ(env.Load({env.Write("a.xml", ReferenceData(testing::Lines(t.rows)))}).exit_code, 0);
  const ProcessResult r = env.Run({"delete", t.map, "--where", t.where});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("1 row deleted"));
  const ProcessResult query = env.Run({"query", t.map, "--format", "csv"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(SortedCsvColumn(query.out, t.column), t.remaining);
}

const TypeCase kTypeCases[] = {
    {"tm_hashed",
     {TimedRef("tm_hashed", "2024-01-01T00:00:00Z", "a", "1"), TimedRef("tm_hashed", "2024-02-01T00:00:00Z", "a", "2"),
      TimedRef("tm_hashed", "2024-01-01T00:00:00Z", "b", "3")},
     "Key = 'a' and EffectiveTime < '2024-01-15'",
     "Value",
     {"2", "3"}},
    {"rg",
     {testing::RangeRef("rg", "", "1", "10", "x"), testing::RangeRef("rg", "", "20", "30", "y")},
     "KeyStart = 20",
     "Value",
     {"x"}},
    {"trg",
     {testing::RangeRef("trg", "2024-01-01T00:00:00Z", "1", "10", "x"),
      testing::RangeRef("trg", "2024-03-01T00:00:00Z", "1", "10", "z")},
     "EffectiveTime >= '2024-02-01'",
     "Value",
     {"x"}},
    {"ss_hashed",
     {testing::SessionEvent("ss_hashed", "a", "2024-01-01T00:00:00Z", "10m"),
      testing::SessionEvent("ss_hashed", "b", "2024-01-01T00:00:00Z", "10m")},
     "Key = 'b'",
     "Key",
     {"a"}},
};

std::string TypeCaseName(const ::testing::TestParamInfo<TypeCase>& info) { return info.param.map; }

INSTANTIATE_TEST_SUITE_P(Types, DeleteTypesTest, ::testing::ValuesIn(kTypeCases), TypeCaseName);

}  // namespace
}  // namespace planb
