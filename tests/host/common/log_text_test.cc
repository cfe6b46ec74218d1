#include "host/common/log_text.h"

#include <gtest/gtest.h>

#include <string>

namespace planb {
namespace {

TEST(LogText, EscapesControlCharactersSoNoValueStartsALine) {
  EXPECT_EQ(LogValue("plain map_1"), "plain map_1");
  EXPECT_EQ(LogValue("a\nFAKE: line\r\t\x1b[31m\x7f\\"), "a\\nFAKE: line\\r\\t\\x1b[31m\\x7f\\\\");
  EXPECT_EQ(LogValue(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(LogText, CapsLongValuesSayingHowLongTheyWere) {
  const std::string long_value(60000, 'x');
  const std::string logged = LogValue(long_value);
  EXPECT_EQ(logged, std::string(200, 'x') + "...(60000 bytes)");
  EXPECT_EQ(LogValue("abcdef", 3), "abc...(6 bytes)");
  EXPECT_EQ(LogValue("abc", 3), "abc");
}

TEST(LogText, RepeatLimiterAdmitsAKindOncePerPeriodAndCountsTheRest) {
  using Clock = RepeatLimiter::Clock;
  RepeatLimiter limiter(std::chrono::seconds(10));
  const Clock::time_point t0 = Clock::now();
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.Admit("snapshot 3", t0, &suppressed));
  EXPECT_EQ(suppressed, 0u);
  for (int i = 1; i <= 5; ++i) EXPECT_FALSE(limiter.Admit("snapshot 3", t0 + std::chrono::seconds(i), &suppressed));
  EXPECT_TRUE(limiter.Admit("upload 3", t0 + std::chrono::seconds(1), &suppressed));  // another kind
  EXPECT_TRUE(limiter.Admit("snapshot 3", t0 + std::chrono::seconds(10), &suppressed));
  EXPECT_EQ(suppressed, 5u);
}

TEST(LogText, RepeatLimiterStaysBoundedInKinds) {
  using Clock = RepeatLimiter::Clock;
  RepeatLimiter limiter(std::chrono::seconds(10), 4);
  const Clock::time_point t0 = Clock::now();
  uint64_t suppressed = 0;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(limiter.Admit("kind" + std::to_string(i), t0, &suppressed));
  // The oldest kinds were forgotten: kind0 is new again, kind99 is still remembered.
  EXPECT_TRUE(limiter.Admit("kind0", t0, &suppressed));
  EXPECT_FALSE(limiter.Admit("kind99", t0, &suppressed));
}

}  // namespace
}  // namespace planb
