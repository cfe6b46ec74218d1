// `planb backup` (issue 40) of a running `planb serve`: the copy holds the same rows and merged batches, a node
// started on it serves the same answers; bad destinations are refused with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "support/cluster_fixture.h"
#include "support/node_process.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClusterFixture;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::DumpShards;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;
using ::planb::testing::WriteFile;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

ProcessResult Backup(ClusterFixture& cluster, const std::string& dest) {
  return RunPlanb({"--config", cluster.config(0), "--home", cluster.home(0), "backup", dest});
}

// Whether `dir` holds anything whose name starts with `prefix` (a partial copy left behind).
bool HasEntryStartingWith(const std::string& dir, const std::string& prefix) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

ProcessResult RemoteLookup(ClusterFixture& cluster, const std::string& key) {
  return RunPlanb({"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/proc-home", "lookup",
                   "--remote", "city_to_country", key});
}

TEST(Backup, ACopyOfARunningNodeHoldsItsRowsAndANodeStartedOnItServesTheSameAnswers) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles(), 1));
  const ProcessResult before = RemoteLookup(cluster, "Paris");
  ASSERT_EQ(before.exit_code, 0) << before.err;

  const std::string dest = cluster.dir() + "/backup";
  const ProcessResult backup = Backup(cluster, dest);
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  EXPECT_THAT(backup.out, HasSubstr("; verified"));
  EXPECT_THAT(backup.err, HasSubstr("verified"));
  EXPECT_EQ(DumpShards(dest), DumpShards(cluster.home(0)));
  EXPECT_EQ(DumpBatchIds(dest), DumpBatchIds(cluster.home(0)));
  EXPECT_FALSE(HasEntryStartingWith(cluster.dir(), ".backup.partial-"));

  // Restore: the node's home replaced by the copy.
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  fs::rename(cluster.home(0), cluster.home(0) + ".old");
  fs::rename(dest, cluster.home(0));
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const ProcessResult after = RemoteLookup(cluster, "Paris");
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  // Loading the same files again merges nothing twice: the copy remembers the merged batches.
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles(), 1));
  EXPECT_EQ(DumpShards(cluster.home(0)), DumpShards(cluster.home(0) + ".old"));
}

bool HasZip(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".zip") return true;
  }
  return false;
}

TEST(Backup, BatchesStillStagedAreCopiedAndMergeOnTheRestoredNode) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  {
    FileLock merges_wait;  // as `planb maintain` holds it: the batch stays staged
    ASSERT_TRUE(merges_wait.Acquire(cluster.home(0) + "/merging/.lock").ok());
    const ProcessResult load = RunPlanb({"--config", cluster.WriteProcessingConfig(), "--home",
                                         cluster.dir() + "/proc-home", "load", "--no-wait", ExampleDataFiles()[0]});
    ASSERT_EQ(load.exit_code, 0) << load.err;
    ASSERT_TRUE(HasZip(cluster.home(0) + "/staging"));
    const ProcessResult backup = Backup(cluster, cluster.dir() + "/backup");
    ASSERT_EQ(backup.exit_code, 0) << backup.err;
  }
  EXPECT_TRUE(HasZip(cluster.dir() + "/backup/staging"));
  ASSERT_TRUE(cluster.WaitMerged(0));
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  fs::rename(cluster.home(0), cluster.home(0) + ".old");
  fs::rename(cluster.dir() + "/backup", cluster.home(0));
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.WaitMerged(0));
  EXPECT_EQ(DumpShards(cluster.home(0)), DumpShards(cluster.home(0) + ".old"));
  EXPECT_EQ(DumpBatchIds(cluster.home(0)), DumpBatchIds(cluster.home(0) + ".old"));
}

TEST(Backup, ANonEmptyMissingOrInsideDestinationIsRefusedAndNothingIsWritten) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(cluster.LoadAndWaitMerged({ExampleDataFiles()[0]}, 1));

  const std::string full = cluster.dir() + "/full";
  fs::create_directories(full);
  WriteFile(full + "/keep.txt", "mine\n");
  ProcessResult refused = Backup(cluster, full);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("backup: " + full + " is not empty (1 entries)"));
  EXPECT_EQ(std::vector<fs::path>(fs::directory_iterator(full), fs::directory_iterator()).size(), 1u);

  WriteFile(cluster.dir() + "/a-file", "x");
  refused = Backup(cluster, cluster.dir() + "/a-file");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("exists and is not a directory"));
  refused = Backup(cluster, cluster.dir() + "/a-file/sub");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("a part of its path is not a directory"));
  refused = Backup(cluster, cluster.dir() + "/no/such/parent/copy");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("the parent directory of"));
  refused = Backup(cluster, cluster.home(0) + "/shards/copy");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("is inside the home"));
  EXPECT_FALSE(fs::exists(cluster.home(0) + "/shards/copy"));
  EXPECT_FALSE(HasEntryStartingWith(cluster.dir(), "."));

  // An empty directory is fine.
  const std::string empty = cluster.dir() + "/empty";
  fs::create_directories(empty);
  const ProcessResult backup = Backup(cluster, empty);
  EXPECT_EQ(backup.exit_code, 0) << backup.err;
  EXPECT_EQ(DumpShards(empty), DumpShards(cluster.home(0)));
}

}  // namespace
}  // namespace planb
