// planb enrich through the real binary on real shards: JSON lines kept byte for byte, answers of every kind of
// map written at their targets, per-event times, fallbacks, --on-miss, malformed lines, and bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::CliEnv;
using testing::ProcessResult;
using testing::ProcessSpec;
using testing::ReferenceData;
using testing::Ref;

constexpr char kConfig[] =
    "[map.city_to_country]\ntype = state\nscheme = hashed\n"
    "[map.dept]\ntype = temporal\nscheme = hashed\n"
    "[map.sessions]\ntype = session\nscheme = direct\n"
    "[map.offices]\ntype = ranged\n"
    "[map.empty]\ntype = state\n";

std::string Timed(const std::string& key, const std::string& time, const std::string& value) {
  return "  <reference><map>dept</map><key>" + key + "</key><time>" + time + "</time><value>" + value +
         "</value></reference>";
}

class EnrichCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string body =
        Ref("city_to_country", "Ankara", "Turkey") + "\n" + Ref("city_to_country", "Brasília", "Brazil") + "\n" +
        Ref("city_to_country", "quote\"d", "line1\nline2 \"q\"") + "\n" +
        Ref("city_to_country", "xml", "<a:b xmlns:a=\"urn:a\">x</a:b>") + "\n" +
        Timed("u1", "2024-01-01T00:00:00Z", "Engineering") + "\n" + Timed("u1", "2024-06-01T00:00:00Z", "Research") +
        "\n  <session><map>sessions</map><key>u1</key><time>2024-01-01T10:00:00Z</time><timeout>PT1H</timeout>"
        "</session>\n"
        "  <reference><map>offices</map><range><from>1000</from><to>1999</to></range><value>Cardiff</value>"
        "</reference>";
    const ProcessResult load = env_.Load({env_.Write("data.xml", ReferenceData(body))});
    ASSERT_EQ(load.exit_code, 0) << load.err;
  }

  // planb enrich ARGS with `input` on standard input.
  ProcessResult Enrich(const std::vector<std::string>& args, const std::string& input) const {
    ProcessSpec spec;
    spec.binary = PLANB_BINARY;
    spec.args = {"--home", env_.home(), "--config", env_.config(), "enrich"};
    spec.args.insert(spec.args.end(), args.begin(), args.end());
    spec.stdin_text = input;
    return testing::RunProcess(spec);
  }

  CliEnv env_{kConfig};
};

// A map with no data on this node stops enrich before it reads an event (issue 38, 14): it used to exit 0 with
// every event a miss, which a pipeline pointed at the wrong home never noticed.
TEST_F(EnrichCommand, AMapWithNoDataHereStopsTheRunBeforeAnyEvent) {
  const ProcessResult r = Enrich({"--lookup", "c=city_to_country:city", "--lookup", "e=empty:city"},
                                 R"({"city":"Ankara"})" "\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("map empty has no data on this node (home " + env_.home() + ")"));
}

TEST_F(EnrichCommand, KeepsEveryByteItDoesNotWriteAndAddsTheAnswer) {
  const std::string line =
      R"({"city":"Ankara","n":1.50,"z":-0,"e":1e2,"big":123456789012345678901234567890,)"
      R"("u":"caf\u00e9 \ud83d\ude00 é","nested":{"a":[1,{"b":null}]},"city":"Ignored, the first counts"})";
  const ProcessResult r = Enrich({"--lookup", "geo.country=city_to_country:city"}, line + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, line.substr(0, line.size() - 1) + R"(,"geo":{"country":"Turkey"}})" + "\n");
  EXPECT_THAT(r.err, HasSubstr("planb enrich: 1 event, 0 malformed"));
  EXPECT_THAT(r.err, HasSubstr("geo.country=city_to_country:city: 1 hit, 0 misses"));
}

TEST_F(EnrichCommand, WritesEveryKindOfAnswer) {
  const std::string input =
      R"({"c":"quote\"d","x":"xml","u":"u1","t":"2024-03-01T00:00:00Z","ms":1704103200000,"id":1500})"
      "\n";
  const ProcessResult r = Enrich({"--lookup", "v=city_to_country:c", "--lookup", "frag=city_to_country:x",
                                  "--lookup", "d=dept:u@t", "--lookup", "s=sessions:u@ms", "--lookup",
                                  "office=offices:id"},
                                 input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"c":"quote\"d","x":"xml","u":"u1","t":"2024-03-01T00:00:00Z","ms":1704103200000,"id":1500,)"
            R"("v":"line1\nline2 \"q\"","frag":"<a:b xmlns:a=\"urn:a\">x</a:b>","d":"Engineering",)"
            R"("s":{"start":"2024-01-01T10:00:00.000Z","end":"2024-01-01T11:00:00.000Z"},"office":"Cardiff"})"
            "\n");
}

