// The recommendation rule on figures built to make the answer certain.
#include "host/scheme_trial/recommendation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace planb {
namespace {

using ::testing::StartsWith;

SchemeResult Figures(const std::string& scheme, bool dedup, double p50, uint64_t file_bytes) {
  SchemeResult r;
  r.scheme = scheme;
  r.value_dedup = dedup;
  TrialFigures f;
  f.hits.lookups = 100;
  f.hits.p50_ns = p50;
  f.sizes.rows = 100;
  f.sizes.file_bytes = file_bytes;
  r.figures = f;
  return r;
}

SchemeResult Unusable(const std::string& scheme) {
  SchemeResult r;
  r.scheme = scheme;
  r.unusable = "key of 600 bytes is too long";
  return r;
}

const SchemeResult* Recommended(const MapResult& map) {
  const SchemeResult* found = nullptr;
  for (const SchemeResult& r : map.schemes) {
    if (!r.recommended) continue;
    EXPECT_EQ(found, nullptr) << "two recommended";
    found = &r;
  }
  return found;
}

TEST(Recommendation, FastestWinsWhenNothingIsMuchSmaller) {
  MapResult map;
  map.schemes = {Figures("hashed", false, 150, 10000), Figures("direct", false, 100, 9000),
                 Figures("lookup_table", false, 120, 7500)};  // 17% smaller: not enough
  Recommend(&map);
  ASSERT_NE(Recommended(map), nullptr);
  EXPECT_EQ(Recommended(map)->scheme, "direct");
  EXPECT_EQ(map.recommendation, "direct: fastest lookups (hit p50 100 ns), all keys fit");
}

TEST(Recommendation, MuchSmallerAndNearlyAsFastWins) {
  MapResult map;
  map.schemes = {Figures("direct", false, 100, 10000), Figures("direct", true, 124, 6200),
                 Figures("hashed", true, 115, 7000)};  // over 10% slower: not equally fast
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->label(), "direct+value_dedup");  // the smallest of the two that qualify
  EXPECT_EQ(map.recommendation, "direct+value_dedup: 38% smaller, lookups 1.24x direct");
}

TEST(Recommendation, SmallerButTooSlowLoses) {
  MapResult map;
  map.schemes = {Figures("direct", false, 100, 10000), Figures("lookup_table", false, 126, 5000)};
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->scheme, "direct");
}

TEST(Recommendation, SchemesWithoutFiguresTakeNoPartAndAreNamed) {
  MapResult map;
  map.schemes = {Unusable("direct"), Figures("hashed", false, 150, 10000)};
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->scheme, "hashed");
  EXPECT_THAT(map.recommendation, StartsWith("hashed: fastest lookups (hit p50 150 ns), of the schemes that hold"));
  MapResult none;
  none.schemes = {Unusable("direct")};
  Recommend(&none);
  EXPECT_EQ(Recommended(none), nullptr);
  EXPECT_THAT(none.recommendation, StartsWith("none: "));
}

// Hit p50s within 10% of the fastest cannot be told apart: the smaller of them wins, not the faster by 9 ns.
TEST(Recommendation, WithinTenPercentCountsAsEquallyFast) {
  MapResult map;
  map.configured_scheme = "hashed";
  map.schemes = {Figures("variable", true, 111, 9500), Figures("direct", false, 120, 9000),
                 Figures("hashed", false, 140, 8000)};
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->label(), "direct");
  EXPECT_EQ(map.recommendation.rfind("direct: fastest lookups (hit p50 120 ns)", 0), 0u) << map.recommendation;
}

TEST(Recommendation, TiesGoToTheSmallerThenToNoDedupThenToTheConfiguredScheme) {
  MapResult map;
  map.configured_scheme = "hybrid";
  map.schemes = {Figures("direct", true, 100, 9000), Figures("direct", false, 100, 9000),
                 Figures("hybrid", false, 100, 9000), Figures("hashed", false, 100, 9500)};
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->label(), "hybrid");
  map.configured_scheme = "lookup_table";
  Recommend(&map);
  EXPECT_EQ(Recommended(map)->label(), "direct");
}

}  // namespace
}  // namespace planb
