// `planb lookup MAP KEY [--time T]` on every store type and key scheme, through the real binary: temporal values
// at, between and before effective times; ranged keys as numbers (negative too) with nested ranges; sessions
// printed as "start end" with both ends inclusive; and a second batch merged over the first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::kSessionMaps;
using testing::kStateMaps;
using testing::kTemporalMaps;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SessionEvent;
using testing::TimedRef;

void Load(const CliEnv& env, const std::string& name, const std::vector<std::string>& elements) {
  const ProcessResult r = env.Load({env.Write(name, ReferenceData(Lines(elements)))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

ProcessResult LookupAt(const CliEnv& env, const std::string& map, const std::string& key, const std::string& time) {
  return env.Run({"lookup", map, key, "--time", time});
}

// Exit 0 with `expected` alone on stdout.
void ExpectFound(const ProcessResult& r, const std::string& expected, const std::string& what) {
  EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
  EXPECT_EQ(r.out, expected + "\n") << what;
  EXPECT_EQ(r.err, "") << what;
}

// Exit 1, nothing on stdout, the key named on stderr.
void ExpectNotFound(const ProcessResult& r, const std::string& key, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << what << ": " << r.out << r.err;
  EXPECT_EQ(r.out, "") << what;
  EXPECT_THAT(r.err, HasSubstr("'" + key + "'")) << what;
}

TEST(CliStoreTypes, StateLooksUpBothSchemesAndMergesASecondBatch) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> first, second;
  for (const std::string& map : kStateMaps) {
    first.push_back(TimedRef(map, "", "Paris", "France"));
    first.push_back(TimedRef(map, "", "Lyon", "France"));
    second.push_back(TimedRef(map, "", "Paris", "Texas"));
    second.push_back(TimedRef(map, "", "Oslo", "Norway"));
  }
  Load(env, "first.xml", first);
  for (const std::string& map : kStateMaps) ExpectFound(env.Lookup(map, "Paris"), "France", map);
  Load(env, "second.xml", second);
  for (const std::string& map : kStateMaps) {
    ExpectFound(env.Lookup(map, "Paris"), "Texas", map + " Paris after the second batch");
    ExpectFound(env.Lookup(map, "Lyon"), "France", map + " Lyon kept");
    ExpectFound(env.Lookup(map, "Oslo"), "Norway", map + " Oslo added");
    ExpectNotFound(env.Lookup(map, "Rome"), "Rome", map);
  }
}

TEST(CliStoreTypes, TemporalFindsTheLatestValueAtOrBeforeTheTime) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> elements;
  for (const std::string& map : kTemporalMaps) {
    elements.push_back(TimedRef(map, "2024-01-01T00:00:00.000Z", "user1", "sales"));
    elements.push_back(TimedRef(map, "2024-02-01T12:00:00.500Z", "user1", "support"));
    elements.push_back(TimedRef(map, "2024-01-15T00:00:00.000Z", "user2", "it"));
  }
  Load(env, "temporal.xml", elements);
  for (const std::string& map : kTemporalMaps) {
    ExpectNotFound(LookupAt(env, map, "user1", "2023-12-31T23:59:59.999Z"), "user1", map + " before the first");
    ExpectFound(LookupAt(env, map, "user1", "2024-01-01T00:00:00.000Z"), "sales", map + " at the first instant");
    ExpectFound(LookupAt(env, map, "user1", "2024-01-01T00:00:00Z"), "sales", map + " at the first, no ms");
    ExpectFound(LookupAt(env, map, "user1", "2024-01-20T08:00:00.000Z"), "sales", map + " between");
    ExpectFound(LookupAt(env, map, "user1", "2024-02-01T12:00:00.499Z"), "sales", map + " 1ms before the second");
    ExpectFound(LookupAt(env, map, "user1", "2024-02-01T12:00:00.500Z"), "support", map + " at the second");
    ExpectFound(LookupAt(env, map, "user1", "2030-01-01T00:00:00.000Z"), "support", map + " after the second");
    ExpectFound(env.Lookup(map, "user1"), "support", map + " without --time (now)");
    ExpectNotFound(LookupAt(env, map, "user2", "2024-01-14T23:59:59.999Z"), "user2", map + " user2 before");
    ExpectFound(LookupAt(env, map, "user2", "2024-01-15T00:00:00.000Z"), "it", map + " user2 at");
    ExpectNotFound(LookupAt(env, map, "user3", "2030-01-01T00:00:00.000Z"), "user3", map + " absent key");
  }
}

TEST(CliStoreTypes, TemporalDefaultTimeIsNowSoAFutureValueIsNotYetSeen) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> elements;
  for (const std::string& map : kTemporalMaps) {
    elements.push_back(TimedRef(map, "2020-01-01T00:00:00.000Z", "k", "past"));
    elements.push_back(TimedRef(map, "2999-01-01T00:00:00.000Z", "k", "future"));
    elements.push_back(TimedRef(map, "2999-01-01T00:00:00.000Z", "only_future", "future"));
  }
  Load(env, "future.xml", elements);
  for (const std::string& map : kTemporalMaps) {
    ExpectFound(env.Lookup(map, "k"), "past", map);
    ExpectNotFound(env.Lookup(map, "only_future"), "only_future", map);
    ExpectFound(LookupAt(env, map, "only_future", "2999-01-01T00:00:00.000Z"), "future", map);
  }
}

