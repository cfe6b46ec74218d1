// `planb load --format csv|jsonl`: rows of CSV or JSON lines into every kind of map through the real binary, and
// every bad input refused with file:line, exit 2 and nothing loaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ProcessResult;
using testing::ShardDataFiles;
using testing::VisibleEntries;

constexpr char kConfig[] =
    "[map.cities]\n"
    "type = state\n"
    "scheme = hashed\n"
    "[map.geo]\n"
    "type = ranged\n"
    "[map.rates]\n"
    "type = temporal\n"
    "[map.logins]\n"
    "type = session\n";

class LoadTabular : public ::testing::Test {
 protected:
  ProcessResult Load(const std::vector<std::string>& args) const {
    std::vector<std::string> all{"load"};
    all.insert(all.end(), args.begin(), args.end());
    return env_.Run(all);
  }

  void ExpectLoaded(const ProcessResult& r, int records) const {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(": " + std::to_string(records) + " records in 1 map(s)")) << r.out;
  }

  void ExpectLookup(const std::vector<std::string>& args, const std::string& out) const {
    std::vector<std::string> all{"lookup"};
    all.insert(all.end(), args.begin(), args.end());
    const ProcessResult r = env_.Run(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, out);
  }

  // A refused load: exit 2, `message` on stderr, and nothing staged, merged or left in writer/.
  void ExpectRefused(const ProcessResult& r, const std::string& message) const {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_THAT(r.err, HasSubstr("nothing was staged or merged"));
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(VisibleEntries(env_.home() + "/staging"), IsEmpty());
    EXPECT_THAT(VisibleEntries(env_.home() + "/writer"), IsEmpty());
  }

  CliEnv env_{kConfig};
};

