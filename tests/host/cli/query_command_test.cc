// `planb query MAP [--where EXPR] [--format table|csv|json] [--limit N] [--explain]` through the real binary:
// the fields of each store type, the three formats, --limit, every --where operator, and --explain proving that a
// condition on the leading key part narrows the LMDB range scanned while any other condition scans every row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/scheme_matrix.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::CsvColumn;
using ::testing::HasSubstr;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ParseCsv;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::RowsExamined;
using testing::SessionEvent;
using testing::SortedCsvColumn;
using testing::TimedRef;
using Strings = std::vector<std::string>;

void Load(const CliEnv& env, const std::string& name, const Strings& elements) {
  const ProcessResult r = env.Load({env.Write(name, ReferenceData(Lines(elements)))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

ProcessResult Query(const CliEnv& env, const std::string& map, const Strings& options) {
  Strings args{"query", map};
  args.insert(args.end(), options.begin(), options.end());
  return env.Run(args);
}

// The sorted values of `column` in the rows of `map` matching `where`.
Strings Where(const CliEnv& env, const std::string& map, const std::string& where, const std::string& column) {
  const ProcessResult r = Query(env, map, {"--where", where, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << where << ": " << r.err;
  EXPECT_EQ(r.err, "") << where;
  if (r.exit_code != 0) return {};
  return SortedCsvColumn(r.out, column);
}

// Rows printed by a csv query, whatever the type (the header line excluded).
size_t CsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> records;
  EXPECT_TRUE(ParseCsv(csv, &records)) << csv;
  return records.empty() ? 0 : records.size() - 1;
}

// --explain: stderr must say whether the scan was narrowed, and report the rows examined.
struct Explained {
  bool narrowed = false;
  bool full_scan = false;
  int64_t examined = -1;
  size_t printed = 0;  // rows on stdout
  std::string err;
};

Explained Explain(const CliEnv& env, const std::string& map, const std::string& where) {
  const ProcessResult r = Query(env, map, {"--where", where, "--format", "csv", "--explain"});
  Explained e;
  EXPECT_EQ(r.exit_code, 0) << where << ": " << r.err;
  e.err = r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("scan: ")) << where;
  e.narrowed = r.err.find("(narrowed)") != std::string::npos;
  e.full_scan = r.err.find("full scan") != std::string::npos;
  e.examined = RowsExamined(r.err);
  if (r.exit_code == 0) e.printed = CsvRows(r.out);
  return e;
}

// ---- fields and formats ----

// One row in every map of kTypedMapsConfig.
void LoadOneRowEach(const CliEnv& env) {
  Load(env, "one.xml",
       {TimedRef("st_hashed", "", "k", "v"), TimedRef("st_direct", "", "k", "v"),
        TimedRef("tm_hashed", "2024-01-01T08:10:22.023Z", "k", "v"),
        TimedRef("tm_direct", "2024-01-01T08:10:22.023Z", "k", "v"), RangeRef("rg", "", "-5", "7", "v"),
        RangeRef("trg", "2024-01-01T08:10:22.023Z", "-5", "7", "v"),
        SessionEvent("ss_hashed", "k", "2024-01-01T08:10:22.023Z", "15m"),
        SessionEvent("ss_direct", "k", "2024-01-01T08:10:22.023Z", "15m")});
}

struct TypeFields {
  std::string map;
  Strings fields;
  std::string row;  // the csv line LoadOneRowEach gives
};

const std::vector<TypeFields>& FieldsPerType() {
  static const std::vector<TypeFields> all = {
      {"st_hashed", {"Key", "ValueType", "Value"}, "k,string,v"},
      {"st_direct", {"Key", "ValueType", "Value"}, "k,string,v"},
      {"tm_hashed", {"Key", "EffectiveTime", "ValueType", "Value"}, "k,2024-01-01T08:10:22.023Z,string,v"},
      {"tm_direct", {"Key", "EffectiveTime", "ValueType", "Value"}, "k,2024-01-01T08:10:22.023Z,string,v"},
      {"rg", {"KeyStart", "KeyEnd", "ValueType", "Value"}, "-5,7,string,v"},
      {"trg", {"KeyStart", "KeyEnd", "EffectiveTime", "ValueType", "Value"}, "-5,7,2024-01-01T08:10:22.023Z,string,v"},
      {"ss_hashed", {"Key", "Start", "End"}, "k,2024-01-01T08:10:22.023Z,2024-01-01T08:25:22.023Z"},
      {"ss_direct", {"Key", "Start", "End"}, "k,2024-01-01T08:10:22.023Z,2024-01-01T08:25:22.023Z"},
  };
  return all;
}

std::string Join(const Strings& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

TEST(CliQuery, CsvPrintsTheFieldsOfEachTypeAsHeaderThenOneLinePerRow) {
  CliEnv env(kTypedMapsConfig);
  LoadOneRowEach(env);
  for (const TypeFields& t : FieldsPerType()) {
    const ProcessResult r = Query(env, t.map, {"--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << t.map << ": " << r.err;
    EXPECT_EQ(r.out, Join(t.fields, ",") + "\n" + t.row + "\n") << t.map;
    EXPECT_EQ(r.err, "") << t.map;
  }
}

TEST(CliQuery, TablePrintsTheFieldsOfEachTypeWithSeparatorAndRowCount) {
  CliEnv env(kTypedMapsConfig);
  LoadOneRowEach(env);
  for (const TypeFields& t : FieldsPerType()) {
    const ProcessResult r = Query(env, t.map, {});
    EXPECT_EQ(r.exit_code, 0) << t.map << ": " << r.err;
    std::vector<std::string> lines;
    std::string line;
    for (char c : r.out) {
      if (c == '\n') {
        lines.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
    ASSERT_EQ(lines.size(), 4u) << t.map << ":\n" << r.out;
    Strings header;
    for (size_t at = 0, next; at != std::string::npos; at = next == std::string::npos ? next : next + 3) {
      next = lines[0].find(" | ", at);
      std::string cell = lines[0].substr(at, next == std::string::npos ? std::string::npos : next - at);
      header.push_back(cell.substr(0, cell.find_last_not_of(' ') + 1));
    }
    EXPECT_EQ(header, t.fields) << t.map;
    EXPECT_TRUE(std::regex_match(lines[1], std::regex("-+(-\\+--+)*"))) << lines[1];
    // The last column is not padded: the separator is as long as the longer of the header and the row.
    EXPECT_EQ(lines[1].size(), std::max(lines[0].size(), lines[2].size())) << t.map << ":\n" << r.out;
    EXPECT_EQ(lines[3], "(1 row)") << t.map;
  }
}

TEST(CliQuery, TableAlignsColumnsAndCountsRows) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "table.xml", {TimedRef("st_direct", "", "aa", "x"), TimedRef("st_direct", "", "bb", "yyyy")});
  ProcessResult r = Query(env, "st_direct", {"--format", "table"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Key | ValueType | Value\n"
            "----+-----------+------\n"
            "aa  | string    | x\n"
            "bb  | string    | yyyy\n"
            "(2 rows)\n");
  r = Query(env, "st_direct", {"--where", "Key = 'none'"});
  EXPECT_EQ(r.out,
            "Key | ValueType | Value\n"
            "----+-----------+------\n"
            "(0 rows)\n");
}

TEST(CliQuery, TableShowsLineBreaksInsideAValueAsSpaces) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "lines.xml", {TimedRef("st_direct", "", "k", "one\ntwo")});
  const ProcessResult r = Query(env, "st_direct", {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("k   | string    | one two\n"));
  EXPECT_THAT(r.out, HasSubstr("(1 row)\n"));
}

TEST(CliQuery, CsvQuotesCommasQuotesAndLineBreaksPerRfc4180) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "quoting.xml",
       {TimedRef("st_hashed", "", "comma,key", "a,b"), TimedRef("st_hashed", "", "quote", "say \"hi\""),
        TimedRef("st_hashed", "", "newline", "line1\nline2"), TimedRef("st_hashed", "", "cr", "a&#13;b"),
        TimedRef("st_hashed", "", "plain", "nothing special")});
  const ProcessResult r = Query(env, "st_hashed", {"--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"comma,key\",string,\"a,b\"\n"));
  EXPECT_THAT(r.out, HasSubstr("quote,string,\"say \"\"hi\"\"\"\n"));
  EXPECT_THAT(r.out, HasSubstr("newline,string,\"line1\nline2\"\n"));
  EXPECT_THAT(r.out, HasSubstr("cr,string,\"a\rb\"\n"));
  EXPECT_THAT(r.out, HasSubstr("plain,string,nothing special\n"));
  std::vector<std::vector<std::string>> records;
  ASSERT_TRUE(ParseCsv(r.out, &records)) << r.out;
  ASSERT_EQ(records.size(), 6u) << r.out;
  std::map<std::string, std::string> values;
  for (size_t i = 1; i < records.size(); ++i) {
    ASSERT_EQ(records[i].size(), 3u) << "row " << i;
    values[records[i][0]] = records[i][2];
  }
  EXPECT_EQ(values["comma,key"], "a,b");
  EXPECT_EQ(values["quote"], "say \"hi\"");
  EXPECT_EQ(values["newline"], "line1\nline2");
  EXPECT_EQ(values["cr"], "a\rb");
  EXPECT_EQ(values["plain"], "nothing special");
}

TEST(CliQuery, JsonIsAnArrayOfObjectsWithTheTypesFieldsInOrder) {
  CliEnv env(kTypedMapsConfig);
  LoadOneRowEach(env);
  const std::regex iso("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
  for (const TypeFields& t : FieldsPerType()) {
    const ProcessResult r = Query(env, t.map, {"--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << t.map << ": " << r.err;
    const nlohmann::ordered_json json = nlohmann::ordered_json::parse(r.out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << t.map << ": not JSON:\n" << r.out;
    ASSERT_TRUE(json.is_array()) << r.out;
    ASSERT_EQ(json.size(), 1u) << r.out;
    const auto& row = json[0];
    ASSERT_TRUE(row.is_object()) << r.out;
    Strings names;
    for (const auto& item : row.items()) names.push_back(item.key());
    EXPECT_EQ(names, t.fields) << t.map;
    for (const std::string& field : t.fields) {
      if (field == "KeyStart" || field == "KeyEnd") {
        EXPECT_TRUE(row[field].is_number_integer()) << t.map << " " << field << ": " << row[field].dump();
      } else {
        EXPECT_TRUE(row[field].is_string()) << t.map << " " << field << ": " << row[field].dump();
      }
      if (field == "EffectiveTime" || field == "Start" || field == "End") {
        EXPECT_TRUE(std::regex_match(row[field].get<std::string>(), iso)) << row[field];
      }
    }
    if (t.map == "rg" || t.map == "trg") {
      EXPECT_EQ(row["KeyStart"].get<int64_t>(), -5);
      EXPECT_EQ(row["KeyEnd"].get<int64_t>(), 7);
    }
    if (row.contains("EffectiveTime")) {
      EXPECT_EQ(row["EffectiveTime"], "2024-01-01T08:10:22.023Z");
    }
    if (row.contains("Start")) {
      EXPECT_EQ(row["Start"], "2024-01-01T08:10:22.023Z");
      EXPECT_EQ(row["End"], "2024-01-01T08:25:22.023Z");
    }
    if (row.contains("Value")) {
      EXPECT_EQ(row["ValueType"], "string");
      EXPECT_EQ(row["Value"], "v");
    }
  }
}

TEST(CliQuery, JsonKeepsTextAndXmlValuesIntact) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "values.xml",
       {TimedRef("st_direct", "", "text", "say \"hi\",\nback\\slash"),
        TimedRef("st_direct", "", "xml", "<x:c xmlns:x=\"urn:x\">Paris</x:c>"),
        RangeRef("rg", "", "-9223372036854775808", "9223372036854775807", "all")});
  ProcessResult r = Query(env, "st_direct", {"--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << r.out;
  ASSERT_EQ(json.size(), 2u);
  for (const auto& row : json) {
    if (row["Key"] == "text") {
      EXPECT_EQ(row["ValueType"], "string");
      EXPECT_EQ(row["Value"], "say \"hi\",\nback\\slash");
    } else {
      EXPECT_EQ(row["Key"], "xml");
      EXPECT_EQ(row["ValueType"], "xml");
      EXPECT_EQ(row["Value"], "<x:c xmlns:x=\"urn:x\">Paris</x:c>");
    }
  }
  r = Query(env, "rg", {"--format", "json"});
  const nlohmann::json ranges = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(ranges.is_array()) << r.out;
  EXPECT_EQ(ranges[0]["KeyStart"].get<int64_t>(), INT64_MIN);
  EXPECT_EQ(ranges[0]["KeyEnd"].get<int64_t>(), INT64_MAX);
}

TEST(CliQuery, EmptyResultsInEachFormat) {
  CliEnv env(kTypedMapsConfig);
  LoadOneRowEach(env);
  ProcessResult r = Query(env, "tm_direct", {"--where", "Key = 'nothing'", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(json.is_array() && json.empty()) << r.out;
  r = Query(env, "tm_direct", {"--where", "Key = 'nothing'", "--format", "csv"});
  EXPECT_EQ(r.out, "Key,EffectiveTime,ValueType,Value\n");
}

TEST(CliQuery, LimitPrintsAtMostNRows) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (int i = 0; i < 5; ++i)
    elements.push_back(TimedRef("st_direct", "", "k" + std::to_string(i), i % 2 ? "odd" : "even"));
  Load(env, "five.xml", elements);
  ProcessResult r = Query(env, "st_direct", {"--format", "csv", "--limit", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CsvRows(r.out), 2u) << r.out;
  r = Query(env, "st_direct", {"--limit", "2"});
  EXPECT_THAT(r.out, ::testing::EndsWith("(2 rows)\n"));
  r = Query(env, "st_direct", {"--limit=1", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).size(), 1u) << r.out;
  r = Query(env, "st_direct", {"--format", "csv", "--limit", "100"});
  EXPECT_EQ(CsvRows(r.out), 5u) << r.out;
  // The limit counts matching rows, not rows examined.
  r = Query(env, "st_direct", {"--where", "Value = 'odd'", "--format", "csv", "--limit", "2"});
  EXPECT_EQ(CsvColumn(r.out, "Value"), (Strings{"odd", "odd"})) << r.out;
  r = Query(env, "st_direct", {"--where", "Value = 'odd'", "--format", "csv", "--limit", "5"});
  EXPECT_EQ(CsvRows(r.out), 2u) << r.out;
}

// ---- --where operators ----

void LoadFruit(const CliEnv& env) {
  Load(env, "fruit.xml",
       {TimedRef("st_direct", "", "apple", "red"), TimedRef("st_direct", "", "banana", "yellow"),
        TimedRef("st_direct", "", "cherry", "red"), TimedRef("st_direct", "", "date", "it's brown"),
        TimedRef("st_direct", "", "elder", "<x:c xmlns:x=\"urn:x\">xml</x:c>")});
}

TEST(CliQuery, WhereAppliesEveryOperatorToText) {
  CliEnv env(kTypedMapsConfig);
  LoadFruit(env);
  const std::vector<std::pair<std::string, Strings>> cases = {
      {"Key = 'apple'", {"apple"}},
      {"Key != 'apple'", {"banana", "cherry", "date", "elder"}},
      {"Key <> 'apple'", {"banana", "cherry", "date", "elder"}},
      {"Key < 'banana'", {"apple"}},
      {"Key <= 'banana'", {"apple", "banana"}},
      {"Key > 'cherry'", {"date", "elder"}},
      {"Key >= 'cherry'", {"cherry", "date", "elder"}},
      {"Key between 'b' and 'd'", {"banana", "cherry"}},
      {"Key between 'banana' and 'date'", {"banana", "cherry", "date"}},
      {"Key in ('apple', 'date', 'zzz')", {"apple", "date"}},
      {"Value contains 'ell'", {"banana"}},
      {"Key startsWith 'ch'", {"cherry"}},
      {"Value = 'it''s brown'", {"date"}},
      {"Value = 'red' and Key != 'apple'", {"cherry"}},
      {"Value = 'red' or Value = 'yellow'", {"apple", "banana", "cherry"}},
      {"not Value = 'red'", {"banana", "date", "elder"}},
      {"Key = 'apple' or Key = 'banana' and Value = 'red'", {"apple"}},  // and binds tighter than or
      {"(Key = 'apple' or Key = 'banana') and Value = 'yellow'", {"banana"}},
      {"not (Key = 'apple' or Value = 'red')", {"banana", "date", "elder"}},
      {"ValueType = 'xml'", {"elder"}},
      {"valuetype IN ('string') AND NOT key STARTSWITH 'a'", {"banana", "cherry", "date"}},
      {"Value contains 'nothing'", {}},
      {"Key = 'apple' and Key = 'banana'", {}},
  };
  for (const auto& [where, keys] : cases) EXPECT_EQ(Where(env, "st_direct", where, "Key"), keys) << where;
}

TEST(CliQuery, WhereComparesNumbersOnRangedMaps) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "numbers.xml",
       {RangeRef("rg", "", "1", "10", "a"), RangeRef("rg", "", "5", "50", "b"), RangeRef("rg", "", "-20", "-10", "c"),
        TimedRef("rg", "", "100", "d")});
  const std::vector<std::pair<std::string, Strings>> cases = {
      {"KeyStart = 5", {"b"}},
      {"KeyStart != 5", {"a", "c", "d"}},
      {"KeyEnd < 0", {"c"}},
      {"KeyEnd <= 10", {"a", "c"}},
      {"KeyStart > 1", {"b", "d"}},
      {"KeyStart >= 1", {"a", "b", "d"}},
      {"KeyStart between -20 and 5", {"a", "b", "c"}},
      {"KeyStart in (1, 100, 7)", {"a", "d"}},
      {"KeyStart = -20 and KeyEnd = -10", {"c"}},
      {"KeyStart <= 5 and KeyEnd >= 5", {"a", "b"}},  // the ranges holding 5
      {"KeyStart > 5 and KeyStart < 3", {}},
  };
  for (const auto& [where, values] : cases) EXPECT_EQ(Where(env, "rg", where, "Value"), values) << where;
}

TEST(CliQuery, WhereComparesDatesOnTemporalAndSessionMaps) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "dates.xml",
       {TimedRef("tm_hashed", "2024-01-01T00:00:00.000Z", "k", "jan"),
        TimedRef("tm_hashed", "2024-02-01T00:00:00.000Z", "k", "feb"),
        TimedRef("tm_hashed", "2024-03-01T00:00:00.000Z", "j", "mar"),
        RangeRef("trg", "2024-01-01T00:00:00.000Z", "1", "2", "jan"),
        RangeRef("trg", "2024-02-01T00:00:00.000Z", "1", "2", "feb"),
        SessionEvent("ss_hashed", "a", "2024-01-01T10:00:00.000Z", "1h"),
        SessionEvent("ss_hashed", "b", "2024-01-01T10:30:00.000Z", "1h")});
  const std::vector<std::pair<std::string, Strings>> temporal = {
      {"EffectiveTime = '2024-02-01T00:00:00.000Z'", {"feb"}},
      {"EffectiveTime != '2024-02-01T00:00:00Z'", {"jan", "mar"}},
      {"EffectiveTime < '2024-02-01'", {"jan"}},
      {"EffectiveTime >= '2024-02-01T00:00:00Z'", {"feb", "mar"}},
      {"EffectiveTime between '2024-01-15' and '2024-02-15'", {"feb"}},
      {"EffectiveTime in ('2024-01-01', '2024-03-01T00:00:00.000Z')", {"jan", "mar"}},
      {"Key = 'k' and EffectiveTime > '2024-01-01T00:00:00.000Z'", {"feb"}},
  };
  for (const auto& [where, values] : temporal) EXPECT_EQ(Where(env, "tm_hashed", where, "Value"), values) << where;
  EXPECT_EQ(Where(env, "trg", "EffectiveTime <= '2024-01-31T23:59:59.999Z'", "Value"), Strings{"jan"});
  EXPECT_EQ(Where(env, "ss_hashed", "Start <= '2024-01-01T10:00:00Z'", "Key"), Strings{"a"});
  EXPECT_EQ(Where(env, "ss_hashed", "End > '2024-01-01T11:00:00Z'", "Key"), Strings{"b"});
  EXPECT_EQ(Where(env, "ss_hashed", "End >= '2024-01-01T11:00:00Z'", "Key"), (Strings{"a", "b"}));
  EXPECT_EQ(Where(env, "ss_hashed", "Key = 'a' and End = '2024-01-01T11:00:00.000Z'", "Key"), Strings{"a"});
}

// ---- narrowing, proven with --explain ----

TEST(CliQuery, AnExactKeyOnAStateMapExaminesOnlyThatKeysRow) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (int i = 0; i < 50; ++i) {
    const std::string key = "key" + std::to_string(100 + i);
    elements.push_back(TimedRef("st_direct", "", key, "v" + std::to_string(i)));
    elements.push_back(TimedRef("st_hashed", "", key, "v" + std::to_string(i)));
  }
  Load(env, "keys.xml", elements);
  for (const std::string map : {"st_direct", "st_hashed"}) {
    for (const std::string where : {"Key = 'key117'", "Key in ('key117')", "Key = 'key117' and Value != 'x'"}) {
      const Explained e = Explain(env, map, where);
      EXPECT_TRUE(e.narrowed) << map << " " << where << ": " << e.err;
      EXPECT_EQ(e.examined, 1) << map << " " << where << ": " << e.err;
      EXPECT_EQ(e.printed, 1u) << map << " " << where;
    }
    const Explained absent = Explain(env, map, "Key = 'key999'");
    EXPECT_LE(absent.examined, 1) << map << ": " << absent.err;
    EXPECT_EQ(absent.printed, 0u) << map;
  }
}

// Issue 12: every scheme narrows a scan by an exact key, on every text-key store type, keys longer than LMDB's
// key limit included where the scheme takes them (all but direct).
TEST(CliQuery, AnExactKeyNarrowsTheScanOnEveryScheme) {
  CliEnv env(SchemeMapSections("st", "state") + SchemeMapSections("tm", "temporal") +
             SchemeMapSections("ss", "session"));
  const std::string long_key(600, 'L');
  Strings elements;
  std::vector<std::pair<std::string, bool>> maps;  // name, takes long keys
  for (const auto& [prefix, type] : {std::pair<std::string, std::string>{"st", "state"}, {"tm", "temporal"},
                                     {"ss", "session"}}) {
    const Strings names = SchemeMapNames(prefix);
    for (size_t i = 0; i < names.size(); ++i) {
      const bool long_keys = std::string(kSchemeMatrix[i].scheme) != "direct";
      maps.emplace_back(names[i], long_keys);
      for (int k = 0; k < 30; ++k) {
        const std::string key = "key" + std::to_string(100 + k);
        elements.push_back(type == "session" ? SessionEvent(names[i], key, "2024-01-01T00:00:00Z", "15m")
                                             : TimedRef(names[i], type == "state" ? "" : "2024-01-01T00:00:00Z",
                                                        key, std::string(k % 2 == 0 ? 30 : 3, 'v')));
      }
      if (long_keys) {
        elements.push_back(type == "session" ? SessionEvent(names[i], long_key, "2024-01-01T00:00:00Z", "15m")
                                             : TimedRef(names[i], type == "state" ? "" : "2024-01-01T00:00:00Z",
                                                        long_key, "long"));
      }
    }
  }
  Load(env, "keys.xml", elements);
  for (const auto& [map, long_keys] : maps) {
    const Explained e = Explain(env, map, "Key = 'key117'");
    EXPECT_TRUE(e.narrowed) << map << ": " << e.err;
    EXPECT_EQ(e.examined, 1) << map << ": " << e.err;
    EXPECT_EQ(e.printed, 1u) << map;
    if (long_keys) {
      const Explained l = Explain(env, map, "Key = '" + long_key + "'");
      EXPECT_TRUE(l.narrowed) << map << ": " << l.err;
      EXPECT_EQ(l.examined, 1) << map << ": " << l.err;
      EXPECT_EQ(l.printed, 1u) << map;
    }
  }
}

// `Key startsWith` narrows only where LMDB keys are the keys (direct on a state map, with or without
// value_dedup); elsewhere --explain says which scheme keeps it from narrowing.
TEST(CliQuery, KeyStartsWithSaysWhichSchemeCannotNarrow) {
  CliEnv env(SchemeMapSections("st", "state") + SchemeMapSections("tm", "temporal"));
  Strings elements;
  for (int k = 0; k < 20; ++k) {
    for (const std::string& map : SchemeMapNames("st")) elements.push_back(TimedRef(map, "", "p" + std::to_string(k), "v"));
  }
  elements.push_back(TimedRef("tm_direct", "2024-01-01T00:00:00Z", "p1", "v"));
  Load(env, "keys.xml", elements);
  const Strings names = SchemeMapNames("st");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string scheme = kSchemeMatrix[i].scheme;
    const Explained e = Explain(env, names[i], "Key startsWith 'p1'");
    EXPECT_EQ(e.printed, 11u) << names[i];  // p1, p10..p19
    if (scheme == "direct") {
      EXPECT_TRUE(e.narrowed) << names[i] << ": " << e.err;
      EXPECT_EQ(e.examined, 11) << names[i] << ": " << e.err;
    } else {
      EXPECT_TRUE(e.full_scan) << names[i] << ": " << e.err;
      EXPECT_THAT(e.err, HasSubstr("scheme '" + scheme + "' does not keep keys in byte order")) << names[i];
    }
  }
  const Explained t = Explain(env, "tm_direct", "Key startsWith 'p1'");
  EXPECT_THAT(t.err, HasSubstr("scheme 'direct' orders the keys of temporal maps by length first")) << t.err;
}

// Issue 11: `Key startsWith 'x'` examined every row of a direct map (124,117 rows for 3). On a state map with the
// direct scheme the LMDB keys are the keys, so the rows with the prefix are one run; hashed keys and the
// length-prefixed direct keys of temporal and session maps are not ordered by prefix: those still scan.
TEST(CliQuery, KeyStartsWithOnADirectStateMapExaminesOnlyTheRowsWithThePrefix) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  Strings keys{"a", "ab\xC3\xA9"};  // shorter than the prefix (sorts just before it); UTF-8 after it
  for (int i = 0; i < 200; ++i) keys.push_back((i % 4 == 0 ? "ab" : i % 4 == 1 ? "b" : "abc") + std::to_string(i));
  for (const std::string& key : keys) {
    elements.push_back(TimedRef("st_direct", "", key, "v"));
    elements.push_back(TimedRef("st_hashed", "", key, "v"));
    elements.push_back(TimedRef("tm_direct", "2024-01-01T00:00:00Z", key, "v"));
  }
  Load(env, "prefixes.xml", elements);
  auto with_prefix = [&keys](const std::string& prefix) {
    return static_cast<int64_t>(std::count_if(keys.begin(), keys.end(),
                                              [&](const std::string& k) { return k.rfind(prefix, 0) == 0; }));
  };
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"Key startsWith 'abc'", with_prefix("abc")},
      {"Key startsWith 'abc1'", with_prefix("abc1")},
      {"Key startsWith 'ab'", with_prefix("ab")},
      {"Key startsWith 'abc19' and Value = 'v'", with_prefix("abc19")},
      {"Key startsWith 'zz'", 0},
  };
  EXPECT_EQ(with_prefix("ab"), 151);
  for (const auto& [where, rows] : cases) {
    const Explained direct = Explain(env, "st_direct", where);
    EXPECT_TRUE(direct.narrowed) << where << ": " << direct.err;
    EXPECT_EQ(direct.examined, rows) << where << ": " << direct.err;
    EXPECT_EQ(static_cast<int64_t>(direct.printed), rows) << where;
    // The other maps give the same rows, by a full scan.
    const Explained hashed = Explain(env, "st_hashed", where);
    EXPECT_TRUE(hashed.full_scan) << where << ": " << hashed.err;
    EXPECT_EQ(hashed.printed, direct.printed) << where;
    EXPECT_TRUE(Explain(env, "tm_direct", where).full_scan) << where;
  }
  // An or is not narrowed (a row may match either side).
  EXPECT_TRUE(Explain(env, "st_direct", "Key startsWith 'abc' or Key = 'a'").full_scan);
}

TEST(CliQuery, KeyStartBoundsOnRangedMapsExamineOnlyRowsInRange) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (int i = -10; i < 100; ++i) {  // [10i, 10i + 5]: starts -100 .. 990
    elements.push_back(RangeRef("rg", "", std::to_string(10 * i), std::to_string(10 * i + 5), "r" + std::to_string(i)));
  }
  for (int i = 0; i < 20; ++i) {  // three versions of [10i, 10i + 5]: starts 0 .. 190
    for (const std::string month : {"01", "02", "03"}) {
      elements.push_back(RangeRef("trg", "2024-" + month + "-01T00:00:00Z", std::to_string(10 * i),
                                  std::to_string(10 * i + 5), "r" + std::to_string(i)));
    }
  }
  Load(env, "ranges.xml", elements);
  const std::vector<std::pair<std::string, int64_t>> rg_cases = {
      {"KeyStart between 200 and 299", 10},
      {"KeyStart >= 950", 5},
      {"KeyStart > 950", 4},
      {"KeyStart < 30 and KeyStart >= 0", 3},
      {"KeyStart <= -90", 2},
      {"KeyStart between -50 and -1", 5},
      {"KeyStart = 500", 1},
      {"KeyStart in (10, 30)", 3},  // in narrows to 10..30
      {"KeyStart between 200 and 299 and Value != 'r25'", 10},
  };
  for (const auto& [where, rows] : rg_cases) {
    const Explained e = Explain(env, "rg", where);
    EXPECT_TRUE(e.narrowed) << where << ": " << e.err;
    EXPECT_EQ(e.examined, rows) << where << ": " << e.err;
  }
  EXPECT_EQ(Explain(env, "rg", "KeyStart between 200 and 299 and Value != 'r25'").printed, 9u);
  const Explained t = Explain(env, "trg", "KeyStart between 50 and 99");
  EXPECT_TRUE(t.narrowed) << t.err;
  EXPECT_EQ(t.examined, 15) << t.err;  // 5 ranges x 3 versions
  EXPECT_EQ(t.printed, 15u);
  const Explained tt = Explain(env, "trg", "KeyStart = 50 and EffectiveTime >= '2024-02-01'");
  EXPECT_TRUE(tt.narrowed) << tt.err;
  EXPECT_LE(tt.examined, 3) << tt.err;
  EXPECT_EQ(tt.printed, 2u);
}

