// Bad input to load, lookup and query on the store types: exit 2 with a message naming the input, nothing on
// stdout, and after a refused load every shard byte-identical to before it (nothing half-written).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SessionEvent;
using testing::ShardDataFiles;
using testing::TimedRef;
using Strings = std::vector<std::string>;

// A valid record for every loaded map of kTypedMapsConfig, prefixed so that reloads can tell batches apart.
Strings ValidRecords(const std::string& tag) {
  return {TimedRef("st_hashed", "", "k", tag),
          TimedRef("st_direct", "", "k", tag),
          TimedRef("tm_hashed", "2024-01-01T00:00:00Z", "k", tag),
          TimedRef("tm_direct", "2024-01-01T00:00:00Z", "k", tag),
          RangeRef("rg", "", "1", "10", tag),
          RangeRef("trg", "2024-01-01T00:00:00Z", "1", "10", tag),
          SessionEvent("ss_hashed", "k", "2024-01-01T00:00:00Z", "1h"),
          SessionEvent("ss_direct", "k", "2024-01-01T00:00:00Z", "1h")};
}

// An env whose loaded maps all hold one batch.
class Loaded {
 public:
  Loaded() : env_(kTypedMapsConfig) {
    const ProcessResult r = env_.Load({env_.Write("base.xml", ReferenceData(Lines(ValidRecords("base"))))});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  const CliEnv& env() const { return env_; }

 private:
  CliEnv env_;
};

// Loads a file of valid records for every map with `bad` after them (so line 10 of the file); expects exit 2, the
// file name, its line and every one of `mentions` in the message, and every shard unchanged.
void ExpectLoadRefused(const std::string& bad, const Strings& mentions) {
  Loaded loaded;
  const CliEnv& env = loaded.env();
  const std::map<std::string, std::string> before = ShardDataFiles(env.home());
  ASSERT_EQ(before.size(), 8u);
  Strings elements = ValidRecords("new");
  elements.push_back(bad);
  const std::string file = env.Write("bad_input.xml", ReferenceData(Lines(elements)));
  const ProcessResult r = env.Load({file});
  EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("bad_input.xml:10:")) << bad;
  for (const std::string& mention : mentions) EXPECT_THAT(r.err, HasSubstr(mention)) << bad;
  EXPECT_TRUE(ShardDataFiles(env.home()) == before) << "a shard changed after a refused load: " << bad;
  const ProcessResult lookup = env.Lookup("st_direct", "k");
  EXPECT_EQ(lookup.out, "base\n") << bad;
}

TEST(CliBadInput, RefusesASessionWithAnUnreadableTimeout) {
  for (const std::string timeout : {"soon", "15x", "-5m", "PT", ""}) {
    if (timeout.empty()) {
      ExpectLoadRefused(
          "  <session><map>ss_direct</map><key>k</key><time>2024-01-01T00:00:00Z</time>"
          "<timeout></timeout></session>",
          {"<timeout>"});
    } else {
      ExpectLoadRefused(SessionEvent("ss_direct", "k", "2024-01-01T00:00:00Z", timeout),
                        {"<timeout>", "'" + timeout + "'"});
    }
  }
}

TEST(CliBadInput, RefusesFromGreaterThanTo) {
  ExpectLoadRefused(RangeRef("rg", "", "20", "10", "x"), {"rg", "20", "10", "greater"});
  ExpectLoadRefused(RangeRef("trg", "2024-01-01T00:00:00Z", "-1", "-2", "x"), {"trg", "-1", "-2", "greater"});
  ExpectLoadRefused("  <reference><map>rg</map><from>7</from><to>6</to><value>x</value></reference>", {"rg", "7", "6"});
}

TEST(CliBadInput, RefusesANonNumericKeyInARangedMap) {
  ExpectLoadRefused(TimedRef("rg", "", "abc", "x"), {"rg", "<key>", "'abc'"});
  ExpectLoadRefused(TimedRef("trg", "2024-01-01T00:00:00Z", "1.5", "x"), {"trg", "'1.5'"});
  ExpectLoadRefused(RangeRef("rg", "", "one", "10", "x"), {"<from>", "'one'"});
  ExpectLoadRefused(RangeRef("rg", "", "1", "ten", "x"), {"<to>", "'ten'"});
  ExpectLoadRefused(RangeRef("rg", "", "1", "9223372036854775808", "x"), {"'9223372036854775808'"});
}

TEST(CliBadInput, RefusesATimeThatIsNotIso8601) {
  ExpectLoadRefused(TimedRef("tm_direct", "yesterday", "k", "x"), {"<time>", "'yesterday'"});
  ExpectLoadRefused(TimedRef("tm_hashed", "2024-13-01T00:00:00Z", "k", "x"), {"'2024-13-01T00:00:00Z'"});
  ExpectLoadRefused(RangeRef("trg", "01/02/2024", "1", "2", "x"), {"'01/02/2024'"});
  ExpectLoadRefused(SessionEvent("ss_hashed", "k", "noon"), {"<time>", "'noon'"});
}

