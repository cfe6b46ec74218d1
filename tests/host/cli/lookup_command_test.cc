// `planb lookup MAP KEY`: the value alone on stdout and exit 0; a missing key is exit 1 with a message on stderr
// and nothing on stdout; any error (unknown map, corrupt shard, a key the scheme refuses) is exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;
using testing::WriteFile;
using testing::XmlFragmentError;

// Loads a few rows into both schemes' maps.
void LoadCities(const CliEnv& env) {
  const std::string file = env.Write(
      "cities.xml",
      ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" + Ref("city_to_country", "PARIS", "Texas") + "\n" +
                    Ref("city_to_country", "Lyon", "France") + "\n" + Ref("iptolocation", "10.0.0.1", "Berlin") + "\n" +
                    Ref("iptolocation", "10.0.0.2", "Oslo")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void ExpectValue(const CliEnv& env, const std::string& map, const std::string& key, const std::string& value) {
  const ProcessResult r = env.Lookup(map, key);
  EXPECT_EQ(r.exit_code, 0) << map << " " << key << ": " << r.err;
  EXPECT_EQ(r.out, value + "\n") << map << " " << key;
  EXPECT_EQ(r.err, "") << map << " " << key;
}

TEST(CliLookup, PrintsTheValueAloneFromBothSchemes) {
  CliEnv env;
  LoadCities(env);
  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "city_to_country", "Lyon", "France");
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");
  ExpectValue(env, "iptolocation", "10.0.0.2", "Oslo");
}

TEST(CliLookup, MatchesTheMapNameCaseInsensitively) {
  CliEnv env;
  LoadCities(env);
  ExpectValue(env, "CITY_TO_COUNTRY", "Paris", "France");
  ExpectValue(env, "City_To_Country", "Lyon", "France");
  ExpectValue(env, "IPToLocation", "10.0.0.2", "Oslo");
}

TEST(CliLookup, MatchesKeysCaseSensitively) {
  CliEnv env;
  LoadCities(env);
  ExpectValue(env, "city_to_country", "PARIS", "Texas");
  const ProcessResult r = env.Lookup("city_to_country", "paris");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no key 'paris'"));
  EXPECT_EQ(r.out, "");
}

TEST(CliLookup, ReportsAnAbsentKeyWithExitOne) {
  CliEnv env;
  LoadCities(env);
  for (const char* map : {"city_to_country", "iptolocation"}) {
    const ProcessResult r = env.Lookup(map, "Nowhere");
    EXPECT_EQ(r.exit_code, 1) << map;
    EXPECT_THAT(r.err, HasSubstr(map));
    EXPECT_THAT(r.err, HasSubstr("no key 'Nowhere'"));
    EXPECT_EQ(r.out, "") << map;
  }
}

// A map with no data on this node is not a miss (issue 38, 14): a pipeline pointed at the wrong home, or run
// before the first merge, would tag every event as a miss without a word.
TEST(CliLookup, AMapWithNoDataHereIsAnErrorNamingTheMapAndTheHomeNotAMiss) {
  CliEnv env;
  LoadCities(env);
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"lookup", "employees", "1001"},
                                             {"lookup", "employees", "1001", "1002", "--format", "json"},
                                             {"query", "employees"}}) {
    const ProcessResult r = env.Run(command);
    EXPECT_EQ(r.exit_code, 2) << command[0];
    EXPECT_THAT(r.err, HasSubstr("map employees has no data on this node (home " + env.home() + ")"));
    EXPECT_THAT(r.err, HasSubstr("check --home and the config's home"));
    EXPECT_EQ(r.out, "") << command[0];
  }
}

TEST(CliLookup, RefusesAnUnknownMapWithExitTwo) {
  CliEnv env;
  LoadCities(env);
  for (const char* map : {"no_such_map", "City-X"}) {
    const ProcessResult r = env.Lookup(map, "Paris");
    EXPECT_EQ(r.exit_code, 2) << map;
    EXPECT_THAT(r.err, HasSubstr("is not in the config"));
    EXPECT_THAT(r.err, HasSubstr("city_to_country")) << "should list the configured maps";
    EXPECT_EQ(r.out, "") << map;
  }
  EXPECT_THAT(env.Lookup("no_such_map", "Paris").err, HasSubstr("map 'no_such_map'"));
}