TEST_F(EnrichCommand, EachEventIsLookedUpAtItsOwnTime) {
  const std::string input = R"({"u":"u1","t":"2023-12-31T23:59:59.999Z"})"
                            "\n"
                            R"({"u":"u1","t":"2024-01-01T00:00:00Z"})"
                            "\n"
                            R"({"u":"u1","t":1717200000000})"
                            "\n"
                            R"({"u":"u1","t":"not a time"})"
                            "\n"
                            R"({"u":"u1"})"
                            "\n";
  const ProcessResult r = Enrich({"--lookup", "d=dept:u@t", "--on-miss", "tag"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"u":"u1","t":"2023-12-31T23:59:59.999Z","planb_miss":["d"]})"
            "\n"
            R"({"u":"u1","t":"2024-01-01T00:00:00Z","d":"Engineering"})"
            "\n"
            R"({"u":"u1","t":1717200000000,"d":"Research"})"
            "\n"
            R"({"u":"u1","t":"not a time"})"
            "\n"
            R"({"u":"u1"})"
            "\n");
  EXPECT_THAT(r.err, HasSubstr("d=dept:u@t: 2 hits, 1 miss, 2 skipped (no time)"));
}

// Unix seconds in the event, read as such with --time-unit s (as milliseconds they would be January 1970).
TEST_F(EnrichCommand, NumericEventTimesInTheUnitTheFlagNames) {
  const std::string input = R"({"u":"u1","t":1717200000})"
                            "\n"
                            R"({"u":"u1","t":"1704067200.5"})"
                            "\n"
                            R"({"u":"u1","t":"2024-01-01T00:00:00Z"})"
                            "\n";
  const ProcessResult seconds = Enrich({"--lookup", "d=dept:u@t", "--time-unit", "s"}, input);
  ASSERT_EQ(seconds.exit_code, 0) << seconds.err;
  EXPECT_EQ(seconds.out, R"({"u":"u1","t":1717200000,"d":"Research"})"
                         "\n"
                         R"({"u":"u1","t":"1704067200.5","d":"Engineering"})"
                         "\n"
                         R"({"u":"u1","t":"2024-01-01T00:00:00Z","d":"Engineering"})"
                         "\n");
  const ProcessResult millis = Enrich({"--lookup", "d=dept:u@t"}, input);  // the default: 1717200000 ms is 1970
  ASSERT_EQ(millis.exit_code, 0) << millis.err;
  EXPECT_THAT(millis.out, HasSubstr(R"({"u":"u1","t":1717200000})"));
  const ProcessResult csv = Enrich({"--input", "csv", "--lookup", "d=dept:u@t", "--time-unit", "ns"},
                                   "u,t\nu1,1717200000000000000\n");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "u,t,d\r\nu1,1717200000000000000,Research\r\n");
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--lookup", "d=dept:u@t", "--time-unit", "minutes"}, "--time-unit: 'minutes' is not s, ms, us or ns"},
           {{"--lookup", "a=city_to_country:f", "--time-unit", "s"}, "--time-unit applies only to lookups with @TIMEFIELD"}}) {
    const ProcessResult r = Enrich(args, "{}\n");
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_THAT(r.err, HasSubstr(message));
  }
}

