#include "host/common/iso_time.h"
#include "host/ingest/tabular_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kEffective = 1700000000000;

// What a record said, copied out of the callback.
struct Row {
  std::string map;
  RecordKind kind = RecordKind::kReference;
  std::string key;  // "" when absent
  std::string from;
  std::string to;
  bool time_given = false;
  int64_t time_ms = 0;
  bool has_timeout = false;
  int64_t timeout_ms = 0;
  bool has_value = false;
  std::string value;
  uint64_t line = 0;
};

TabularSpec Csv(const std::string& key, const std::string& value) {
  TabularSpec spec;
  spec.map = "Cities";
  spec.key = key;
  spec.value = value;
  return spec;
}

TabularSpec Jsonl(const std::string& key, const std::string& value) {
  TabularSpec spec = Csv(key, value);
  spec.format = TabularFormat::kJsonLines;
  return spec;
}

Status Read(const std::string& text, const TabularSpec& spec, std::vector<Row>* rows) {
  std::istringstream in(text);
  return ReadTabular(in, "in", spec, kEffective, [rows](const ParsedRecord& p) {
    Row row;
    row.map = std::string(p.map);
    row.kind = p.record.kind;
    if (p.record.has_key) row.key = std::string(p.record.key.view());
    if (p.record.has_range) {
      row.from = std::string(p.record.range_from.view());
      row.to = std::string(p.record.range_to.view());
    }
    row.time_given = p.record.time_given;
    row.time_ms = p.record.time_ms;
    row.has_timeout = p.record.has_timeout;
    row.timeout_ms = p.record.timeout_ms;
    row.has_value = p.record.has_value;
    if (p.record.has_value) row.value = std::string(p.record.value.view());
    row.line = p.line;
    rows->push_back(row);
    return Status::Ok();
  });
}

std::vector<Row> ReadOk(const std::string& text, const TabularSpec& spec) {
  std::vector<Row> rows;
  const Status s = Read(text, spec, &rows);
  EXPECT_TRUE(s.ok()) << s.message();
  return rows;
}

std::string ErrorOf(const std::string& text, const TabularSpec& spec) {
  std::vector<Row> rows;
  const Status s = Read(text, spec, &rows);
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(TabularReader, CsvRowsByHeaderNames) {
  const auto rows =
      ReadOk("name,country,pop\nParis,France,2\n\"Z\xC3\xBCrich, ZH\",CH,\"1\"\n", Csv("name", "country"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].map, "cities");  // lower-cased, as XML map names are
  EXPECT_EQ(rows[0].key, "Paris");
  EXPECT_EQ(rows[0].value, "France");
  EXPECT_EQ(rows[0].line, 2u);
  EXPECT_FALSE(rows[0].time_given);
  EXPECT_EQ(rows[0].time_ms, kEffective);
  EXPECT_EQ(rows[1].key, "Z\xC3\xBCrich, ZH");
  EXPECT_EQ(rows[1].line, 3u);
}

TEST(TabularReader, CsvWithoutHeaderAndComments) {
  TabularSpec spec;
  spec.map = "geo";
  spec.from = "from";
  spec.to = "to";
  spec.value = "country";
  spec.columns = {"from", "to", "country"};
  spec.comments = true;
  const auto rows = ReadOk("# header comment\n#\n16777216,16777471,AU\n 1 ,2,??\n", spec);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].from, "16777216");
  EXPECT_EQ(rows[0].to, "16777471");
  EXPECT_EQ(rows[0].value, "AU");
  EXPECT_EQ(rows[0].line, 3u);
  EXPECT_EQ(rows[1].from, " 1 ");  // handed on as written: the store type judges it
  EXPECT_TRUE(rows[1].key.empty());
}