TEST(CliBadInput, RefusesASessionInAMapThatIsNotASessionMap) {
  for (const std::string map : {"st_hashed", "st_direct", "tm_hashed", "tm_direct", "rg", "trg"}) {
    ExpectLoadRefused(SessionEvent(map, "1", "2024-01-01T00:00:00Z", "1h"), {"map " + map, "<session>"});
  }
}

TEST(CliBadInput, RefusesAReferenceInASessionMap) {
  for (const std::string map : {"ss_hashed", "ss_direct"}) {
    ExpectLoadRefused(TimedRef(map, "2024-01-01T00:00:00Z", "k", "x"), {"map " + map, "<reference>"});
  }
}

TEST(CliBadInput, RefusesARangeInAMapKeyedByText) {
  for (const std::string map : {"st_hashed", "st_direct", "tm_hashed", "tm_direct"}) {
    ExpectLoadRefused(RangeRef(map, "2024-01-01T00:00:00Z", "1", "2", "x"), {"map " + map, "<range>"});
  }
}

// ---- query ----

void ExpectQueryRefused(const CliEnv& env, const std::string& map, const Strings& options, const Strings& mentions) {
  Strings args{"query", map};
  args.insert(args.end(), options.begin(), options.end());
  const ProcessResult r = env.Run(args);
  EXPECT_EQ(r.exit_code, 2) << map << ": " << r.out << r.err;
  EXPECT_EQ(r.out, "") << map;
  for (const std::string& mention : mentions) EXPECT_THAT(r.err, HasSubstr(mention)) << map;
}

TEST(CliBadInput, QueryRefusesAnUnknownFieldNamingItsColumn) {
  Loaded loaded;
  ExpectQueryRefused(loaded.env(), "st_direct", {"--where", "Kye = 'a'"},
                     {"column 1:", "'Kye'", "Key, ValueType, Value"});
  ExpectQueryRefused(loaded.env(), "st_direct", {"--where", "Value = 'x' and Kye = 'a'"}, {"column 17:", "'Kye'"});
  // A field of another type is unknown here.
  ExpectQueryRefused(loaded.env(), "rg", {"--where", "Key = 'a'"}, {"column 1:", "'Key'", "KeyStart"});
  ExpectQueryRefused(loaded.env(), "st_hashed", {"--where", "EffectiveTime > '2024-01-01'"},
                     {"column 1:", "'EffectiveTime'"});
  ExpectQueryRefused(loaded.env(), "ss_hashed", {"--where", "Value = 'x'"}, {"column 1:", "'Value'"});
}

TEST(CliBadInput, QueryRefusesATypeMismatchNamingItsColumn) {
  Loaded loaded;
  const CliEnv& env = loaded.env();
  ExpectQueryRefused(env, "rg", {"--where", "KeyStart = 'abc'"}, {"column 12:", "KeyStart", "'abc'"});
  ExpectQueryRefused(env, "rg", {"--where", "Value = 'x' and KeyStart = 'abc'"}, {"column 28:", "'abc'"});
  ExpectQueryRefused(env, "trg", {"--where", "KeyEnd > 'abc'"}, {"column 10:", "KeyEnd"});
  ExpectQueryRefused(env, "tm_direct", {"--where", "Value > 5"}, {"column 9:", "Value"});
  ExpectQueryRefused(env, "tm_direct", {"--where", "EffectiveTime > 'notadate'"}, {"column 17:", "'notadate'"});
  ExpectQueryRefused(env, "ss_direct", {"--where", "Start < 5"}, {"column 9:", "Start"});
  ExpectQueryRefused(env, "tm_direct", {"--where", "EffectiveTime contains 'x'"}, {"column 15:", "contains"});
  ExpectQueryRefused(env, "rg", {"--where", "KeyStart startsWith '1'"}, {"column 10:", "startsWith"});
}

TEST(CliBadInput, QueryRefusesAnUnknownFormat) {
  Loaded loaded;
  ExpectQueryRefused(loaded.env(), "st_direct", {"--format", "xml"}, {"--format", "'xml'"});
  ExpectQueryRefused(loaded.env(), "st_direct", {"--format", "CSV "}, {"--format", "'CSV '"});
}