TEST_F(EnrichCommand, MissesFallbacksAndOnMiss) {
  const std::string input = R"({"city":"Ankara"})"
                            "\n"
                            R"({"city":"Nowhere"})"
                            "\n"
                            R"({"other":1})"
                            "\n"
                            R"({"city":{"an":"object"}})"
                            "\n";
  ProcessResult r = Enrich({"--lookup", "geo.country=city_to_country:city"}, input);
  EXPECT_EQ(r.out, R"({"city":"Ankara","geo":{"country":"Turkey"}})"
                   "\n" +
                       input.substr(input.find('\n') + 1));
  EXPECT_THAT(r.err, HasSubstr("1 hit, 3 misses"));

  r = Enrich({"--lookup", "geo.country=city_to_country:city", "--on-miss", "drop"}, input);
  EXPECT_EQ(r.out, R"({"city":"Ankara","geo":{"country":"Turkey"}})"
                   "\n");
  EXPECT_THAT(r.err, HasSubstr("3 dropped on a miss"));

  r = Enrich({"--lookup", "geo.country=city_to_country:city", "--lookup", "c2=city_to_country:other",
              "--on-miss", "tag"},
             R"({"city":"Nowhere","other":"Ankara"})"
             "\n");
  EXPECT_EQ(r.out, R"({"city":"Nowhere","other":"Ankara","c2":"Turkey","planb_miss":["geo.country"]})"
                   "\n");

  // A fallback answers the miss: neither dropped nor tagged.
  r = Enrich({"--lookup", "geo.country=city_to_country:city", "--fallback", "geo.country=unknown", "--on-miss",
              "drop"},
             input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"city":"Ankara","geo":{"country":"Turkey"}})"
            "\n"
            R"({"city":"Nowhere","geo":{"country":"unknown"}})"
            "\n"
            R"({"other":1,"geo":{"country":"unknown"}})"
            "\n"
            R"({"city":{"an":"object"},"geo":{"country":"unknown"}})"
            "\n");
  EXPECT_THAT(r.err, HasSubstr("1 hit, 3 misses (3 answered by the fallback)"));
}

TEST_F(EnrichCommand, ATargetBehindANonObjectIsCountedNotWritten) {
  const ProcessResult r = Enrich({"--lookup", "geo.country=city_to_country:city"}, R"({"city":"Ankara","geo":7})"
                                                                                   "\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, R"({"city":"Ankara","geo":7})"
                   "\n");
  EXPECT_THAT(r.err, HasSubstr("1 not written (a parent of the target is not an object)"));
}

TEST_F(EnrichCommand, MalformedLinesPassThroughOrStopWithStrict) {
  const std::string input = R"({"city":"Ankara"})"
                            "\n"
                            "not json\n"
                            R"({"city":"Ankara","bad":tru})"
                            "\n"
                            "{\"city\":\"\xFF\"}\n"
                            "\n"
                            R"({"city":"Brasília"})";  // the last line has no newline
  ProcessResult r = Enrich({"--lookup", "c=city_to_country:city"}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"city":"Ankara","c":"Turkey"})"
                   "\nnot json\n"
                   R"({"city":"Ankara","bad":tru})"
                   "\n{\"city\":\"\xFF\"}\n\n"
                   R"({"city":"Brasília","c":"Brazil"})"
                   "\n");
  EXPECT_THAT(r.err, HasSubstr("planb enrich: warning: stdin:2: not a JSON object"));
  EXPECT_THAT(r.err, HasSubstr("stdin:3: not a JSON object"));
  EXPECT_THAT(r.err, HasSubstr("stdin:4: not a JSON object (The input is not valid UTF-8)"));
  EXPECT_THAT(r.err, HasSubstr("6 events, 4 malformed (passed through unchanged)"));

  r = Enrich({"--lookup", "c=city_to_country:city", "--strict"}, input);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, R"({"city":"Ankara","c":"Turkey"})"
                   "\n");  // the events before the malformed one are written
  EXPECT_THAT(r.err, HasSubstr("planb enrich: stdin:2: not a JSON object"));
}

