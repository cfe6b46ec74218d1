// `planb lookup MAP KEY`: the value alone on stdout and exit 0; a missing key is exit 1 with a message on stderr
// and nothing on stdout; any error (unknown map, corrupt shard, a key the scheme refuses) is exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "host/cli/cli_test_env.h"

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

TEST(CliLookup, ReportsAKeyOfAMapWithNothingLoadedWithExitOne) {
  CliEnv env;
  LoadCities(env);
  const ProcessResult r = env.Lookup("employees", "1001");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("employees"));
  EXPECT_THAT(r.err, HasSubstr("no data loaded yet"));
  EXPECT_EQ(r.out, "");
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

}  // namespace
}  // namespace planb
