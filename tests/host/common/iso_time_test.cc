#include "host/common/iso_time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <limits>
#include <random>
#include <string>

namespace planb {
namespace {

constexpr int64_t k2024 = 1704067200000;           // 2024-01-01T00:00:00Z
constexpr int64_t kYear0 = -62167219200000;        // 0000-01-01T00:00:00.000Z
constexpr int64_t kYear9999End = 253402300799999;  // 9999-12-31T23:59:59.999Z

int64_t Parse(const std::string& s) {
  int64_t ms = 42;
  EXPECT_TRUE(ParseIsoTime(s, &ms)) << s;
  return ms;
}

int64_t Duration(const std::string& s) {
  int64_t ms = 42;
  EXPECT_TRUE(ParseDuration(s, &ms)) << s;
  return ms;
}

TEST(IsoTime, ParsesTheHeaderExamples) {
  EXPECT_EQ(Parse("2024-01-01T08:10:22.023Z"), k2024 + 29422023);
  EXPECT_EQ(Parse("2024-01-01T08:10:22Z"), k2024 + 29422000);
  EXPECT_EQ(Parse("2024-01-01T09:10:22.5+01:00"), k2024 + 29422500);
  EXPECT_EQ(Parse("2024-01-01T08:10Z"), k2024 + 29400000);
  EXPECT_EQ(Parse("2024-01-01"), k2024);
}

TEST(IsoTime, AppliesOffsetsInEveryForm) {
  EXPECT_EQ(Parse("2024-01-01T01:00:00+01:00"), k2024);
  EXPECT_EQ(Parse("2024-01-01T01:00:00+0100"), k2024);
  EXPECT_EQ(Parse("2024-01-01T01:00:00+01"), k2024);
  EXPECT_EQ(Parse("2023-12-31T18:30:00-05:30"), k2024);
  EXPECT_EQ(Parse("2024-01-01T00:00:00-00:00"), k2024);
}

TEST(IsoTime, TruncatesFractionsBeyondMilliseconds) {
  EXPECT_EQ(Parse("2024-01-01T00:00:00.0239Z"), k2024 + 23);
  EXPECT_EQ(Parse("2024-01-01T00:00:00.999999999Z"), k2024 + 999);
  EXPECT_EQ(Parse("2024-01-01T00:00:00.5Z"), k2024 + 500);
  EXPECT_EQ(Parse("1969-12-31T23:59:59.9999Z"), -1);
}

TEST(IsoTime, HandlesTheEpochAndTimesBeforeIt) {
  EXPECT_EQ(Parse("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(Parse("1969-12-31T23:59:59.999Z"), -1);
  EXPECT_EQ(Parse("1969-12-31"), -86400000);
  EXPECT_EQ(Parse("0000-01-01T00:00:00.000Z"), kYear0);
  EXPECT_EQ(Parse("9999-12-31T23:59:59.999Z"), kYear9999End);
  EXPECT_EQ(FormatIsoTime(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoTime(-86400000), "1969-12-31T00:00:00.000Z");
  EXPECT_EQ(FormatIsoTime(kYear0), "0000-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoTime(kYear9999End), "9999-12-31T23:59:59.999Z");
}

TEST(IsoTime, KnowsLeapYears) {
  EXPECT_EQ(Parse("2000-02-29"), Parse("2000-03-01") - 86400000);
  EXPECT_EQ(Parse("2024-02-29"), Parse("2024-03-01") - 86400000);
  EXPECT_EQ(Parse("0000-02-29"), Parse("0000-03-01") - 86400000);
  int64_t ms = 0;
  EXPECT_FALSE(ParseIsoTime("1900-02-29", &ms));
  EXPECT_FALSE(ParseIsoTime("2023-02-29", &ms));
  EXPECT_FALSE(ParseIsoTime("2100-02-29", &ms));
}

TEST(IsoTime, RejectsMalformedInputAndLeavesOutputAlone) {
  for (const char* bad : {"",
                          "2024-13-01T00:00:00Z",
                          "2024-00-10",
                          "2024-01-32T00:00:00Z",
                          "2024-01-00",
                          "2024-02-30T00:00:00Z",
                          "2024-04-31",
                          "2024-01-01T25:00:00Z",
                          "2024-01-01T24:00:00Z",
                          "2024-01-01T12:60:00Z",
                          "2024-01-01T12:00:60Z",
                          "2024-01-0112:00:00Z",
                          "2024-01-01 12:00:00Z",
                          "2024-01-01T12:00:00Zjunk",
                          "2024-01-01T12:00:00Z ",
                          " 2024-01-01",
                          "2024-01-01x",
                          "2024-01-01T",
                          "2024-01-01T12Z",
                          "2024-01-01T12:00:00",
                          "2024-01-01T12:00:00.Z",
                          "2024-01-01T12:00:00+1",
                          "2024-01-01T12:00:00+24:00",
                          "2024-01-01T12:00:00+01:60",
                          "2024-01-01T12:00:00+01:0",
                          "24-01-01",
                          "+2024-01-01",
                          "2024-1-01",
                          "2024/01/01",
                          "abcd-ef-gh"}) {
    int64_t ms = 77;
    EXPECT_FALSE(ParseIsoTime(bad, &ms)) << "accepted '" << bad << "'";
    EXPECT_EQ(ms, 77) << bad;
  }
}

TEST(IsoTime, FormatsWithMillisecondsAndZ) {
  EXPECT_EQ(FormatIsoTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoTime(k2024 + 29422023), "2024-01-01T08:10:22.023Z");
  EXPECT_EQ(FormatIsoTime(Parse("2024-02-29T23:59:59.001Z")), "2024-02-29T23:59:59.001Z");
}

TEST(IsoTime, FormatsYearsOutsideTheParseableRangeInExpandedForm) {
  EXPECT_EQ(FormatIsoTime(kYear0 - 1), "-0001-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoTime(kYear9999End + 1), "+10000-01-01T00:00:00.000Z");
  // The extremes must not crash or overflow; they only need to be well-formed.
  EXPECT_EQ(FormatIsoTime(std::numeric_limits<int64_t>::min()).back(), 'Z');
  EXPECT_EQ(FormatIsoTime(std::numeric_limits<int64_t>::max()).back(), 'Z');
  // An offset can carry year 0000 into year -1; the instant is still exact.
  EXPECT_EQ(Parse("0000-01-01T00:30:00+01:00"), kYear0 - 1800000);
}

TEST(IsoTime, RoundTripsRandomInstantsAcrossYears0To9999) {
  std::mt19937_64 rng(20240101);
  std::uniform_int_distribution<int64_t> any(kYear0, kYear9999End);
  std::uniform_int_distribution<int64_t> near_epoch(-5000000000LL, 5000000000LL);
  for (int i = 0; i < 200000; ++i) {
    const int64_t ms = (i % 4 == 0) ? near_epoch(rng) : any(rng);
    const std::string text = FormatIsoTime(ms);
    ASSERT_EQ(text.size(), 24u) << ms;
    int64_t back = 0;
    ASSERT_TRUE(ParseIsoTime(text, &back)) << text;
    ASSERT_EQ(back, ms) << text;
  }
}

TEST(IsoTime, AgreesWithGmtimeOnRandomInstants) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> any(kYear0, kYear9999End);
  for (int i = 0; i < 20000; ++i) {
    const int64_t ms = any(rng);
    int64_t secs = ms / 1000;
    if (ms % 1000 < 0) --secs;
    const time_t t = static_cast<time_t>(secs);
    struct tm tm;
    ASSERT_NE(gmtime_r(&t, &tm), nullptr);
    char expected[80];
    std::snprintf(expected, sizeof(expected), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    ASSERT_EQ(FormatIsoTime(ms).substr(0, 19), expected) << ms;
  }
}

TEST(Duration, ParsesShortForms) {
  EXPECT_EQ(Duration("15m"), 15 * 60000);
  EXPECT_EQ(Duration("30s"), 30000);
  EXPECT_EQ(Duration("2h"), 7200000);
  EXPECT_EQ(Duration("1d"), 86400000);
  EXPECT_EQ(Duration("500ms"), 500);
  EXPECT_EQ(Duration("0s"), 0);
}

TEST(Duration, ParsesIsoForms) {
  EXPECT_EQ(Duration("PT15M"), 15 * 60000);
  EXPECT_EQ(Duration("P1DT2H"), 86400000 + 7200000);
  EXPECT_EQ(Duration("PT0.5S"), 500);
  EXPECT_EQ(Duration("P2W"), 14 * 86400000LL);
  EXPECT_EQ(Duration("P1D"), 86400000);
  EXPECT_EQ(Duration("PT1H30M15.25S"), 3600000 + 1800000 + 15250);
  EXPECT_EQ(Duration("pt15m"), 15 * 60000);  // java.time.Duration accepts lower case too
  EXPECT_EQ(Duration("PT0.0009S"), 0);
}

TEST(Duration, RefusesYearsMonthsNegativesAndJunk) {
  for (const char* bad :
       {"",       "P",     "PT",   "P1DT", "P1Y",    "P1M",     "P1Y2M", "P1MT1H", "-15m",   "PT-15M", "-PT15M",
        "15",     "m",     "15x",  "15M",  "15 m",   " 15m",    "15m ",  "1.5h",   "PT1.5M", "P0.5D",  "PT1H2H",
        "PT1M1H", "P1D1W", "PT1D", "P1H",  "PT15MX", "P1DTT1H", "PT.5S", "PT1.S",  "ms"}) {
    int64_t ms = 77;
    EXPECT_FALSE(ParseDuration(bad, &ms)) << "accepted '" << bad << "'";
    EXPECT_EQ(ms, 77) << bad;
  }
}

TEST(Duration, RefusesOverflow) {
  int64_t ms = 77;
  EXPECT_FALSE(ParseDuration("9223372036854775808ms", &ms));  // > INT64_MAX
  EXPECT_FALSE(ParseDuration("9223372036854776s", &ms));
  EXPECT_FALSE(ParseDuration("106751991167301d", &ms));
  EXPECT_FALSE(ParseDuration("P15250284452472W", &ms));
  EXPECT_FALSE(ParseDuration("P106751991167300DT100000H", &ms));
  EXPECT_FALSE(ParseDuration("PT99999999999999999999S", &ms));
  EXPECT_EQ(ms, 77);
  EXPECT_EQ(Duration("9223372036854775807ms"), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST(IsoTime, EveryInt64InstantRoundTripsThroughExpandedYears) {
  const int64_t cases[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                           253402300800000 /* 10000-01-01 */, -62167219200001 /* just before 0000-01-01 */,
                           315537897600000 /* +11969 */};
  for (int64_t ms : cases) {
    const std::string text = FormatIsoTime(ms);
    int64_t back = 0;
    ASSERT_TRUE(ParseIsoTime(text, &back)) << text;
    EXPECT_EQ(back, ms) << text;
  }
  int64_t ms = 0;
  EXPECT_TRUE(ParseIsoTime("+10009-12-28T00:00:00.000Z", &ms));
  EXPECT_EQ(FormatIsoTime(ms), "+10009-12-28T00:00:00.000Z");
  EXPECT_FALSE(ParseIsoTime("+999999999-12-31T23:59:59.999Z", &ms)) << "beyond int64 milliseconds";
  EXPECT_FALSE(ParseIsoTime("+999-01-01", &ms)) << "expanded years have at least four digits";
}

}  // namespace
}  // namespace planb