TEST(TabularReader, CsvWrongColumnCountNamesTheLine) {
  EXPECT_EQ(ErrorOf("a,b,c,d\n1,2,3,4\n1,2,3\n", Csv("a", "b")), "in:3: 3 columns, the header has 4");
  TabularSpec spec = Csv("a", "b");
  spec.columns = {"a", "b"};
  EXPECT_EQ(ErrorOf("1,2\n1,2,3\n", spec), "in:2: 3 columns, --columns names 2");
}

TEST(TabularReader, CsvUnknownColumnListsTheHeader) {
  EXPECT_EQ(ErrorOf("a,b\n1,2\n", Csv("a", "c")), "in: --value 'c': no such column (the header has 'a', 'b')");
  TabularSpec spec = Csv("a", "b");
  spec.value.reset();
  spec.value_json = {"b", "x"};
  EXPECT_THAT(ErrorOf("a,b\n1,2\n", spec), HasSubstr("--value-json 'x': no such column"));
}

TEST(TabularReader, CsvWithoutAnyLineNeedsAHeader) {
  EXPECT_THAT(ErrorOf("", Csv("a", "b")), HasSubstr("in: no header line"));
  EXPECT_TRUE(ReadOk("a,b\n", Csv("a", "b")).empty());
}

TEST(TabularReader, CsvValueJsonIsAnObjectOfStrings) {
  TabularSpec spec = Csv("k", "");
  spec.value.reset();
  spec.value_json = {"b", "a"};
  const auto rows = ReadOk("k,a,b\nx,\"say \"\"hi\"\"\",\"1\n2\"\ny,\\,\t\n", spec);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].value, "{\"b\":\"1\\n2\",\"a\":\"say \\\"hi\\\"\"}");
  EXPECT_EQ(rows[1].value, "{\"b\":\"\\t\",\"a\":\"\\\\\"}");
}

TEST(TabularReader, CsvErrorsOfTheReaderNameTheInput) {
  EXPECT_EQ(ErrorOf("a,b\n1,\"2\n", Csv("a", "b")), "in:2: unterminated quoted field (its quote opens here)");
  EXPECT_EQ(ErrorOf("a,b\n1,\xFF\n", Csv("a", "b")), "in:2: invalid UTF-8 in field 2");
}

TEST(TabularReader, EmptyKeyIsRefused) {
  EXPECT_EQ(ErrorOf("a,b\n,2\n", Csv("a", "b")), "in:2: empty key (column 'a')");
}

TEST(TabularReader, TimesAreIsoOrEpochMilliseconds) {
  TabularSpec spec = Csv("k", "v");
  spec.time = "t";
  const auto rows = ReadOk("k,t,v\nx,2024-01-01T00:00:00Z,1\ny,1704067200001,2\nz,-5,3\n", spec);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].time_given);
  EXPECT_EQ(rows[0].time_ms, 1704067200000);
  EXPECT_EQ(rows[1].time_ms, 1704067200001);
  EXPECT_EQ(rows[2].time_ms, -5);
  EXPECT_THAT(ErrorOf("k,t,v\nx,yesterday,1\n", spec), HasSubstr("in:2: unreadable time 'yesterday' (column 't')"));
  EXPECT_THAT(ErrorOf("k,t,v\nx,,1\n", spec), HasSubstr("in:2: unreadable time ''"));
  EXPECT_THAT(ErrorOf("k,t,v\nx,99999999999999999999,1\n", spec), HasSubstr("in:2: unreadable time"));
}

TEST(TabularReader, SessionsTakeKeyTimeAndTimeout) {
  TabularSpec spec;
  spec.map = "s";
  spec.kind = RecordKind::kSession;
  spec.key = "user";
  spec.time = "t";
  spec.timeout = "idle";
  const auto rows = ReadOk("user,t,idle\nbob,2024-01-01T00:00:00Z,15m\nann,0,60000\n", spec);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kind, RecordKind::kSession);
  EXPECT_TRUE(rows[0].has_timeout);
  EXPECT_EQ(rows[0].timeout_ms, 15 * 60000);
  EXPECT_EQ(rows[1].time_ms, 0);  // time 0 is a real instant
  EXPECT_EQ(rows[1].timeout_ms, 60000);
  EXPECT_FALSE(rows[0].has_value);
  EXPECT_THAT(ErrorOf("user,t,idle\nbob,0,soon\n", spec), HasSubstr("in:2: unreadable timeout 'soon'"));
}