TEST_F(LoadTabular, CsvIntoAStateMap) {
  const std::string file =
      env_.Write("c.csv", "name,country,pop\r\nParis,France,2\r\n\"Z\xC3\xBCrich, ZH\",\"Schweiz\",1\r\n");
  ExpectLoaded(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", file}), 2);
  ExpectLookup({"cities", "Paris"}, "France\n");
  ExpectLookup({"cities", "Z\xC3\xBCrich, ZH"}, "Schweiz\n");
}

TEST_F(LoadTabular, JsonLinesIntoAStateMap) {
  const std::string file = env_.Write("c.jsonl",
                                      "{\"city\":{\"name\":\"Rome\"},\"pop\":2.80,\"cc\":\"IT\"}\n{\"city\":{\"name\":"
                                      "\"Oslo\"},\"pop\":1,\"cc\":\"NO\"}\n");
  ExpectLoaded(Load({"--format", "jsonl", "--map", "Cities", "--key", "city.name", "--value", "pop", file}), 2);
  ExpectLookup({"cities", "Rome"}, "2.80\n");
  ExpectLookup({"cities", "Oslo"}, "1\n");
}

TEST_F(LoadTabular, ValueJsonFromCsvAndJsonLines) {
  const std::string csv = env_.Write("c.csv", "name,country,pop\nParis,France,\"2\"\"\"\n");
  ExpectLoaded(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value-json", "country,pop", csv}), 1);
  ExpectLookup({"cities", "Paris"}, "{\"country\":\"France\",\"pop\":\"2\\\"\"}\n");
  const std::string jsonl = env_.Write("c.jsonl", "{\"name\":\"Rome\",\"pop\":2.80,\"tags\":[\"a\", 1]}\n");
  ExpectLoaded(Load({"--format", "jsonl", "--map", "cities", "--key", "name", "--value-json", "pop,tags", jsonl}), 1);
  ExpectLookup({"cities", "Rome"}, "{\"pop\":2.80,\"tags\":[\"a\", 1]}\n");
}

TEST_F(LoadTabular, RangesWithoutHeaderWithCommentsFromStdin) {
  testing::ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = {"--home",          env_.home(),  "--config", env_.config(), "load",   "--format", "csv",  "--columns",
               "from,to,country", "--comments", "--map",    "geo",         "--from", "from",     "--to", "to",
               "--value",         "country",    "-"};
  spec.stdin_text = "# a comment, with \"an odd quote\n#\n16777216,16777471,AU\n16777472,16778239,CN\n";
  const ProcessResult r = testing::RunProcess(spec);
  ExpectLoaded(r, 2);
  EXPECT_THAT(r.out, HasSubstr("-: 2 records"));
  ExpectLookup({"geo", "16777300"}, "AU\n");
  ExpectLookup({"geo", "16778000"}, "CN\n");
}

TEST_F(LoadTabular, TemporalRowsWithTheirTimes) {
  const std::string file = env_.Write("r.csv", "cur,at,rate\nEUR,2024-01-01T00:00:00Z,1.10\nEUR,1717200000000,1.08\n");
  ExpectLoaded(Load({"--format", "csv", "--map", "rates", "--key", "cur", "--time", "at", "--value", "rate", file}), 2);
  ExpectLookup({"rates", "EUR", "--time", "2024-03-01T00:00:00Z"}, "1.10\n");
  ExpectLookup({"rates", "EUR", "--time", "2024-06-02T00:00:00Z"}, "1.08\n");
}

// Unix seconds (with a fraction), microseconds and nanoseconds, each with its --time-unit; ISO text beside them
// whatever the unit. Read as milliseconds, the seconds would land in January 1970.
TEST_F(LoadTabular, NumericTimesInTheUnitTheFlagNames) {
  const std::string secs = env_.Write("s.csv", "cur,t,rate\nEUR,1704067200,1.10\nEUR,1717200000.5,1.08\n"
                                               "USD,2024-02-01T00:00:00Z,0.9\n");
  ExpectLoaded(Load({"--format", "csv", "--map", "rates", "--key", "cur", "--time", "t", "--time-unit", "s",
                     "--value", "rate", secs}),
               3);
  ExpectLookup({"rates", "EUR", "--time", "2024-03-01T00:00:00Z"}, "1.10\n");
  ExpectLookup({"rates", "EUR", "--time", "2024-06-01T00:00:00.500Z"}, "1.08\n");
  ExpectLookup({"rates", "EUR", "--time", "2024-06-01T00:00:00.499Z"}, "1.10\n");
  ExpectLookup({"rates", "USD", "--time", "2024-02-01T00:00:00Z"}, "0.9\n");
  const std::string micros = env_.Write("u.jsonl", "{\"c\":\"GBP\",\"t\":1704067200000000,\"r\":\"0.8\"}\n");
  ExpectLoaded(Load({"--format", "jsonl", "--map", "rates", "--key", "c", "--time", "t", "--time-unit", "us",
                     "--value", "r", micros}),
               1);
  const std::string nanos = env_.Write("n.jsonl", "{\"c\":\"JPY\",\"t\":\"1704067200000000000\",\"r\":\"150\"}\n");
  ExpectLoaded(Load({"--format", "jsonl", "--map", "rates", "--key", "c", "--time", "t", "--time-unit", "ns",
                     "--value", "r", nanos}),
               1);
  ExpectLookup({"rates", "GBP", "--time", "2024-01-01T00:00:00Z"}, "0.8\n");
  ExpectLookup({"rates", "JPY", "--time", "2024-01-01T00:00:00Z"}, "150\n");
  const ProcessResult before = env_.Run({"lookup", "rates", "JPY", "--time", "2023-12-31T23:59:59.999Z"});
  EXPECT_EQ(before.exit_code, 1) << before.out;

  const ProcessResult unit = Load({"--format", "csv", "--map", "rates", "--key", "cur", "--time", "t", "--time-unit",
                                   "sec", "--value", "rate", secs});
  EXPECT_EQ(unit.exit_code, 2);
  EXPECT_THAT(unit.err, HasSubstr("--time-unit: 'sec' is not s, ms, us or ns"));
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "cur", "--time-unit", "s", "--value", "rate",
                      secs}),
                "--time-unit applies only with --time COLUMN");
  const std::string bad = env_.Write("bad.csv", "cur,t,rate\nEUR,12.5.1,1\n");
  ExpectRefused(Load({"--format", "csv", "--map", "rates", "--key", "cur", "--time", "t", "--time-unit", "s",
                      "--value", "rate", bad}),
                "bad.csv:2: unreadable time '12.5.1' (column 't'): expected ISO-8601 such as "
                "2024-01-01T08:10:22.023Z or epoch seconds (--time-unit s)");
  const ProcessResult xml = env_.Run({"load", "--time-unit", "s", env_.Write("x.xml", "<referenceData/>")});
  EXPECT_EQ(xml.exit_code, 2);
  EXPECT_THAT(xml.err, HasSubstr("apply only with --format csv or jsonl"));
  const ProcessResult retired = Load({"--format", "csv", "--map", "logins", "--key", "u", "--time", "t",
                                      "--timeout", "idle", secs});
  EXPECT_EQ(retired.exit_code, 2);
  EXPECT_THAT(retired.err, HasSubstr("option --timeout is now --timeout-column COLUMN"));
}