TEST(CliBadInput, QueryRefusesALimitThatIsNotAPositiveWholeNumber) {
  Loaded loaded;
  for (const std::string limit : {"0", "-1", "abc", "1.5", "", "99999999999999999999999"}) {
    ExpectQueryRefused(loaded.env(), "st_direct", {"--limit", limit}, {"--limit", "'" + limit + "'"});
    ExpectQueryRefused(loaded.env(), "st_direct", {"--limit=" + limit}, {"--limit"});
  }
}

// A map with no data here is an error, not an empty result (issue 38, 14): in every format, nothing on stdout.
TEST(CliBadInput, QueryWhereOnAMapWithNoDataIsAnErrorNamingTheMapAndTheHome) {
  CliEnv env(kTypedMapsConfig);
  for (const std::string map : {"tm_unused", "rg_unused", "st_hashed", "ss_direct"}) {
    const std::string where = map == "rg_unused" ? "KeyStart between 1 and 5" : "Key = 'x'";
    for (const char* format : {"json", "table", "csv"}) {
      const ProcessResult r = env.Run({"query", map, "--where", where, "--format", format});
      EXPECT_EQ(r.exit_code, 2) << map << " " << format << ": " << r.err;
      EXPECT_EQ(r.out, "") << map << " " << format;
      EXPECT_THAT(r.err, HasSubstr("planb: map " + map + " has no data on this node (home " + env.home() + ")"));
    }
  }
  // The expression is still checked.
  ExpectQueryRefused(env, "tm_unused", {"--where", "Nope = 1"}, {"column 1:", "'Nope'"});
}

// ---- lookup ----

void ExpectLookupRefused(const CliEnv& env, const Strings& args, const Strings& mentions) {
  Strings all{"lookup"};
  all.insert(all.end(), args.begin(), args.end());
  const ProcessResult r = env.Run(all);
  EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.out << r.err;
  EXPECT_EQ(r.out, "") << args[0];
  for (const std::string& mention : mentions) EXPECT_THAT(r.err, HasSubstr(mention)) << args[0];
}

TEST(CliBadInput, LookupRefusesAnUnparseableTime) {
  Loaded loaded;
  for (const std::string map : {"tm_hashed", "tm_direct", "ss_hashed", "ss_direct"}) {
    for (const std::string time : {"notatime", "2024-01-01 10:00", "2024-02-30T00:00:00Z", ""}) {
      ExpectLookupRefused(loaded.env(), {map, "k", "--time", time}, {"--time", "'" + time + "'"});
    }
  }
  ExpectLookupRefused(loaded.env(), {"trg", "5", "--time", "soon"}, {"--time", "'soon'"});
}

TEST(CliBadInput, LookupRefusesATimeOnAMapWithoutTime) {
  Loaded loaded;
  for (const std::string map : {"st_hashed", "st_direct", "rg"}) {
    const std::string key = map == "rg" ? "5" : "k";
    ExpectLookupRefused(loaded.env(), {map, key, "--time", "2024-01-01T00:00:00Z"}, {"--time", map});
  }
}

TEST(CliBadInput, LookupRefusesANonNumericKeyOnARangedMap) {
  Loaded loaded;
  for (const std::string map : {"rg", "trg"}) {
    for (const std::string key : {"abc", "1.5", "5x", "9223372036854775808", "-9223372036854775809", ""}) {
      ExpectLookupRefused(loaded.env(), {map, key}, {"KEY '" + key + "'", map});
    }
  }
}

// Issue 11: an entity declared in a DTD loaded with exit 0 (an external one as nothing: `a&ext;b` became `ab`).
// Refused with the file, line and column; the valid file before it is not stored either (nothing staged).
TEST(CliBadInput, RefusesADtdDeclaringEntitiesNamingTheFileLineAndColumn) {
  Loaded loaded;
  const CliEnv& env = loaded.env();
  const std::map<std::string, std::string> before = ShardDataFiles(env.home());
  const std::string good = env.Write("good.xml", ReferenceData(Lines(ValidRecords("new"))));
  const std::string body =
      ReferenceData("  <reference><map>st_direct</map><key>k</key><value>a&ext;b</value></reference>");
  for (const std::string& entity :
       {std::string("<!ENTITY ext SYSTEM 'file:///etc/hostname'>"), std::string("<!ENTITY ext 'inner'>")}) {
    const std::string bad = env.Write("entity.xml", "<?xml version='1.0'?>\n<!DOCTYPE referenceData [\n  " +
                                                        entity + "\n]>\n" + body);
    const ProcessResult r = env.Load({good, bad});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, ::testing::ContainsRegex("entity\\.xml:3:[0-9]+: entity declaration 'ext' in the DTD"));
    EXPECT_TRUE(ShardDataFiles(env.home()) == before) << "a shard changed after a refused load";
    EXPECT_EQ(env.Lookup("st_direct", "k").out, "base\n");
  }
}

}  // namespace
}  // namespace planb