TEST(TabularReader, JsonLinesFieldsAsWritten) {
  const std::string text =
      "{\"k\":\"caf\\u00e9\",\"v\":1.50,\"extra\":[1,{\"x\":null}]}\n"
      "\n"
      "{\"v\":-0,\"k\":18446744073709551615}\r\n"
      "{\"k\":\"b\",\"v\":true}\n"
      "{\"k\":\"c\",\"v\":{ \"a\" : [1, 2] }}";
  const auto rows = ReadOk(text, Jsonl("k", "v"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].key, "caf\xC3\xA9");
  EXPECT_EQ(rows[0].value, "1.50");
  EXPECT_EQ(rows[0].line, 1u);
  EXPECT_EQ(rows[1].key, "18446744073709551615");
  EXPECT_EQ(rows[1].value, "-0");
  EXPECT_EQ(rows[1].line, 3u);
  EXPECT_EQ(rows[2].value, "true");
  EXPECT_EQ(rows[3].value, "{ \"a\" : [1, 2] }");
  // Integers beyond 64 bits are JSON (RFC 8259), and keys as written, as planb enrich reads them.
  const auto big = ReadOk("{\"k\":12345678901234567890123,\"v\":1e400}\n", Jsonl("k", "v"));
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].key, "12345678901234567890123");
  EXPECT_EQ(big[0].value, "1e400");
}

