// Numeric times in each unit (--time-unit), and ISO-8601 text in every unit: converted to milliseconds rounding
// towards the past, fractions included; anything else refused.
#include "host/common/epoch_time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace planb {
namespace {

int64_t Ms(const std::string& text, TimeUnit unit) {
  int64_t ms = 42;
  EXPECT_TRUE(ParseTimeOrEpoch(text, unit, &ms)) << text << " in " << TimeUnitName(unit);
  return ms;
}

bool Refused(const std::string& text, TimeUnit unit) {
  int64_t ms = 42;
  const bool refused = !ParseTimeOrEpoch(text, unit, &ms);
  EXPECT_EQ(ms, 42) << "left alone when refused: " << text;
  return refused;
}

TEST(EpochTime, ReadsEachUnit) {
  EXPECT_EQ(Ms("1704067200", TimeUnit::kSeconds), 1704067200000);
  EXPECT_EQ(Ms("1704067200000", TimeUnit::kMilliseconds), 1704067200000);
  EXPECT_EQ(Ms("1704067200000123", TimeUnit::kMicroseconds), 1704067200000);
  EXPECT_EQ(Ms("1704067200000999999", TimeUnit::kNanoseconds), 1704067200000);
  EXPECT_EQ(Ms("0", TimeUnit::kSeconds), 0);  // the epoch is an instant
  EXPECT_EQ(Ms("-0", TimeUnit::kNanoseconds), 0);
}

TEST(EpochTime, FractionsAndNegativesRoundTowardsThePast) {
  EXPECT_EQ(Ms("1704067200.123", TimeUnit::kSeconds), 1704067200123);
  EXPECT_EQ(Ms("1704067200.1239", TimeUnit::kSeconds), 1704067200123);
  EXPECT_EQ(Ms("1.5", TimeUnit::kMilliseconds), 1);
  EXPECT_EQ(Ms("-1.5", TimeUnit::kSeconds), -1500);
  EXPECT_EQ(Ms("-1.0005", TimeUnit::kSeconds), -1001);
  EXPECT_EQ(Ms("-1", TimeUnit::kMicroseconds), -1);
  EXPECT_EQ(Ms("-1000", TimeUnit::kMicroseconds), -1);
  EXPECT_EQ(Ms("-1001", TimeUnit::kMicroseconds), -2);
  EXPECT_EQ(Ms("-0.0000000001", TimeUnit::kSeconds), -1) << "beyond nanoseconds still before the epoch";
  EXPECT_EQ(Ms("0.0000000001", TimeUnit::kSeconds), 0);
}

TEST(EpochTime, IsoTextIsReadWhateverTheUnit) {
  for (TimeUnit unit : {TimeUnit::kSeconds, TimeUnit::kMilliseconds, TimeUnit::kMicroseconds, TimeUnit::kNanoseconds}) {
    EXPECT_EQ(Ms("2024-01-01T00:00:00.001Z", unit), 1704067200001);
  }
}

TEST(EpochTime, TheEdgesOfInt64Milliseconds) {
  EXPECT_EQ(Ms("-9223372036854775808", TimeUnit::kMilliseconds), INT64_MIN);
  EXPECT_EQ(Ms("9223372036854775807", TimeUnit::kMilliseconds), INT64_MAX);
  EXPECT_EQ(Ms("9223372036854775.807", TimeUnit::kSeconds), INT64_MAX);
  EXPECT_TRUE(Refused("9223372036854775808", TimeUnit::kMilliseconds));
  EXPECT_TRUE(Refused("9223372036854776", TimeUnit::kSeconds));
  EXPECT_TRUE(Refused("99999999999999999999999999999999999999999999", TimeUnit::kNanoseconds));
}

TEST(EpochTime, RefusesWhatIsNoTime) {
  for (const char* bad : {"", "-", "+5", "1e3", "12a", " 12", "12 ", "1.", ".5", "1.2.3", "0x10", "2024-13-01", "--1"}) {
    EXPECT_TRUE(Refused(bad, TimeUnit::kSeconds)) << bad;
  }
}

TEST(EpochTime, UnitNames) {
  TimeUnit unit = TimeUnit::kMilliseconds;
  for (const char* name : {"s", "ms", "us", "ns"}) {
    ASSERT_TRUE(ParseTimeUnit(name, &unit)) << name;
    EXPECT_STREQ(TimeUnitName(unit), name);
  }
  for (const char* bad : {"", "sec", "seconds", "S", "MS", "µs", "h"}) EXPECT_FALSE(ParseTimeUnit(bad, &unit)) << bad;
}

}  // namespace
}  // namespace planb
