// Histogram and metric maps through the real planb binary: loads, lookup outcomes (the own fields print once the
// host prints RowField::kOwn), and bad input refused with exit 2 and nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using ::planb::testing::CliEnv;
using ::planb::testing::ProcessResult;
using ::planb::testing::ReferenceData;
using ::planb::testing::ShardDataFiles;
using ::planb::testing::VisibleEntries;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kConfig[] =
    "[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 1h\n"
    "[map.latency]\ntype = metric\nscheme = direct\nbucket = 10s\n";

std::string Ref(const std::string& map, const std::string& key, const std::string& time, const std::string& value) {
  std::string xml = "  <reference><map>" + map + "</map><time>" + time + "</time><key>" + key + "</key>";
  if (!value.empty()) xml += "<value>" + value + "</value>";
  return xml + "</reference>";
}

TEST(CountersCli, LoadsAndLooksUpBuckets) {
  CliEnv env(kConfig);
  const std::string file =
      env.Write("a.xml", ReferenceData(Ref("hits", "/index", "2024-01-01T10:15:00Z", "") + "\n" +
                                       Ref("hits", "/index", "2024-01-01T10:59:59.999Z", "3") + "\n" +
                                       Ref("latency", "api", "2024-01-01T10:00:05Z", "11498.189")));
  const ProcessResult load = env.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const ProcessResult hit = env.Run({"lookup", "hits", "/index", "--time", "2024-01-01T10:00:00Z"});
  EXPECT_EQ(hit.exit_code, 0) << hit.err;
  const ProcessResult miss = env.Run({"lookup", "hits", "/index", "--time", "2024-01-01T11:00:00Z"});
  EXPECT_EQ(miss.exit_code, 1) << miss.out << miss.err;
  const ProcessResult metric = env.Run({"lookup", "latency", "api", "--time", "2024-01-01T10:00:09.999Z"});
  EXPECT_EQ(metric.exit_code, 0) << metric.err;
  const ProcessResult before = env.Run({"lookup", "latency", "api", "--time", "2024-01-01T09:59:59.999Z"});
  EXPECT_EQ(before.exit_code, 1) << before.out << before.err;
}

TEST(CountersCli, AMalformedValueIsRefusedWithItsPositionAndNothingIsWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Ref("hits", "k", "2024-01-01T10:00:00Z", "ten"), "'ten' is not a whole number"},
      {Ref("latency", "k", "2024-01-01T10:00:00Z", "1.2.3"), "'1.2.3' is not a finite decimal number"},
      {Ref("latency", "k", "2024-01-01T10:00:00Z", ""), "<reference> has no <value>"},
  };
  for (const auto& [bad, why] : cases) {
    CliEnv env(kConfig);
    const std::string file =
        env.Write("bad.xml", ReferenceData(Ref("hits", "k", "2024-01-01T10:00:00Z", "") + "\n" + bad));
    const ProcessResult r = env.Load({file});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(file + ":3:3:"));
    EXPECT_THAT(r.err, HasSubstr(why));
    EXPECT_THAT(ShardDataFiles(env.home()), IsEmpty()) << "a refused load created a shard";
    EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty());
  }
}

TEST(CountersCli, ABadBucketOptionIsRefusedNamingTheMapAndOption) {
  CliEnv env("[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 0s\n");
  const std::string file = env.Write("a.xml", ReferenceData(Ref("hits", "k", "2024-01-01T10:00:00Z", "")));
  const ProcessResult r = env.Load({file});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("[map.hits]"));
  EXPECT_THAT(r.err, HasSubstr("option bucket = '0s' is not a positive duration"));
  EXPECT_THAT(ShardDataFiles(env.home()), IsEmpty());
}

}  // namespace
}  // namespace planb