TEST_F(LoadTabular, SessionsFromJsonLines) {
  const std::string file = env_.Write("s.jsonl",
                                      "{\"user\":\"bob\",\"t\":\"2024-01-01T00:00:00Z\",\"idle\":\"15m\"}\n{\"user\":"
                                      "\"bob\",\"t\":1704067500000,\"idle\":\"15m\"}\n");
  ExpectLoaded(
      Load({"--format", "jsonl", "--map", "logins", "--key", "user", "--time", "t", "--timeout-column", "idle", file}), 2);
  ExpectLookup({"logins", "bob", "--time", "2024-01-01T00:02:00Z"},
               "2024-01-01T00:00:00.000Z 2024-01-01T00:15:00.000Z\n");
  ExpectLookup({"logins", "bob", "--time", "2024-01-01T00:10:00Z"},
               "2024-01-01T00:05:00.000Z 2024-01-01T00:20:00.000Z\n");
  ExpectRefused(Load({"--format", "jsonl", "--map", "logins", "--key", "user", file}),
                "map logins is a session map: give --key and --time");
}

TEST_F(LoadTabular, WrongColumnCountNamesFileAndLineAndLoadsNothing) {
  const std::string good = env_.Write("good.csv", "name,country\nParis,France\n");
  ASSERT_EQ(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", good}).exit_code, 0);
  const auto before = ShardDataFiles(env_.home());
  const std::string bad = env_.Write("bad.csv", "a,b,c,d\n1,2,3,4\n1,2,3\n");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "a", "--value", "b", bad}),
                bad + ":3: 3 columns, the header has 4");
  EXPECT_EQ(ShardDataFiles(env_.home()), before) << "a refused load changed a shard";
}

TEST_F(LoadTabular, ASecondFileFailingLoadsNeitherFile) {
  const std::string first = env_.Write("1.csv", "name,country\nParis,France\n");
  const std::string second = env_.Write("2.csv", "name,country\nRome,\"Italy\n");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", first, second}),
                second + ":2: unterminated quoted field");
  EXPECT_THAT(ShardDataFiles(env_.home()), IsEmpty());
}

TEST_F(LoadTabular, RefusesBadFlags) {
  const std::string file = env_.Write("c.csv", "name,country\nParis,France\n");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "nom", "--value", "country", file}),
                file + ": --key 'nom': no such column (the header has 'name', 'country')");
  ExpectRefused(
      Load({"--format", "csv", "--map", "cities", "--key", "name", "--from", "name", "--to", "country", file}),
      "give --key or --from with --to, not both");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", "--value-json",
                      "country", file}),
                "give --value or --value-json, not both");
  ExpectRefused(Load({"--format", "csv", "--map", "nowhere", "--key", "name", file}), "--map nowhere: no such map");
  ExpectRefused(Load({"--format", "csv", "--key", "name", file}), "--map: the map the rows go to is required");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", "-", "-"}),
                "'-' (stdin) given twice");
  const ProcessResult xml_with_columns = Load({"--key", "name", file});
  EXPECT_EQ(xml_with_columns.exit_code, 2);
  EXPECT_THAT(xml_with_columns.err, HasSubstr("apply only with --format csv or jsonl"));
  const ProcessResult unknown_format = Load({"--format", "tsv", "--map", "cities", "--key", "name", file});
  EXPECT_EQ(unknown_format.exit_code, 2);
  EXPECT_THAT(unknown_format.err, HasSubstr("--format: 'tsv' is not xml, csv, jsonl or mmdb"));
  EXPECT_THAT(ShardDataFiles(env_.home()), IsEmpty());
}

