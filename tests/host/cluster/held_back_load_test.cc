// Issue 40 on a real cluster: a load into a map that a storage node holds back behind a quarantined batch used to
// exit 0 ("content version of MAP: N once merged") while its batch sat unmerged on the node. The node's PREPARE
// answer now says the map is held back, naming the batch and how to release it, and the load fails (exit 2) with
// nothing staged; from the processing node and from the storage node itself (whose own copy `planb serve`
// merges). `load --no-wait` stages behind the batch instead, and the batch merges once the operator drops the
// quarantined one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/home.h"
#include "host/transfer/batch_zip.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::ClusterFixture;
using ::planb::testing::ProcessResult;
using ::planb::testing::ReadFile;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kMap[] = "city_to_country";

// Puts a batch of city_to_country into node `i`'s quarantine/ as its merge processor does after the third failed
// attempt (staged first, so it has a staging name); returns its path there. Call before the node starts.
std::string QuarantineABatch(ClusterFixture& cluster, int i) {
  const std::string config = ReadFile(std::string(PLANB_SOURCE_DIR) + "/examples/planb.ini");
  std::unique_ptr<Runtime> writer_runtime;
  const std::string writer_dir = cluster.dir() + "/writer";
  EXPECT_TRUE(testing::OpenTestRuntime(writer_dir, config.substr(config.find("[map.")), &writer_runtime).ok());
  StreamWriter writer(writer_runtime->catalog(), writer_dir + "/stream");
  EXPECT_TRUE(writer.Add(kMap, testing::StateRecord("Cardiff", "Wales")).ok());
  EXPECT_TRUE(writer.Finish().ok());
  const std::string zip = writer_dir + "/batch.zip";
  EXPECT_TRUE(ZipBatch(writer_dir + "/stream", zip, ZipOptions{true, "test/quarantined"}).ok());
  Home home;
  EXPECT_TRUE(Home::Open(cluster.home(i), &home).ok());
  uint64_t sequence = 0;
  EXPECT_TRUE(StagingStore(home).Stage(zip, &sequence).ok());
  QuarantinedBatch moved;
  const std::string staged = home.staging() + "/" + StagingStore::BatchFileName(sequence);
  EXPECT_TRUE(QuarantineBatch(home, staged, {kMap}, true, "merge failed 3 times; last: the test's", &moved).ok());
  return QuarantineDir(home) + "/" + moved.name;
}

std::string CitiesFile(const ClusterFixture& cluster) {
  const std::string path = cluster.dir() + "/cities.xml";
  testing::WriteFile(path, "<referenceData xmlns=\"reference-data:2\"><reference><map>city_to_country</map><key>Lyon"
                           "</key><value>France</value></reference></referenceData>\n");
  return path;
}

std::string RolesFile(const ClusterFixture& cluster) {
  const std::string path = cluster.dir() + "/roles.xml";
  testing::WriteFile(path, "<referenceData xmlns=\"reference-data:2\"><reference><map>user_to_role</map><key>jsmith"
                           "</key><value>admin</value></reference></referenceData>\n");
  return path;
}

bool StagingHoldsABatch(const ClusterFixture& cluster, int i) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(cluster.home(i) + "/staging", ec)) {
    if (entry.path().extension() == ".zip") return true;
  }
  return false;
}

void ExpectRefusedNamingTheBatch(const ProcessResult& r, const ClusterFixture& cluster, const std::string& node,
                                 const std::string& quarantined) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("once merged")));
  EXPECT_THAT(r.err, HasSubstr("nothing was staged on any node"));
  EXPECT_THAT(r.err, HasSubstr(node + ": map 'city_to_country' is held back behind quarantined batch " + quarantined));
  EXPECT_THAT(r.err, HasSubstr("mv " + quarantined + " " + cluster.home(0) + "/staging/"));
  EXPECT_THAT(r.err, HasSubstr("rm " + quarantined + " " + quarantined + ".reason"));
  EXPECT_THAT(r.err, HasSubstr("load --no-wait stages it anyway"));
}

TEST(HeldBackLoad, AClusterLoadIntoAMapHeldBackByAQuarantinedBatchFailsUnlessNoWait) {
  ClusterFixture cluster(1);
  const std::string quarantined = QuarantineABatch(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string cities = CitiesFile(cluster);

  ExpectRefusedNamingTheBatch(cluster.Load({cities}), cluster, "node1", quarantined);
  ExpectRefusedNamingTheBatch(cluster.Load({cities}, 0), cluster, "node1 (this node)", quarantined);
  EXPECT_FALSE(StagingHoldsABatch(cluster, 0));
  EXPECT_TRUE(cluster.LoadAndWaitMerged({RolesFile(cluster)}));  // a map no quarantined batch holds loads

  const ProcessResult staged = cluster.Load({"--no-wait", cities});
  EXPECT_EQ(staged.exit_code, 0) << staged.err;
  EXPECT_THAT(staged.out, HasSubstr("content version of city_to_country: 1 once merged"));
  EXPECT_THAT(staged.err, HasSubstr("planb: note: node1: map 'city_to_country' is held back behind quarantined "
                                    "batch " + quarantined));
  const ProcessResult stores =
      testing::RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "stores"});
  EXPECT_THAT(stores.out, HasSubstr("blocked: map city_to_country: staged batch ")) << stores.out;

  // Dropped as the hint says: the node merges the held batch by itself.
  ASSERT_TRUE(fs::remove(quarantined));
  ASSERT_TRUE(fs::remove(quarantined + ".reason"));
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const ProcessResult lookup =
      testing::RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "lookup", kMap, "Lyon"});
  EXPECT_EQ(lookup.out, "France\n") << lookup.err;
  EXPECT_EQ(cluster.process(0).Stop(), 0);
}

// With synchronise_merge the load waits for the merge, which a held-back map never gives it: without --no-wait
// it is refused as above; with it, the load returns once the batch is staged.
TEST(HeldBackLoad, NoWaitDoesNotWaitForASynchronisedMerge) {
  ClusterFixture cluster(1, "synchronise_merge = true\n");
  const std::string quarantined = QuarantineABatch(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string cities = CitiesFile(cluster);
  ExpectRefusedNamingTheBatch(cluster.Load({cities}), cluster, "node1", quarantined);
  const ProcessResult staged = cluster.Load({cities, "--no-wait"});
  EXPECT_EQ(staged.exit_code, 0) << staged.err;
  EXPECT_THAT(staged.out, HasSubstr("stored on 1 storage node(s)"));
  EXPECT_TRUE(StagingHoldsABatch(cluster, 0));
  EXPECT_EQ(cluster.process(0).Stop(), 0);
}

}  // namespace
}  // namespace planb