TEST(CliQuery, ATimeBoundWithAnExactKeyOnATemporalMapExaminesOnlyThoseRows) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (int k = 0; k < 10; ++k) {
    for (int month = 1; month <= 12; ++month) {
      const std::string mm = (month < 10 ? "0" : "") + std::to_string(month);
      for (const std::string map : {"tm_direct", "tm_hashed"}) {
        elements.push_back(TimedRef(map, "2024-" + mm + "-01T00:00:00.000Z", "k" + std::to_string(k), "m" + mm));
      }
    }
  }
  Load(env, "versions.xml", elements);
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"Key = 'k3' and EffectiveTime between '2024-03-01' and '2024-05-01'", 3},
      {"Key = 'k3' and EffectiveTime >= '2024-10-01T00:00:00Z'", 3},
      {"Key = 'k3' and EffectiveTime < '2024-02-01'", 1},
      {"EffectiveTime = '2024-06-01' and Key = 'k7'", 1},
      {"Key = 'k3'", 12},
  };
  for (const std::string map : {"tm_direct", "tm_hashed"}) {
    for (const auto& [where, rows] : cases) {
      const Explained e = Explain(env, map, where);
      EXPECT_TRUE(e.narrowed) << map << " " << where << ": " << e.err;
      EXPECT_EQ(e.examined, rows) << map << " " << where << ": " << e.err;
      EXPECT_EQ(e.printed, static_cast<size_t>(rows)) << map << " " << where;
    }
  }
}

