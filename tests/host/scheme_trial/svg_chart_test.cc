#include "host/scheme_trial/svg_chart.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SvgChart, EscapesText) { EXPECT_EQ(XmlEscape("a<b>&\"c'\x01\td"), "a&lt;b&gt;&amp;&quot;c'&#9;d"); }

TEST(SvgChart, AMapWithoutFiguresSaysSoInsteadOfBars) {
  BenchResult result;
  result.runs = 3;
  MapResult map;
  map.map = "m";
  map.type = "state";
  map.recommendation = "none: <no scheme>";
  SchemeResult r;
  r.scheme = "direct";
  r.unusable = "too long";
  map.schemes.push_back(r);
  result.maps.push_back(map);
  const std::string svg = SvgChart(result);
  EXPECT_THAT(svg, HasSubstr("none: &lt;no scheme&gt;"));
  EXPECT_THAT(svg, HasSubstr("no scheme could hold the map's keys"));
  EXPECT_THAT(svg, Not(HasSubstr("<rect x=\"80")));
  EXPECT_THAT(svg, HasSubstr("median of 3 run(s)"));
}

}  // namespace
}  // namespace planb