TEST(TabularReader, JsonLinesMatchEscapedNamesAndTakeTheFirstOfRepeatedOnes) {
  const auto rows = ReadOk("{\"\\u006b\":\"a\",\"v\":\"x\",\"v\":\"y\"}\n", Jsonl("k", "v"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "a");
  EXPECT_EQ(rows[0].value, "x");
}

TEST(TabularReader, JsonLinesDottedNamesReachIntoObjects) {
  const auto rows =
      ReadOk("{\"client\":{\"ip\":\"10.0.0.1\",\"geo\":{\"cc\":\"NL\"}}}\n", Jsonl("client.ip", "client.geo.cc"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "10.0.0.1");
  EXPECT_EQ(rows[0].value, "NL");
  EXPECT_EQ(ErrorOf("{\"client\":\"x\"}\n", Jsonl("client.ip", "client")),
            "in:1: no field 'client.ip' ('client' is not an object)");
}

// A member whose own name holds a dot is named with the dot escaped (a\.b); a malformed path names its flag.
TEST(TabularReader, JsonLinesEscapedDotsNameMembersWithDotsInTheirNames) {
  const std::string line = R"({"a.b":"flat","a":{"b":"nested"},"c\\d":{"e.f":"deep"}})" "\n";
  const auto rows = ReadOk(line, Jsonl(R"(a\.b)", "a.b"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "flat");
  EXPECT_EQ(rows[0].value, "nested");
  EXPECT_EQ(ReadOk(line, Jsonl(R"(c\\d.e\.f)", "a.b"))[0].key, "deep");
  EXPECT_EQ(ErrorOf(R"({"a":{"b":1}})" "\n", Jsonl(R"(a\.b)", "a.b")), R"(in:1: no field 'a\.b')");
  EXPECT_EQ(ErrorOf(R"({"k":"a","x":{"y":{"z":1}}})" "\n", Jsonl("k", R"(x.y\.z)")), R"(in:1: no field 'x.y\.z')");

  TabularSpec spec = Jsonl("k", "");
  spec.value.reset();
  spec.value_json = {R"(a\.b)", "a"};
  EXPECT_EQ(ReadOk(R"({"k":"x","a.b":1,"a":{"b":2}})" "\n", spec)[0].value, R"({"a.b":1,"a":{"b":2}})");

  EXPECT_EQ(ErrorOf(line, Jsonl("a..b", "v")),
            "--key: 'a..b' is not a field path: it has an empty part (write member names joined by dots: client.ip)");
  EXPECT_EQ(ErrorOf(line, Jsonl("k", R"(a\b)")),
            R"(--value: 'a\\b' is not a field path: a backslash escapes only a dot or a backslash (a member named )"
            R"(a.b: a\.b))");
  spec.value_json = {"a.b", R"(a\.b)"};  // nested and flat: both would be the member "a.b"
  EXPECT_EQ(ErrorOf(line, spec), R"(--value-json: columns 'a.b' and 'a\\.b' would both be the member a.b)");
  spec.value_json = {"ok", R"(end\)"};
  EXPECT_THAT(ErrorOf(line, spec), HasSubstr(R"(--value-json: 'end\\' is not a field path)"));
}

TEST(TabularReader, JsonLinesValueJsonKeepsEachFieldAsWritten) {
  TabularSpec spec = Jsonl("k", "");
  spec.value.reset();
  spec.value_json = {"n", "s", "o", "a.b"};
  const auto rows =
      ReadOk("{\"k\":\"x\",\"s\":\"t\\u0041b\",\"n\":1e2,\"o\":{\"p\":[true, null]},\"a\":{\"b\":false}}\n", spec);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].value, "{\"n\":1e2,\"s\":\"t\\u0041b\",\"o\":{\"p\":[true, null]},\"a.b\":false}");
}

TEST(TabularReader, JsonLinesRefusals) {
  EXPECT_EQ(ErrorOf("{\"k\":\"a\",\"v\":1}\n[1,2]\n", Jsonl("k", "v")), "in:2: not a JSON object: an array");
  EXPECT_EQ(ErrorOf("\"text\"\n", Jsonl("k", "v")), "in:1: not a JSON object: a string");
  EXPECT_THAT(ErrorOf("{\"k\":\"a\",}\n", Jsonl("k", "v")), HasSubstr("in:1: not a JSON object: "));
  EXPECT_THAT(ErrorOf("{\"k\":\"a\" \"v\":1}\n", Jsonl("k", "v")), HasSubstr("in:1: not a JSON object: "));
  // The whole line is validated, also a field no column names.
  EXPECT_THAT(ErrorOf("{\"k\":\"a\",\"v\":1,\"x\":\"\xFF\"}\n", Jsonl("k", "v")),
              HasSubstr("in:1: not a JSON object: The input is not valid UTF-8"));
  EXPECT_THAT(ErrorOf("{\"k\":\"a\",\"v\":1,\"x\":01}\n", Jsonl("k", "v")), HasSubstr("in:1: not a JSON object"));
  // A lone surrogate escape: RFC 8259's grammar allows it, but no UTF-8 text can hold it.
  EXPECT_THAT(ErrorOf(R"({"k":"a\ud800","v":1})" "\n", Jsonl("k", "v")), HasSubstr("in:1: not a JSON object"));
  EXPECT_EQ(ErrorOf("{\"k\":{\"a\":1},\"v\":1}\n", Jsonl("k", "v")),
            "in:1: field 'k' is an object: expected a string or a number");
  EXPECT_EQ(ErrorOf("{\"k\":[1],\"v\":1}\n", Jsonl("k", "v")),
            "in:1: field 'k' is an array: expected a string or a number");
  EXPECT_EQ(ErrorOf("{\"k\":null,\"v\":1}\n", Jsonl("k", "v")),
            "in:1: field 'k' is null: expected a string or a number");
  EXPECT_EQ(ErrorOf("{\"k\":true,\"v\":1}\n", Jsonl("k", "v")),
            "in:1: field 'k' is true: expected a string or a number");
  EXPECT_EQ(ErrorOf("{\"k\":\"a\"}\n", Jsonl("k", "v")), "in:1: no field 'v'");
  EXPECT_EQ(ErrorOf("{\"v\":\"a\"}\n", Jsonl("k", "v")), "in:1: no field 'k'");
  EXPECT_EQ(ErrorOf("{\"k\":\"\",\"v\":1}\n", Jsonl("k", "v")), "in:1: empty key (column 'k')");
  TabularSpec timed = Jsonl("k", "v");
  timed.time = "t";
  EXPECT_EQ(ErrorOf("{\"k\":\"a\",\"v\":1}\n", timed), "in:1: no field 't'");
  const auto rows =
      ReadOk("{\"k\":\"a\",\"v\":1,\"t\":1704067200000}\n{\"k\":\"a\",\"v\":1,\"t\":\"2024-01-01\"}\n", timed);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].time_ms, 1704067200000);
  EXPECT_EQ(rows[1].time_ms, 1704067200000);
}