TEST(CliQuery, AStartBoundWithAnExactKeyOnASessionMapExaminesOnlyThoseRows) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (const std::string key : {"alice", "bob", "carol"}) {
    for (int day = 1; day <= 9; ++day) {
      for (const std::string map : {"ss_direct", "ss_hashed"}) {
        elements.push_back(SessionEvent(map, key, "2024-01-0" + std::to_string(day) + "T10:00:00Z", "1h"));
      }
    }
  }
  Load(env, "sessions.xml", elements);
  for (const std::string map : {"ss_direct", "ss_hashed"}) {
    const Explained e = Explain(env, map, "Key = 'bob' and Start between '2024-01-03' and '2024-01-05T23:00:00Z'");
    EXPECT_TRUE(e.narrowed) << map << ": " << e.err;
    EXPECT_EQ(e.examined, 3) << map << ": " << e.err;
    EXPECT_EQ(e.printed, 3u) << map;
  }
}

TEST(CliQuery, AConditionThatCannotNarrowScansEveryRow) {
  CliEnv env(kTypedMapsConfig);
  Strings elements;
  for (int k = 0; k < 10; ++k) {
    for (int month = 1; month <= 3; ++month) {
      elements.push_back(TimedRef("tm_direct", "2024-0" + std::to_string(month) + "-01T00:00:00Z",
                                  "k" + std::to_string(k), "v" + std::to_string(k)));
    }
    elements.push_back(TimedRef("st_direct", "", "k" + std::to_string(k), "v" + std::to_string(k)));
    elements.push_back(RangeRef("rg", "", std::to_string(10 * k), std::to_string(10 * k + 5), "v"));
  }
  Load(env, "full.xml", elements);
  struct Case {
    std::string map, where;
    int64_t rows;
  };
  const std::vector<Case> cases = {
      {"st_direct", "Value contains '3'", 10},
      {"st_direct", "Key = 'k1' or Key = 'k2'", 10},
      {"st_direct", "not Key = 'k1'", 10},
      {"tm_direct", "Key startsWith 'k1'", 30},  // length-prefixed keys (st_direct narrows: see above)
      {"tm_direct", "EffectiveTime >= '2024-03-01'", 30},  // a time bound without a key
      {"tm_direct", "Key != 'k1'", 30},
      {"rg", "KeyEnd > 30", 10},  // not the leading key part (an upper bound would narrow: start <= end)
      {"rg", "KeyStart = 10 or Value = 'x'", 10},
      {"rg", "not KeyStart > 10", 10},
  };
  for (const Case& c : cases) {
    const Explained e = Explain(env, c.map, c.where);
    EXPECT_TRUE(e.full_scan) << c.map << " " << c.where << ": " << e.err;
    EXPECT_FALSE(e.narrowed) << c.map << " " << c.where << ": " << e.err;
    EXPECT_EQ(e.examined, c.rows) << c.map << " " << c.where << ": " << e.err;
  }
  const Explained none = Explain(env, "rg", "Value = 'v'");
  EXPECT_EQ(none.printed, 10u);
}