TEST(CliStoreTypes, TemporalOrdersTimesBeforeTheEpoch) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> elements;
  for (const std::string& map : kTemporalMaps) {
    elements.push_back(TimedRef(map, "1970-01-01T00:00:00.000Z", "k", "epoch"));
    elements.push_back(TimedRef(map, "1969-12-31T23:59:59.999Z", "k", "pre"));
    elements.push_back(TimedRef(map, "1900-01-01T00:00:00.000Z", "k", "old"));
  }
  Load(env, "epoch.xml", elements);
  for (const std::string& map : kTemporalMaps) {
    ExpectNotFound(LookupAt(env, map, "k", "1899-12-31T23:59:59.999Z"), "k", map);
    ExpectFound(LookupAt(env, map, "k", "1900-01-01T00:00:00.000Z"), "old", map);
    ExpectFound(LookupAt(env, map, "k", "1969-12-31T23:59:59.998Z"), "old", map);
    ExpectFound(LookupAt(env, map, "k", "1969-12-31T23:59:59.999Z"), "pre", map);
    ExpectFound(LookupAt(env, map, "k", "1970-01-01T00:00:00.000Z"), "epoch", map);
  }
}

TEST(CliStoreTypes, TemporalMergesASecondBatchOfVersions) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> first, second;
  for (const std::string& map : kTemporalMaps) {
    first.push_back(TimedRef(map, "2024-01-01T00:00:00.000Z", "k", "v1"));
    first.push_back(TimedRef(map, "2024-03-01T00:00:00.000Z", "k", "v3"));
    second.push_back(TimedRef(map, "2024-02-01T00:00:00.000Z", "k", "v2"));        // between the two
    second.push_back(TimedRef(map, "2024-03-01T00:00:00.000Z", "k", "v3-fixed"));  // same instant: replaced
  }
  Load(env, "first.xml", first);
  ExpectFound(LookupAt(env, "tm_direct", "k", "2024-02-15T00:00:00.000Z"), "v1", "before the second batch");
  Load(env, "second.xml", second);
  for (const std::string& map : kTemporalMaps) {
    ExpectFound(LookupAt(env, map, "k", "2024-01-15T00:00:00.000Z"), "v1", map);
    ExpectFound(LookupAt(env, map, "k", "2024-02-15T00:00:00.000Z"), "v2", map);
    ExpectFound(LookupAt(env, map, "k", "2024-03-01T00:00:00.000Z"), "v3-fixed", map);
  }
}

