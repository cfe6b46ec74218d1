// Read-your-writes on a reader node (real `planb serve` processes): load prints the content version its batches
// produce, `lookup --min-version` waits for it, `planb refresh` and Reader::Refresh fetch now, and `stores` shows
// each snapshot's version, age and source node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "planb/reader.h"
#include "support/cluster_fixture.h"
#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::planb::testing::TestTimeScale;
using ::planb::testing::WriteFile;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

constexpr char kMap[] = "country_to_capital";

// Loads Wales = `capital` through the processing node and waits until node1 merged it.
void LoadCapital(ClusterFixture& cluster, const std::string& capital, const std::string& expect_version) {
  const std::string file = cluster.dir() + "/" + capital + ".xml";
  WriteFile(file, ReferenceData(Ref(kMap, "Wales", capital)));
  const ProcessResult load = cluster.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_THAT(load.out, HasSubstr(std::string("content version of ") + kMap + ": " + expect_version + " once merged"));
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
}

TEST(FreshRead, LookupWithMinVersionSeesTheLoadAStaleSnapshotWouldHide) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  cluster.WriteReaderConfig("reader");  // snapshots kept for the default 10 minutes
  LoadCapital(cluster, "Cardiff", "1");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", kMap, "Wales"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Cardiff\n");

  LoadCapital(cluster, "Caerdydd", "2");
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Wales"});
  EXPECT_EQ(r.out, "Cardiff\n") << "the snapshot is younger than min_time_to_keep_snapshots: kept";
  r = cluster.RunOnReader("reader", {"lookup", "--min-version", "2", kMap, "Wales"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Caerdydd\n");

  r = cluster.RunOnReader("reader", {"stores"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex(std::string(kMap) + " +2 +[0-9]+s +node1 "));
}

TEST(FreshRead, RefreshFetchesNowAndAVersionThatNeverComesFailsClearly) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  cluster.WriteReaderConfig("reader");
  LoadCapital(cluster, "Cardiff", "1");
  ASSERT_EQ(cluster.RunOnReader("reader", {"lookup", kMap, "Wales"}).exit_code, 0);
  LoadCapital(cluster, "Caerdydd", "2");
  ProcessResult r = cluster.RunOnReader("reader", {"refresh", kMap});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(std::string(kMap) + ": fetched a newer snapshot, content version 2"));
  r = cluster.RunOnReader("reader", {"lookup", kMap, "Wales"});
  EXPECT_EQ(r.out, "Caerdydd\n");

  r = cluster.RunOnReader("reader", {"lookup", "--min-version", "3", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("content version 3 did not arrive within " + std::to_string(10000 * TestTimeScale()) +
                               " ms"));
  EXPECT_THAT(r.err, HasSubstr("the newest snapshot is at 2"));
  r = cluster.RunOnReader("reader", {"lookup", "--min-version", "two", kMap, "Wales"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--min-version: 'two' is not a content version"));
}

TEST(FreshRead, ReaderRefreshServesTheNewSnapshotAtOnce) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string config = cluster.WriteReaderConfig("reader");
  LoadCapital(cluster, "Cardiff", "1");
  ReaderOptions options;
  options.config_path = config;
  options.home = cluster.ReaderHome("reader");
  options.maintenance_interval_ms = 0;
  std::unique_ptr<Reader> reader;
  ASSERT_TRUE(Reader::Open(options, &reader).ok());
  LookupResult result = reader->Lookup(kMap, "Wales");
  ASSERT_TRUE(result.found()) << result.error;
  EXPECT_EQ(std::string(result.value.view()), "Cardiff");

  LoadCapital(cluster, "Caerdydd", "2");
  ASSERT_TRUE(reader->Maintain().ok());
  result = reader->Lookup(kMap, "Wales");
  EXPECT_EQ(std::string(result.value.view()), "Cardiff") << "not due yet: maintenance keeps it";
  const Status refreshed = reader->Refresh(kMap);
  ASSERT_TRUE(refreshed.ok()) << refreshed.message();
  result = reader->Lookup(kMap, "Wales");
  ASSERT_TRUE(result.found()) << result.error;
  EXPECT_EQ(std::string(result.value.view()), "Caerdydd");
  EXPECT_EQ(reader->Refresh("no_such_map").code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace planb