TEST(CliQuery, ContradictoryBoundsReadNoRows) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "few.xml", {RangeRef("rg", "", "1", "5", "a"), RangeRef("rg", "", "4", "9", "b")});
  const Explained e = Explain(env, "rg", "KeyStart > 5 and KeyStart < 3");
  EXPECT_EQ(e.examined, 0) << e.err;
  EXPECT_EQ(e.printed, 0u);
  EXPECT_THAT(e.err, HasSubstr("no keys"));
}

TEST(CliQuery, ExplainWritesOnlyToStderr) {
  CliEnv env(kTypedMapsConfig);
  LoadFruit(env);
  for (const std::string format : {"table", "csv", "json"}) {
    const ProcessResult plain = Query(env, "st_direct", {"--where", "Key = 'apple'", "--format", format});
    const ProcessResult explained =
        Query(env, "st_direct", {"--where", "Key = 'apple'", "--format", format, "--explain"});
    EXPECT_EQ(explained.exit_code, 0) << explained.err;
    EXPECT_EQ(explained.out, plain.out) << format;
    EXPECT_EQ(plain.err, "") << format;
    EXPECT_THAT(explained.err, ::testing::MatchesRegex("scan: keys [0-9a-f]+ to [0-9a-f]+ \\(narrowed\\), rows "
                                                       "examined: 1, rows matched: 1\n"));
  }
  const ProcessResult all = Query(env, "st_direct", {"--explain", "--format", "csv"});
  EXPECT_EQ(all.err, "scan: all keys (full scan), rows examined: 5, rows matched: 5\n");
}

}  // namespace
}  // namespace planb