TEST(CliStoreTypes, RangedLooksUpRangeEdgesAndNegativeKeys) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "ranged.xml",
       {RangeRef("rg", "", "1000", "1999", "thousands"), RangeRef("rg", "", "-100", "-50", "negative"),
        TimedRef("rg", "", "-5", "minus five"), TimedRef("rg", "", "7", "seven")});
  ExpectFound(env.Lookup("rg", "1000"), "thousands", "from edge");
  ExpectFound(env.Lookup("rg", "1999"), "thousands", "to edge");
  ExpectFound(env.Lookup("rg", "1500"), "thousands", "inside");
  ExpectNotFound(env.Lookup("rg", "999"), "999", "below from");
  ExpectNotFound(env.Lookup("rg", "2000"), "2000", "above to");
  ExpectFound(env.Lookup("rg", "-100"), "negative", "negative from edge");
  ExpectFound(env.Lookup("rg", "-50"), "negative", "negative to edge");
  ExpectFound(env.Lookup("rg", "-75"), "negative", "negative inside");
  ExpectNotFound(env.Lookup("rg", "-101"), "-101", "below a negative range");
  ExpectNotFound(env.Lookup("rg", "-49"), "-49", "above a negative range");
  ExpectFound(env.Lookup("rg", "-5"), "minus five", "a <key> is the range [key, key]");
  ExpectNotFound(env.Lookup("rg", "-4"), "-4", "next to a single-key range");
  ExpectNotFound(env.Lookup("rg", "-6"), "-6", "next to a single-key range");
  ExpectFound(env.Lookup("rg", "7"), "seven", "a positive single key");
  ExpectFound(env.Run({"lookup", "rg", "--", "-5"}), "minus five", "after --");
}

TEST(CliStoreTypes, RangedNestedRangesFindTheNarrowestContainingOne) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "nested.xml",
       {RangeRef("rg", "", "1", "100", "outer"), RangeRef("rg", "", "10", "20", "inner"),
        RangeRef("rg", "", "30", "40", "left"), RangeRef("rg", "", "40", "50", "right")});
  ExpectFound(env.Lookup("rg", "50"), "right", "50 is in [1,100] and [40,50]");
  ExpectFound(env.Lookup("rg", "51"), "outer", "51: only [1,100]");
  ExpectFound(env.Lookup("rg", "60"), "outer", "60: only [1,100]");
  ExpectFound(env.Lookup("rg", "15"), "inner", "15: [10,20] is narrower than [1,100]");
  ExpectFound(env.Lookup("rg", "10"), "inner", "inner from edge");
  ExpectFound(env.Lookup("rg", "20"), "inner", "inner to edge");
  ExpectFound(env.Lookup("rg", "9"), "outer", "just below inner");
  ExpectFound(env.Lookup("rg", "21"), "outer", "just above inner");
  ExpectFound(env.Lookup("rg", "1"), "outer", "outer from edge");
  ExpectFound(env.Lookup("rg", "100"), "outer", "outer to edge");
  // [30,40] and [40,50] are equally narrow and both hold 40: the greater from wins.
  ExpectFound(env.Lookup("rg", "40"), "right", "tie at 40");
  ExpectFound(env.Lookup("rg", "35"), "left", "35");
  ExpectNotFound(env.Lookup("rg", "0"), "0", "below all");
  ExpectNotFound(env.Lookup("rg", "101"), "101", "above all");
}

TEST(CliStoreTypes, RangedTakesTheWholeSigned64BitRange) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "extremes.xml",
       {RangeRef("rg", "", "-9223372036854775808", "9223372036854775807", "everything"),
        RangeRef("rg", "", "-9223372036854775808", "-9223372036854775807", "lowest two"),
        TimedRef("rg", "", "9223372036854775807", "highest")});
  ExpectFound(env.Lookup("rg", "-9223372036854775808"), "lowest two", "INT64_MIN");
  ExpectFound(env.Lookup("rg", "-9223372036854775806"), "everything", "INT64_MIN + 2");
  ExpectFound(env.Lookup("rg", "0"), "everything", "0");
  ExpectFound(env.Lookup("rg", "9223372036854775807"), "highest", "INT64_MAX");
  ExpectFound(env.Lookup("rg", "9223372036854775806"), "everything", "INT64_MAX - 1");
}