TEST_F(EnrichCommand, ReadsFilesInOrder) {
  const std::string a = env_.Write("a.jsonl", R"({"city":"Ankara"})"
                                              "\n");
  const std::string b = env_.Write("b.jsonl", "oops\n");
  const ProcessResult r = Enrich({"--lookup", "c=city_to_country:city", a, b, a}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"city":"Ankara","c":"Turkey"})"
                   "\noops\n"
                   R"({"city":"Ankara","c":"Turkey"})"
                   "\n");
  EXPECT_THAT(r.err, HasSubstr(b + ":1: not a JSON object"));
  const ProcessResult missing = Enrich({"--lookup", "c=city_to_country:city", env_.dir() + "/none.jsonl"}, "");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.jsonl: cannot open: No such file or directory"));
}

TEST_F(EnrichCommand, CsvInCsvOut) {
  const std::string input =
      "city,user,t\r\n"
      "Ankara,u1,2024-03-01T00:00:00Z\n"
      "\"quote\"\"d\",u1,1717200000000\n"
      "Nowhere,u1,\n"
      "\"Bras\xC3\xADlia, DF\",u1,2024-03-01\n";
  const ProcessResult r = Enrich({"--input", "csv", "--lookup", "country=city_to_country:city", "--lookup",
                                  "dept=dept:user@t", "--lookup", "s=sessions:user@t", "--on-miss", "tag"},
                                 input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "city,user,t,country,dept,s,planb_miss\r\n"
            "Ankara,u1,2024-03-01T00:00:00Z,Turkey,Engineering,,s\r\n"
            "\"quote\"\"d\",u1,1717200000000,\"line1\nline2 \"\"q\"\"\",Research,,s\r\n"
            "Nowhere,u1,,,,,country\r\n"  // no time: dept and s skipped, not missed
            "\"Bras\xC3\xADlia, DF\",u1,2024-03-01,,Engineering,,country s\r\n");
  EXPECT_THAT(r.err, HasSubstr("dept=dept:user@t: 3 hits, 0 misses, 1 skipped (no time)"));
}

TEST_F(EnrichCommand, CsvAnswersReplaceAnExistingTargetColumnAndSessionsAreIntervals) {
  const ProcessResult r = Enrich({"--input", "csv", "--lookup", "s=sessions:user@t", "--lookup",
                                  "city=city_to_country:city"},
                                 "user,t,city\nu1,2024-01-01T10:30:00Z,Ankara\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "user,t,city,s\r\n"
            "u1,2024-01-01T10:30:00Z,Turkey,2024-01-01T10:00:00.000Z/2024-01-01T11:00:00.000Z\r\n");
}

TEST_F(EnrichCommand, CsvToJson) {
  const ProcessResult r = Enrich({"--input", "csv", "--output", "json", "--lookup", "geo.country=city_to_country:city",
                                  "--on-miss", "tag"},
                                 "city,n\nAnkara,1.50\nNowhere,\"a,b\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"city":"Ankara","n":"1.50","geo":{"country":"Turkey"}})"
            "\n"
            R"({"city":"Nowhere","n":"a,b","planb_miss":["geo.country"]})"
            "\n");
}

TEST_F(EnrichCommand, CsvToJsonTagsOnlyWhenAsked) {
  const ProcessResult r = Enrich({"--input", "csv", "--output", "json", "--lookup", "c=city_to_country:city"},
                                 "city\nNowhere\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"city":"Nowhere"})"
                   "\n");
}