TEST_F(LoadTabular, RefusesMalformedJsonLines) {
  const std::vector<std::string> args{"--format", "jsonl", "--map", "cities", "--key", "k", "--value", "v"};
  auto load = [&](const std::string& name, const std::string& text) {
    std::vector<std::string> all = args;
    all.push_back(env_.Write(name, text));
    return Load(all);
  };
  ExpectRefused(load("a.jsonl", "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":1,}\n"), "a.jsonl:2: not a JSON object: ");
  ExpectRefused(load("b.jsonl", "{\"k\":{\"x\":1},\"v\":1}\n"), "b.jsonl:1: field 'k' is an object");
  ExpectRefused(load("c.jsonl", "{\"k\":\"a\",\"v\":\"\xC3\"}\n"),
                "c.jsonl:1: not a JSON object: The input is not valid UTF-8");
  ExpectRefused(load("d.jsonl", "{\"k\":\"a\"}\n"), "d.jsonl:1: no field 'v'");
  ExpectRefused(load("e.jsonl", "[\"k\"]\n"), "e.jsonl:1: not a JSON object: an array");
  EXPECT_THAT(ShardDataFiles(env_.home()), IsEmpty());
}

TEST_F(LoadTabular, RefusesInvalidUtf8InCsv) {
  const std::string file = env_.Write("u.csv", "name,country\nParis,Fr\xE9nce\n");
  ExpectRefused(Load({"--format", "csv", "--map", "cities", "--key", "name", "--value", "country", file}),
                file + ":2: invalid UTF-8 in field 2");
}

TEST_F(LoadTabular, HelpNamesTheFormats) {
  const ProcessResult r = env_.Run({"load", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--value-json A,B"));
  EXPECT_THAT(r.out, HasSubstr("csv, jsonl or mmdb"));
}

// The shared data set's world cities (RFC 4180, a header, non-ASCII names, repeated names: the last row wins),
// read gzip-compressed as it is stored.
TEST_F(LoadTabular, WorldCitiesFromTheSharedData) {
  const std::string data = testing::SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data is absent";
  const ProcessResult r = Load({"--format", "csv", "--map", "cities", "--key", "name", "--value-json",
                                "country,subcountry", data + "/world-cities.csv.gz"});
  ExpectLoaded(r, 34032);
  ExpectLookup({"cities", "Andorra la Vella"}, "{\"country\":\"Andorra\",\"subcountry\":\"Andorra la Vella\"}\n");
  ExpectLookup({"cities",
                "War\xC4\xAB"
                "s\xC4\x81n"},
               "{\"country\":\"United Arab Emirates\",\"subcountry\":\"Dubai\"}\n");
  const ProcessResult absent = env_.Run({"lookup", "cities", "Nowhereville"});
  EXPECT_EQ(absent.exit_code, 1);
}

// The tor-geoip IPv4 ranges (20 '#' lines, no header) through the pipe the docs show.
TEST_F(LoadTabular, TorGeoipRangesThroughZcatFromTheSharedData) {
  const std::string data = testing::SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data is absent";
  testing::ProcessSpec spec;
  spec.binary = "/bin/sh";
  spec.args = {"-c",
               "zcat \"$0\" | \"$1\" --home \"$2\" --config \"$3\" load --format csv --columns from,to,country "
               "--comments --map geo --from from --to to --value country -",
               data + "/tor-geoip-ipv4.csv.gz",
               PLANB_BINARY,
               env_.home(),
               env_.config()};
  const ProcessResult r = testing::RunProcess(spec);
  ExpectLoaded(r, 385602);
  ExpectLookup({"geo", "16777216"}, "AU\n");  // 1.0.0.0
  ExpectLookup({"geo", "16778000"}, "CN\n");
}

}  // namespace
}  // namespace planb