TEST(CliStoreTypes, RangedMergesASecondBatch) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "first.xml", {RangeRef("rg", "", "1", "100", "outer"), RangeRef("rg", "", "200", "300", "old")});
  ExpectFound(env.Lookup("rg", "15"), "outer", "before the second batch");
  Load(env, "second.xml", {RangeRef("rg", "", "10", "20", "inner"), RangeRef("rg", "", "200", "300", "new")});
  ExpectFound(env.Lookup("rg", "15"), "inner", "nested range merged in");
  ExpectFound(env.Lookup("rg", "50"), "outer", "outer still there");
  ExpectFound(env.Lookup("rg", "250"), "new", "same range replaced");
}

TEST(CliStoreTypes, TemporalRangedFindsTheLatestVersionAmongContainingRanges) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "trg.xml",
       {RangeRef("trg", "2024-01-01T00:00:00.000Z", "100", "200", "A"),
        RangeRef("trg", "2024-03-01T00:00:00.000Z", "100", "200", "B"),
        RangeRef("trg", "2024-02-01T00:00:00.000Z", "150", "160", "N"),
        TimedRef("trg", "2024-01-01T00:00:00.000Z", "-5", "minus five")});
  ExpectNotFound(LookupAt(env, "trg", "155", "2023-12-31T23:59:59.999Z"), "155", "before any version");
  ExpectFound(LookupAt(env, "trg", "155", "2024-01-01T00:00:00.000Z"), "A", "the exact instant of A");
  ExpectFound(LookupAt(env, "trg", "155", "2024-01-31T23:59:59.999Z"), "A", "N not yet in effect");
  ExpectFound(LookupAt(env, "trg", "155", "2024-02-01T00:00:00.000Z"), "N", "N is the latest at or before");
  ExpectFound(LookupAt(env, "trg", "155", "2024-02-29T23:59:59.999Z"), "N", "between N and B");
  ExpectFound(LookupAt(env, "trg", "155", "2024-03-01T00:00:00.000Z"), "B", "B is later than N");
  ExpectFound(LookupAt(env, "trg", "120", "2024-02-15T00:00:00.000Z"), "A", "outside the nested range");
  ExpectFound(LookupAt(env, "trg", "200", "2024-03-01T00:00:00.000Z"), "B", "to edge");
  ExpectNotFound(LookupAt(env, "trg", "201", "2024-03-01T00:00:00.000Z"), "201", "past the to edge");
  ExpectNotFound(LookupAt(env, "trg", "99", "2024-03-01T00:00:00.000Z"), "99", "before the from edge");
  ExpectFound(LookupAt(env, "trg", "-5", "2024-06-01T00:00:00.000Z"), "minus five", "negative key");
  ExpectFound(env.Lookup("trg", "155"), "B", "without --time (now)");
}

TEST(CliStoreTypes, SessionPrintsStartAndEndWithBothEndsInclusive) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> elements;
  for (const std::string& map : kSessionMaps) {
    elements.push_back(SessionEvent(map, "alice", "2024-01-01T10:00:00.000Z", "15m"));
  }
  Load(env, "sessions.xml", elements);
  const std::string session = "2024-01-01T10:00:00.000Z 2024-01-01T10:15:00.000Z";
  for (const std::string& map : kSessionMaps) {
    ExpectFound(LookupAt(env, map, "alice", "2024-01-01T10:00:00.000Z"), session, map + " at the start");
    ExpectFound(LookupAt(env, map, "alice", "2024-01-01T10:07:30.123Z"), session, map + " inside");
    ExpectFound(LookupAt(env, map, "alice", "2024-01-01T10:15:00.000Z"), session, map + " at the end");
    ExpectNotFound(LookupAt(env, map, "alice", "2024-01-01T09:59:59.999Z"), "alice", map + " 1ms before");
    ExpectNotFound(LookupAt(env, map, "alice", "2024-01-01T10:15:00.001Z"), "alice", map + " 1ms after");
    ExpectNotFound(LookupAt(env, map, "bob", "2024-01-01T10:05:00.000Z"), "bob", map + " another key");
    ExpectNotFound(env.Lookup(map, "alice"), "alice", map + " now is long after");
    // Another time zone is the same instant.
    ExpectNotFound(LookupAt(env, map, "alice", "2024-01-01T10:05:00+01:00"), "alice", map + " 09:05Z");
  }
}

