// Issue 11, defect 1 with a real `planb serve`: a batch whose merge kills the node (PLANB_FAULT=merge.abort:<id>
// aborts as the LMDB assertion did) used to crash-loop it across restarts. Now the attempts are counted across
// the deaths, the batch goes to quarantine/ after kMaxMergeAttempts, the node keeps serving, a later batch of
// another map merges and a later batch of the same map stays staged, reported in the log and in `planb stores`.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "host/ingest/quarantine.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "host/transfer/upload_client.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::ClusterFixture;
using ::planb::testing::ReadFile;
using ::planb::testing::WaitUntil;

// The example config's [map.*] sections, as the cluster's nodes have them.
std::string ExampleMaps() {
  const std::string config = ReadFile(std::string(PLANB_SOURCE_DIR) + "/examples/planb.ini");
  return config.substr(config.find("[map."));
}

// A zip of `rows` rows of `map` with manifest id `batch_id`.
std::string MakeBatch(const std::string& dir, const std::string& map, const std::string& batch_id, int rows) {
  std::unique_ptr<Runtime> runtime;
  const std::string where = dir + "/writer-" + map + "-" + std::to_string(rows);
  EXPECT_TRUE(testing::OpenTestRuntime(where, ExampleMaps(), &runtime).ok());
  StreamWriter writer(runtime->catalog(), where + "/stream");
  for (int i = 0; i < rows; ++i) {
    EXPECT_TRUE(writer.Add(map, testing::StateRecord("key-" + std::to_string(i), batch_id)).ok());
  }
  EXPECT_TRUE(writer.Finish().ok());
  const std::string zip = where + ".zip";
  EXPECT_TRUE(ZipBatch(where + "/stream", zip, ZipOptions{true, batch_id}).ok());
  return zip;
}

Status Upload(zmq::context_t& context, ClusterFixture& cluster, const std::string& zip, const std::string& id) {
  UploadSettings settings;
  settings.request_timeout_ms = 2000;
  settings.send_part_attempts = 1;
  UploadOutcome outcome;
  return UploadBatch(context, UploadTarget{"node1", cluster.endpoint(0)}, zip, id, settings, &outcome);
}

bool HasZip(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".zip") return true;
  }
  return false;
}

TEST(ServeQuarantine, ABatchThatKillsTheMergerIsQuarantinedAndTheNodeGoesOn) {
  ClusterFixture cluster(1);
  zmq::context_t context;
  const std::vector<std::string> fault = {"PLANB_FAULT=merge.abort:test/crash"};
  const std::string crash = MakeBatch(cluster.dir(), "city_to_country", "test/crash", 10);
  const std::string other = MakeBatch(cluster.dir(), "user_to_role", "test/other", 11);
  const std::string same = MakeBatch(cluster.dir(), "city_to_country", "test/same", 12);
  ASSERT_TRUE(cluster.StartNode(0, fault)) << cluster.process(0).log();
  (void)Upload(context, cluster, crash, "test/crash");  // the node may die before or after it answers
  ASSERT_EQ(cluster.process(0).WaitForDeath(), SIGABRT) << cluster.process(0).log();

  // Each restart tries again and dies again, until the count is reached (attempts 2 and 3).
  for (int restart = 2; restart <= kMaxMergeAttempts; ++restart) {
    (void)cluster.StartNode(0, fault);  // may die before it reports ready
    ASSERT_EQ(cluster.process(0).WaitForDeath(), SIGABRT) << "restart " << restart << ":\n" << cluster.process(0).log();
  }
  ASSERT_TRUE(cluster.StartNode(0, fault)) << cluster.process(0).log();
  const std::string quarantine = cluster.home(0) + "/quarantine";
  ASSERT_TRUE(WaitUntil([&] { return HasZip(quarantine); }, {cluster.home(0), quarantine}))
      << cluster.process(0).log();
  EXPECT_TRUE(WaitUntil([&] { return cluster.process(0).log().find("quarantined batch ") != std::string::npos; },
                        {cluster.process(0).log_file()}))
      << cluster.process(0).log();
  EXPECT_NE(cluster.process(0).log().find("merge failed 3 times; last: the merging process died"), std::string::npos);

  // Another map merges; the same map waits.
  ASSERT_TRUE(Upload(context, cluster, other, "test/other").ok());
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  EXPECT_TRUE(fs::exists(cluster.home(0) + "/shards/user_to_role/data.mdb"));
  EXPECT_FALSE(fs::exists(cluster.home(0) + "/shards/city_to_country"));
  ASSERT_TRUE(Upload(context, cluster, same, "test/same").ok());
  EXPECT_TRUE(WaitUntil([&] { return cluster.process(0).log().find("held back") != std::string::npos; },
                        {cluster.process(0).log_file()}))
      << cluster.process(0).log();
  EXPECT_TRUE(HasZip(cluster.home(0) + "/staging"));
  EXPECT_TRUE(cluster.process(0).running());

  const testing::ProcessResult stores =
      testing::RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "stores"});
  EXPECT_EQ(stores.exit_code, 0) << stores.err;
  EXPECT_NE(stores.out.find("quarantined: 1 batch(es) in " + quarantine), std::string::npos) << stores.out;
  EXPECT_NE(stores.out.find("(maps city_to_country): merge failed 3 times"), std::string::npos) << stores.out;
  EXPECT_NE(stores.out.find("blocked: map city_to_country: staged batch "), std::string::npos) << stores.out;
  EXPECT_EQ(cluster.process(0).Stop(), 0);
}

}  // namespace
}  // namespace planb