TEST(CliLookup, PrintsAnXmlValueAsOneWellFormedFragmentWithItsNamespaces) {
  CliEnv env;
  const std::string file =
      env.Write("xml.xml",
                "<referenceData xmlns=\"reference-data:2\" xmlns:g=\"urn:geo\">\n"
                // A prefix declared on the root, and an element named value in the document's default namespace.
                "  <reference><map>iptolocation</map><key>10.0.0.1</key><value><g:loc g:kind=\"city\"><g:city>Berlin"
                "</g:city><value>inner</value></g:loc></value></reference>\n"
                // A namespace declared inside the value, and escaped text and attributes.
                "  <reference><map>city_to_country</map><key>Paris</key><value><c:country xmlns:c=\"urn:c\" "
                "c:note=\"&quot;a&lt;b&quot;\">France &amp; Monaco &lt;3</c:country></value></reference>\n"
                "</referenceData>\n");
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = env.Lookup("iptolocation", "10.0.0.1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "<g:loc xmlns:g=\"urn:geo\" g:kind=\"city\"><g:city>Berlin</g:city>"
            "<value xmlns=\"reference-data:2\">inner</value></g:loc>\n");
  EXPECT_EQ(XmlFragmentError(r.out), "") << r.out;
  EXPECT_EQ(r.err, "");

  r = env.Lookup("city_to_country", "Paris");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "<c:country xmlns:c=\"urn:c\" c:note=\"&quot;a&lt;b&quot;\">France &amp; Monaco &lt;3</c:country>\n");
  EXPECT_EQ(XmlFragmentError(r.out), "") << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CliLookup, PrintsATextValueUnescaped) {
  CliEnv env;
  const std::string file =
      env.Write("text.xml", ReferenceData(Ref("city_to_country", "Paris", "France &amp; Monaco &lt;3")));
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "France & Monaco <3");
}

TEST(CliLookup, RefusesAShardThatIsNotLmdb) {
  CliEnv env;
  LoadCities(env);
  WriteFile(env.shard_data("city_to_country"), "junk, not an LMDB file\n");
  const ProcessResult r = env.Lookup("city_to_country", "Paris");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(env.shard_data("city_to_country")));
  EXPECT_THAT(r.err, HasSubstr("not an LMDB file"));
  EXPECT_EQ(r.out, "");
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");  // the other map is unaffected
}

TEST(CliLookup, RefusesAnEmptyShardFileAndLeavesItEmpty) {
  // LMDB would take a 0-byte data.mdb for a new environment and initialise it.
  CliEnv env;
  LoadCities(env);
  const std::string data = env.shard_data("city_to_country");
  std::filesystem::resize_file(data, 0);
  const ProcessResult r = env.Lookup("city_to_country", "Paris");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(data + ": not an LMDB file (0 bytes)"));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::filesystem::file_size(data), 0u);
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");  // the other map is unaffected
}

TEST(CliLookup, RefusesAShardOfRandomBytes) {
  CliEnv env;
  LoadCities(env);
  std::string junk(64 * 1024, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 2654435761u) >> 13);
  WriteFile(env.shard_data("iptolocation"), junk);
  const ProcessResult r = env.Lookup("iptolocation", "10.0.0.1");
  EXPECT_GE(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(env.shard_data("iptolocation")));
  EXPECT_EQ(r.out, "");
}

// Loading such a key is refused (see CliLoad); looking one up is a miss, since it can never be stored: an event
// stream with an odd long key must not stop an enrichment pipeline.
TEST(CliLookup, ADirectKeyLongerThanLmdbAllowsIsAMiss) {
  CliEnv env;
  LoadCities(env);
  const ProcessResult r = env.Lookup("iptolocation", std::string(512, 'k'));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("iptolocation: no key"));
  EXPECT_EQ(r.out, "");
}

// The text of the first ```LANG block of README.md after `after`.
std::string ReadmeBlock(const std::string& lang, const std::string& after = "") {
  const std::string readme = testing::ReadFile(std::string(PLANB_SOURCE_DIR) + "/README.md");
  const size_t from = readme.find(after);
  const size_t start = readme.find("```" + lang + "\n", from == std::string::npos ? 0 : from);
  if (start == std::string::npos) return "";
  const size_t body = start + 4 + lang.size();
  return readme.substr(body, readme.find("```", body) - body);
}