TEST(CliStoreTypes, SessionReadsEveryDurationForm) {
  CliEnv env(kTypedMapsConfig);
  struct Case {
    std::string key, timeout, end;
  };
  const std::vector<Case> cases = {
      {"none", "", "2024-01-01T00:00:00.000Z"},        {"ms", "500ms", "2024-01-01T00:00:00.500Z"},
      {"s", "30s", "2024-01-01T00:00:30.000Z"},        {"m", "15m", "2024-01-01T00:15:00.000Z"},
      {"h", "2h", "2024-01-01T02:00:00.000Z"},         {"d", "1d", "2024-01-02T00:00:00.000Z"},
      {"iso_m", "PT15M", "2024-01-01T00:15:00.000Z"},  {"iso_dh", "P1DT2H", "2024-01-02T02:00:00.000Z"},
      {"iso_s", "PT1.5S", "2024-01-01T00:00:01.500Z"},
  };
  std::vector<std::string> elements;
  for (const Case& c : cases)
    elements.push_back(SessionEvent("ss_direct", c.key, "2024-01-01T00:00:00.000Z", c.timeout));
  Load(env, "durations.xml", elements);
  for (const Case& c : cases) {
    const std::string session = "2024-01-01T00:00:00.000Z " + c.end;
    ExpectFound(LookupAt(env, "ss_direct", c.key, "2024-01-01T00:00:00.000Z"), session, c.key + " at the start");
    ExpectFound(LookupAt(env, "ss_direct", c.key, c.end), session, c.key + " at the end");
  }
  ExpectNotFound(LookupAt(env, "ss_direct", "none", "2024-01-01T00:00:00.001Z"), "none", "an instant session");
  ExpectNotFound(LookupAt(env, "ss_direct", "ms", "2024-01-01T00:00:00.501Z"), "ms", "after 500ms");
}

TEST(CliStoreTypes, SessionPrintsTheLatestStartWhereSessionsOverlap) {
  CliEnv env(kTypedMapsConfig);
  std::vector<std::string> elements;
  for (const std::string& map : kSessionMaps) {
    elements.push_back(SessionEvent(map, "bob", "2024-01-01T10:00:00.000Z", "15m"));
    elements.push_back(SessionEvent(map, "bob", "2024-01-01T10:10:00.000Z", "15m"));
  }
  Load(env, "overlap.xml", elements);
  for (const std::string& map : kSessionMaps) {
    ExpectFound(LookupAt(env, map, "bob", "2024-01-01T10:05:00.000Z"),
                "2024-01-01T10:00:00.000Z 2024-01-01T10:15:00.000Z", map + " only the first");
    ExpectFound(LookupAt(env, map, "bob", "2024-01-01T10:12:00.000Z"),
                "2024-01-01T10:10:00.000Z 2024-01-01T10:25:00.000Z", map + " both: the latest start");
    ExpectFound(LookupAt(env, map, "bob", "2024-01-01T10:25:00.000Z"),
                "2024-01-01T10:10:00.000Z 2024-01-01T10:25:00.000Z", map + " end of the second");
  }
}

TEST(CliStoreTypes, SessionMergesASecondBatch) {
  CliEnv env(kTypedMapsConfig);
  Load(env, "first.xml", {SessionEvent("ss_hashed", "carol", "2024-01-01T10:00:00.000Z", "1h")});
  ExpectNotFound(LookupAt(env, "ss_hashed", "carol", "2024-01-02T10:30:00.000Z"), "carol", "before the second");
  Load(env, "second.xml", {SessionEvent("ss_hashed", "carol", "2024-01-02T10:00:00.000Z", "1h")});
  ExpectFound(LookupAt(env, "ss_hashed", "carol", "2024-01-01T10:30:00.000Z"),
              "2024-01-01T10:00:00.000Z 2024-01-01T11:00:00.000Z", "the first session kept");
  ExpectFound(LookupAt(env, "ss_hashed", "carol", "2024-01-02T10:30:00.000Z"),
              "2024-01-02T10:00:00.000Z 2024-01-02T11:00:00.000Z", "the second session added");
}

}  // namespace
}  // namespace planb
