// The config keys of catch-up and quorum loads (issue 39): batch_retention, batch_retention_bytes,
// catch_up_interval and write_quorum, their defaults and how each malformed value is refused.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "host/config/config.h"
#include "host/storage/content_version.h"

namespace planb {
namespace {

constexpr int64_t kDayMs = int64_t{24} * 60 * 60 * 1000;
constexpr char kTwoNodes[] =
    "node_list = ,a,b\n[node.a]\nendpoint = tcp://127.0.0.1:7001\n[node.b]\nendpoint = tcp://127.0.0.1:7002\n";

// Top-level keys come before the [node.NAME] sections.
std::string WithNodes(std::string_view keys) { return std::string(keys) + kTwoNodes; }

Status Parse(std::string_view text, Config* config) { return ParseConfig("planb.ini", text, "/etc/planb", config); }

std::string ErrorOf(std::string_view text) {
  Config config;
  const Status status = Parse(text, &config);
  EXPECT_FALSE(status.ok()) << text;
  return status.message();
}

TEST(CatchUpConfig, DefaultsKeepThreeDaysAndEveryNodeMustStore) {
  Config config;
  ASSERT_TRUE(Parse(kTwoNodes, &config).ok());
  EXPECT_EQ(config.cluster.batch_retention_ms, 3 * kDayMs);
  EXPECT_EQ(config.cluster.batch_retention_bytes, uint64_t{10} << 30);
  EXPECT_EQ(config.cluster.catch_up_interval_ms, 10 * 1000);
  EXPECT_FALSE(config.cluster.write_quorum.has_value());
  EXPECT_EQ(config.cluster.WriteQuorum(), 2u);
  // Records of merged batches outlive what any peer can still fetch: a week, or twice the retention and a day.
  EXPECT_EQ(config.cluster.MergedBatchesKeepMs(), kMergedBatchesKeepMs);
}

TEST(CatchUpConfig, TakesDurationsSizesAndCounts) {
  Config config;
  ASSERT_TRUE(Parse(WithNodes("batch_retention = 10d\nbatch_retention_bytes = 1GiB\n"
                                              "catch_up_interval = 2s\nwrite_quorum = 1\n"),
                    &config)
                  .ok());
  EXPECT_EQ(config.cluster.batch_retention_ms, 10 * kDayMs);
  EXPECT_EQ(config.cluster.batch_retention_bytes, uint64_t{1} << 30);
  EXPECT_EQ(config.cluster.catch_up_interval_ms, 2000);
  EXPECT_EQ(config.cluster.WriteQuorum(), 1u);
  EXPECT_EQ(config.cluster.MergedBatchesKeepMs(), 21 * kDayMs);
  // 0s turns retention and catch-up off.
  config = Config();
  ASSERT_TRUE(Parse(WithNodes("batch_retention = 0s\ncatch_up_interval = 0s\n"), &config).ok());
  EXPECT_EQ(config.cluster.batch_retention_ms, 0);
  EXPECT_EQ(config.cluster.catch_up_interval_ms, 0);
  EXPECT_EQ(config.cluster.MergedBatchesKeepMs(), kMergedBatchesKeepMs);
}

TEST(CatchUpConfig, RefusesMalformedValuesNamingTheKey) {
  EXPECT_EQ(ErrorOf(WithNodes("write_quorum = 0\n")),
            "planb.ini: write_quorum: '0' is not a count of storage nodes above 0");
  EXPECT_EQ(ErrorOf(WithNodes("write_quorum = two\n")),
            "planb.ini: write_quorum: 'two' is not a count of storage nodes above 0");
  EXPECT_EQ(ErrorOf(WithNodes("write_quorum = -1\n")),
            "planb.ini: write_quorum: '-1' is not a count of storage nodes above 0");
  EXPECT_EQ(ErrorOf(WithNodes("write_quorum = 3\n")),
            "planb.ini: write_quorum: 3 is more than the 2 storage node(s) of node_list: no load could ever succeed");
  EXPECT_EQ(ErrorOf(WithNodes("batch_retention = forever\n")),
            "planb.ini: batch_retention: 'forever' is not a duration (e.g. 500ms, 5s, 1m, 2h)");
  EXPECT_EQ(ErrorOf(WithNodes("batch_retention_bytes = lots\n")),
            "planb.ini: batch_retention_bytes: 'lots' is not a size (e.g. 10GiB, 512MiB, 0 for none)");
  EXPECT_EQ(ErrorOf(WithNodes("catch_up_interval = -5s\n")),
            "planb.ini: catch_up_interval: '-5s' is not a duration (e.g. 500ms, 5s, 1m, 2h)");
}

}  // namespace
}  // namespace planb