TEST(TabularReader, JsonLinesLongerThanTheLimit) {
  TabularSpec spec = Jsonl("k", "v");
  spec.max_record_bytes = 100;
  const std::string ok = "{\"k\":\"a\",\"v\":\"" + std::string(70, 'x') + "\"}\n";
  EXPECT_EQ(ReadOk(ok, spec).size(), 1u);
  EXPECT_EQ(ErrorOf(ok + "{\"k\":\"" + std::string(200000, 'y') + "\"}\n", spec), "in:2: line longer than 100 bytes");
}

TEST(TabularReader, JsonLinesAcrossBlocks) {
  // Lines longer than the 64 KiB block, and many short ones, to cross every boundary.
  std::string text;
  for (int i = 0; i < 3; ++i)
    text += "{\"k\":\"" + std::to_string(i) + "\",\"v\":\"" + std::string(100000, 'v') + "\"}\n";
  for (int i = 0; i < 5000; ++i) text += "{\"k\":\"s" + std::to_string(i) + "\",\"v\":" + std::to_string(i) + "}\n";
  const auto rows = ReadOk(text, Jsonl("k", "v"));
  ASSERT_EQ(rows.size(), 5003u);
  EXPECT_EQ(rows[2].value.size(), 100000u);
  EXPECT_EQ(rows[5002].key, "s4999");
  EXPECT_EQ(rows[5002].value, "4999");
  EXPECT_EQ(rows[5002].line, 5003u);
}