// Issue 11: the README's XML example named map cityToCountry beside the config's [map.city_to_country], so
// following it failed. Its map section and its XML, as printed, load and look up.
TEST(CliLookup, TheReadmeExampleWorksAsWritten) {
  const std::string ini = ReadmeBlock("ini", "### Configuration (INI)");
  const size_t section = ini.find("[map.city_to_country]");
  ASSERT_NE(section, std::string::npos) << ini;
  CliEnv env(ini.substr(section));  // without home and plugin_dir, which name system paths
  const ProcessResult load = env.Load({env.Write("readme.xml", ReadmeBlock("xml", "### Input"))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ExpectValue(env, "city_to_country", "cardiff", "Wales");
  // The <value type="json"> record: stored minified, answered nested.
  ExpectValue(env, "city_to_country", "london", R"({"country":"GB","population":8982000})");
  const ProcessResult json = env.Run({"lookup", "city_to_country", "london", "--format", "json"});
  EXPECT_THAT(json.out, HasSubstr(R"("value":{"country":"GB","population":8982000})")) << json.out;
}

// Issue 11: KEY<TAB>VALUE lines cannot carry a value that spans lines (an XML fragment written over several
// lines). --format json and csv print one record per key asked, absent ones included.
class CliLookupFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string multi_line =
        "  <reference><map>city_to_country</map><key>Paris, \"FR\"</key>"
        "<value><a xmlns=\"urn:a\">\n  <b>France</b>\n</a></value></reference>\n";
    const std::string file =
        env_.Write("multi.xml", ReferenceData(multi_line + Ref("city_to_country", "Lyon", "France")));
    const ProcessResult r = env_.Load({file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ProcessResult Lookup(std::vector<std::string> extra) const {
    std::vector<std::string> args{"lookup", "city_to_country", "Paris, \"FR\"", "Atlantis", "Lyon"};
    args.insert(args.end(), extra.begin(), extra.end());
    return env_.Run(args);
  }
  CliEnv env_;
};

TEST_F(CliLookupFormat, JsonIsAnArrayOfOneObjectPerKeyWithKeyValueAndFound) {
  const ProcessResult r = Lookup({"--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "planb: city_to_country: no key 'Atlantis'\n");
  EXPECT_EQ(r.out,
            "[\n"
            " {\"key\":\"Paris, \\\"FR\\\"\","
            "\"value\":\"<a xmlns=\\\"urn:a\\\">\\n  <b>France</b>\\n</a>\",\"found\":true},\n"
            " {\"key\":\"Atlantis\",\"value\":null,\"found\":false},\n"
            " {\"key\":\"Lyon\",\"value\":\"France\",\"found\":true}\n"
            "]\n");
  const nlohmann::json parsed = nlohmann::json::parse(r.out);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0]["value"], "<a xmlns=\"urn:a\">\n  <b>France</b>\n</a>");
  EXPECT_EQ(XmlFragmentError(parsed[0]["value"].get<std::string>()), "");
  // One key: still an array, so a script's parsing does not depend on how many keys it asked for.
  const ProcessResult one = env_.Run({"lookup", "city_to_country", "Lyon", "--format", "json"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "[\n {\"key\":\"Lyon\",\"value\":\"France\",\"found\":true}\n]\n");
}

TEST_F(CliLookupFormat, CsvIsRfc4180WithAHeaderAndOneRecordPerKey) {
  const ProcessResult r = Lookup({"--format", "csv"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "key,value,found\n"
            "\"Paris, \"\"FR\"\"\",\"<a xmlns=\"\"urn:a\"\">\n  <b>France</b>\n</a>\",true\n"
            "Atlantis,,false\n"
            "Lyon,France,true\n");
}

TEST_F(CliLookupFormat, TextIsTheDefaultAndUnchanged) {
  const ProcessResult text = Lookup({"--format", "text"});
  const ProcessResult plain = Lookup({});
  EXPECT_EQ(text.out, plain.out);
  EXPECT_EQ(text.err, plain.err);
  EXPECT_EQ(plain.out, "Paris, \"FR\"\t<a xmlns=\"urn:a\">\n  <b>France</b>\n</a>\nLyon\tFrance\n");
  EXPECT_EQ(plain.exit_code, 1);
}

TEST_F(CliLookupFormat, RefusesAnUnknownFormat) {
  for (const char* format : {"table", "xml", "JSON", ""}) {
    const ProcessResult r = Lookup({"--format", format});
    EXPECT_EQ(r.exit_code, 2) << format;
    EXPECT_THAT(r.err, HasSubstr("--format: '" + std::string(format) + "' is not one of text, json, csv"));
    EXPECT_EQ(r.out, "") << format;
  }
}

TEST(CliLookupFormats, SessionsGiveStartAndEndAndNumberKeysAreJsonNumbers) {
  CliEnv env(testing::kTypedMapsConfig);
  const std::string file = env.Write(
      "s.xml", ReferenceData(testing::Lines({testing::SessionEvent("ss_hashed", "s", "2024-01-01T10:00:00Z", "15m"),
                                             testing::RangeRef("rg", "", "-10", "10", "small")})));
  ASSERT_EQ(env.Load({file}).exit_code, 0);
  ProcessResult r = env.Run({"lookup", "ss_hashed", "s", "t", "--time", "2024-01-01T10:05:00Z", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "[\n {\"key\":\"s\",\"start\":\"2024-01-01T10:00:00.000Z\",\"end\":\"2024-01-01T10:15:00.000Z\","
            "\"found\":true},\n {\"key\":\"t\",\"start\":null,\"end\":null,\"found\":false}\n]\n");
  r = env.Run({"lookup", "ss_hashed", "s", "t", "--time", "2024-01-01T10:05:00Z", "--format", "csv"});
  EXPECT_EQ(r.out, "key,start,end,found\ns,2024-01-01T10:00:00.000Z,2024-01-01T10:15:00.000Z,true\nt,,,false\n");
  r = env.Run({"lookup", "rg", "-5", "+5", "11", "--format", "json"});
  EXPECT_EQ(r.out,
            "[\n {\"key\":-5,\"value\":\"small\",\"found\":true},\n {\"key\":5,\"value\":\"small\",\"found\":true},\n"
            " {\"key\":11,\"value\":null,\"found\":false}\n]\n");
  // A map with no data yet: an error, with nothing on stdout.
  r = env.Run({"lookup", "st_hashed", "a", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
}

// Issue 11: a session miss said "no key" even when the key has sessions, only none at that time.
TEST(CliLookup, ASessionMissSaysWhetherTheKeyHasNoSessionThenOrNoSessionsAtAll) {
  CliEnv env(testing::kTypedMapsConfig);
  const std::string file = env.Write(
      "s.xml", ReferenceData(testing::Lines({testing::SessionEvent("ss_hashed", "s", "2024-01-01T10:00:00Z", "15m"),
                                             testing::SessionEvent("ss_direct", "s", "2024-01-01T10:00:00Z", "15m")})));
  ASSERT_EQ(env.Load({file}).exit_code, 0);
  for (const std::string map : {"ss_hashed", "ss_direct"}) {
    ProcessResult r = env.Run({"lookup", map, "s", "t", "--time", "2024-01-01T11:00:00+00:00"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "planb: " + map + ": no session at 2024-01-01T11:00:00.000Z for key 's'\n" + "planb: " + map +
                         ": no key 't' at 2024-01-01T11:00:00.000Z\n");
    r = env.Run({"lookup", map, "s"});  // now, long after the session
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, ::testing::StartsWith("planb: " + map + ": no session at "));
    EXPECT_THAT(r.err, HasSubstr(" for key 's'\n"));
  }
}

// Issue 11: the docs said 511 bytes for every direct map, but a type that appends to the key (temporal: the time;
// session: start and end) leaves less, less the 2-byte length prefix: state 511, temporal 501, session 493.
TEST(CliLookup, TheDirectKeyLimitIsPerStoreTypeAsDocumented) {
  const struct {
    const char* map;
    size_t limit;
  } kLimits[] = {{"st_direct", 511}, {"tm_direct", 501}, {"ss_direct", 493}};
  for (const auto& [map, limit] : kLimits) {
    CliEnv env(testing::kTypedMapsConfig);
    const std::string key(limit, 'k');
    auto element = [&](const std::string& k) {
      return std::string(map) == "ss_direct" ? testing::SessionEvent(map, k, "2024-01-01T00:00:00Z", "1h")
                                              : testing::TimedRef(map, "2024-01-01T00:00:00Z", k, "v");
    };
    ProcessResult r = env.Load({env.Write("ok.xml", ReferenceData(element(key)))});
    ASSERT_EQ(r.exit_code, 0) << map << ": " << r.err;
    std::vector<std::string> lookup{"lookup", map, key};
    if (std::string(map) != "st_direct") lookup.insert(lookup.end(), {"--time", "2024-01-01T00:30:00Z"});
    r = env.Run(lookup);
    EXPECT_EQ(r.exit_code, 0) << map << ": " << r.err;
    r = env.Load({env.Write("long.xml", ReferenceData(element(key + "k")))});
    EXPECT_EQ(r.exit_code, 2) << map;
    EXPECT_THAT(r.err, HasSubstr("key of " + std::to_string(limit + 1) + " bytes is too long for the direct scheme "
                                 "(at most " + std::to_string(limit) + " bytes)")) << map;
  }
  // README's table states the same numbers.
  const std::string readme = testing::ReadFile(std::string(PLANB_SOURCE_DIR) + "/README.md");
  EXPECT_THAT(readme, HasSubstr("state: 511 bytes, temporal: 501, session: 493"));
}

}  // namespace
}  // namespace planb