TEST_F(EnrichCommand, MalformedCsvRows) {
  const std::string input = "city,n\nAnkara,1\nonly-one\nAnkara,1,extra\nAnkara,2\n";
  ProcessResult r = Enrich({"--input", "csv", "--lookup", "c=city_to_country:city"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "city,n,c\r\nAnkara,1,Turkey\r\nonly-one\r\nAnkara,1,extra\r\nAnkara,2,Turkey\r\n");
  EXPECT_THAT(r.err, HasSubstr("stdin:3: 1 fields, the header has 2; passed through unchanged"));
  EXPECT_THAT(r.err, HasSubstr("stdin:4: 3 fields, the header has 2"));
  EXPECT_THAT(r.err, HasSubstr("4 events, 2 malformed"));

  r = Enrich({"--input", "csv", "--lookup", "c=city_to_country:city", "--strict"}, input);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "city,n,c\r\nAnkara,1,Turkey\r\n");
  EXPECT_THAT(r.err, HasSubstr("planb enrich: stdin:3: 1 fields, the header has 2"));

  // What leaves the rest unreadable is an error whatever --strict says; the rows before it are written.
  r = Enrich({"--input", "csv", "--lookup", "c=city_to_country:city"}, "city\nAnkara\n\"open,\nAnkara\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "city,c\r\nAnkara,Turkey\r\n");
  EXPECT_THAT(r.err, HasSubstr("stdin:3: unterminated quoted field"));
  r = Enrich({"--input", "csv", "--lookup", "c=city_to_country:city"}, "city\nAnk\xFFra\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("stdin:2: "));
  EXPECT_THAT(r.err, HasSubstr("UTF-8"));
}

// The engine over a warm stream of 4097 events (hits, misses, times, fallbacks, tags, a malformed line): the
// allocations counted are the pass's own few buffers, not one per event or lookup.
TEST_F(EnrichCommand, AllocatesNothingPerEventOnceWarm) {
  ProcessSpec spec;
  spec.binary = PLANB_ENRICH_ALLOC_CHECK;
  spec.args = {env_.config(), env_.home()};
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long events = 0, allocations = 0, hits = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "events %llu allocations %llu hits %llu", &events, &allocations, &hits), 3)
      << r.out;
  EXPECT_EQ(events, 4097u);
  EXPECT_GT(hits, 1000u);  // the lookups ran and found
  // The pass's line buffer and the warning about its malformed line (shown: one of the first ten): a
  // per-event or per-lookup allocation would count thousands.
  EXPECT_LE(allocations, 4u);
}

TEST_F(EnrichCommand, RefusesBadArguments) {
  const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
    const ProcessResult r = Enrich(args, "{}\n");
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.out, "") << message;
    EXPECT_THAT(r.err, HasSubstr(message));
  };
  refused({}, "no --lookup given");
  refused({"--lookup", "geo"}, "--lookup 'geo': no '='");
  refused({"--lookup", "a=nosuchmap:f"}, "--lookup a=nosuchmap:...: ");
  refused({"--lookup", "a=city_to_country:f@t"}, "@t does not apply to map city_to_country (type state has no time)");
  refused({"--lookup", "a=city_to_country:f", "--fallback", "b=x"}, "--fallback 'b=x': no --lookup writes b");
  refused({"--lookup", "a=city_to_country:f", "--on-miss", "ignore"}, "--on-miss 'ignore': expected keep, drop or tag");
  refused({"--lookup", "a=city_to_country:f", "--input", "xml"}, "--input 'xml': expected json or csv");
  refused({"--lookup", "a=city_to_country:f", "--output", "csv"}, "--output csv needs --input csv");
  refused({"--lookup", "a=city_to_country:f", "--lookup", "a.b=dept:u"}, "overlap");
}

}  // namespace
}  // namespace planb