TEST(TabularReader, JsonLinesSkipAByteOrderMarkAtTheStart) {
  const auto rows = ReadOk("\xEF\xBB\xBF{\"k\":\"a\",\"v\":1}\n", Jsonl("k", "v"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "a");
  EXPECT_THAT(ErrorOf("{\"k\":\"a\",\"v\":1}\n\xEF\xBB\xBF{\"k\":\"b\",\"v\":1}\n", Jsonl("k", "v")),
              HasSubstr("in:2: not a JSON object"));
}

TEST(TabularReader, GzipInputIsNamed) {
  EXPECT_THAT(ErrorOf(std::string("\x1F\x8B\x08\x00", 4), Csv("a", "b")), HasSubstr("in: gzip-compressed"));
}

TEST(TabularReader, HandlerErrorsGetTheLine) {
  std::istringstream in("a,b\n1,2\n");
  const Status s =
      ReadTabular(in, "in", Csv("a", "b"), kEffective, [](const ParsedRecord&) { return Status::Invalid("refused"); });
  EXPECT_EQ(s.message(), "in:2: refused");
}

// `text` gzip-compressed (several members when `members` > 1, as `cat a.gz b.gz` makes).
std::string Gzip(const std::string& path, const std::string& text, int members = 1) {
  const size_t part = text.size() / members;
  for (int m = 0; m < members; ++m) {
    gzFile file = gzopen(path.c_str(), m == 0 ? "wb" : "ab");
    const std::string piece = text.substr(m * part, m + 1 == members ? std::string::npos : part);
    EXPECT_EQ(gzwrite(file, piece.data(), static_cast<unsigned>(piece.size())), static_cast<int>(piece.size()));
    gzclose(file);
  }
  return testing::ReadFile(path);
}

TEST(TabularReader, FilesMayBeGzipCompressed) {
  testing::TempDir dir;
  std::string text = "name,country\n";
  for (int i = 0; i < 50000; ++i) text += "city-" + std::to_string(i) + ",C" + std::to_string(i % 7) + "\n";
  const std::string gz = dir.path() + "/c.csv.gz";
  const std::string plain = dir.path() + "/c.csv";
  Gzip(gz, text, 3);
  testing::WriteFile(plain, text);
  for (const std::string& path : {gz, plain}) {
    size_t rows = 0;
    std::string last;
    const Status s = ReadTabularFile(path, Csv("name", "country"), kEffective, [&](const ParsedRecord& p) {
      ++rows;
      last = std::string(p.record.key.view());
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(rows, 50000u) << path;
    EXPECT_EQ(last, "city-49999") << path;
  }
}

TEST(TabularReader, TruncatedGzipIsAnError) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"k\":\"" + std::to_string(i) + "\",\"v\":" + std::to_string(i) + "}\n";
  const std::string path = dir.path() + "/t.jsonl.gz";
  const std::string whole = Gzip(path, text);
  testing::WriteFile(path, whole.substr(0, whole.size() / 2));
  const Status s = ReadTabularFile(path, Jsonl("k", "v"), kEffective, [](const ParsedRecord&) { return Status::Ok(); });
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(path + ": corrupt gzip data: unexpected end of file"));
  const Status missing = ReadTabularFile(dir.path() + "/none.csv", Csv("a", "b"), kEffective,
                                         [](const ParsedRecord&) { return Status::Ok(); });
  EXPECT_THAT(missing.message(), HasSubstr("none.csv: cannot open: No such file or directory"));
}

TEST(TabularSpecCheck, RefusesBadCombinations) {
  auto check = [](const TabularSpec& spec) { return CheckTabularSpec(spec).message(); };
  TabularSpec spec = Csv("k", "v");
  EXPECT_EQ(check(spec), "");
  TabularSpec no_map = spec;
  no_map.map.clear();
  EXPECT_THAT(check(no_map), HasSubstr("--map"));
  TabularSpec both = spec;
  both.from = "a";
  both.to = "b";
  EXPECT_EQ(check(both), "give --key or --from with --to, not both");
  TabularSpec half = spec;
  half.key.reset();
  half.from = "a";
  EXPECT_EQ(check(half), "--from and --to go together");
  TabularSpec none = spec;
  none.key.reset();
  EXPECT_THAT(check(none), HasSubstr("give --key COLUMN"));
  TabularSpec values = spec;
  values.value_json = {"a"};
  EXPECT_EQ(check(values), "give --value or --value-json, not both");
  TabularSpec twice = spec;
  twice.value.reset();
  twice.value_json = {"a", "a"};
  EXPECT_EQ(check(twice), "--value-json: column 'a' named twice");
  TabularSpec empty_name = spec;
  empty_name.columns = {"k", "", "v"};
  EXPECT_THAT(check(empty_name), HasSubstr("--columns: an empty column name"));
  TabularSpec empty_key = spec;
  empty_key.key = "";
  EXPECT_EQ(check(empty_key), "--key: an empty column name");
  TabularSpec timeout = spec;
  timeout.timeout = "t";
  EXPECT_EQ(check(timeout), "--timeout-column applies only to session maps");
  TabularSpec json_columns = Jsonl("k", "v");
  json_columns.columns = {"k", "v"};
  EXPECT_EQ(check(json_columns), "--columns and --comments apply only to --format csv");
  TabularSpec session = spec;
  session.kind = RecordKind::kSession;
  EXPECT_THAT(check(session), HasSubstr("session map: give --key and --time"));
  session.time = "t";
  EXPECT_THAT(check(session), HasSubstr("takes no --value"));
  session.value.reset();
  EXPECT_EQ(check(session), "");
}

}  // namespace
}  // namespace planb
