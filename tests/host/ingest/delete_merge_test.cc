// Deletion batches in the merge processor, in process on a real home: merged in order with loads, counted in the
// content version; a deletion whose expression no longer parses for the map (its type changed) is the batch's
// fault and holds back the later batches of its map, not those of others; ListBatchMaps names delete entries.
#include "host/ingest/delete_merge.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/storage/content_version.h"
#include "host/transfer/batch_zip.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using testing::TempDir;

// Stages a deletion batch of `map` with the entry text `text` (no checks: as a peer could send it).
// `text` is what follows the time line; the deletion's time is the next record time StateRecord hands out, so
// rows staged before it are older and rows staged after it newer, as a deletion made between two loads would be.
uint64_t StageDeletion(Runtime& runtime, const std::string& map, const std::string& text, const std::string& id) {
  const std::string dir = runtime.home().writer() + "/" + id;
  testing::WriteFile(dir + "/" + map + "/delete", "time " + std::to_string(testing::StateRecord("", "").time_ms) + "\n" + text);
  const std::string zip = dir + ".zip";
  EXPECT_TRUE(ZipBatch(dir, zip, ZipOptions{false, "test/" + id}).ok());
  uint64_t sequence = 0;
  EXPECT_TRUE(StagingStore(runtime.home()).Stage(zip, &sequence).ok());
  EXPECT_TRUE(RemoveTree(dir).ok());
  return sequence;
}

ContentVersion VersionOf(Runtime& runtime, const std::string& map) {
  std::shared_ptr<MapEnv> shard;
  ContentVersion version;
  Txn txn;
  EXPECT_TRUE(runtime.OpenShard(map, &shard).ok());
  EXPECT_TRUE(txn.Begin(shard->env(), MDB_RDONLY).ok());
  EXPECT_TRUE(ReadContentVersion(txn.get(), shard->meta(), &version).ok());
  return version;
}

class DeleteMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string config = testing::StateMapSection("m", "hashed") + testing::StateMapSection("n", "direct");
    ASSERT_TRUE(testing::OpenTestRuntime(dir_.path(), config, &runtime_).ok());
  }
  MergeReport Merge() {
    MergeReport report;
    (void)MergeProcessor(*runtime_).MergePending(&report);
    return report;
  }
  std::string Get(const std::string& map, const std::string& key) {
    std::string value;
    return testing::LookupShard(*runtime_, map, key, &value) == Code::kOk ? value : "(absent)";
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(DeleteMergeTest, ListBatchMapsNamesDeleteEntries) {
  const uint64_t sequence = StageDeletion(*runtime_, "m", "all\n", "d1");
  std::vector<std::string> maps;
  ASSERT_TRUE(ListBatchMaps(runtime_->home().staging() + "/" + StagingStore::BatchFileName(sequence), &maps).ok());
  EXPECT_EQ(maps, std::vector<std::string>{"m"});
}

TEST_F(DeleteMergeTest, ADeletionMergesInOrderWithLoadsAndCountsInTheVersion) {
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k1", "a"}, {"k2", "b"}, {"k3", "a"}}).ok());
  StageDeletion(*runtime_, "m", "where Value = 'a'\n", "d1");
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k1", "c"}}).ok());  // after the deletion: stays
  const MergeReport report = Merge();
  EXPECT_EQ(report.batches, 3u);
  EXPECT_TRUE(report.failed.empty());
  EXPECT_EQ(report.rows_deleted.at("m"), 2u);
  EXPECT_EQ(Get("m", "k1"), "c");
  EXPECT_EQ(Get("m", "k2"), "b");
  EXPECT_EQ(Get("m", "k3"), "(absent)");
  EXPECT_EQ(VersionOf(*runtime_, "m").batches, 3u);
}

// Thousands of rows over many pages, every other one deleted: MDB_NEXT after each mdb_cursor_del must reach the
// next row even where LMDB rebalances pages under the cursor.
TEST_F(DeleteMergeTest, DeletingEveryOtherRowOfManyPagesTakesExactlyThose) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (int k = 0; k < 6000; ++k) rows.emplace_back("key" + std::to_string(k), k % 2 == 0 ? "even" : "odd");
  ASSERT_TRUE(testing::StageRows(*runtime_, "n", rows).ok());
  StageDeletion(*runtime_, "n", "where Value = 'odd'\n", "d1");
  const MergeReport report = Merge();
  ASSERT_TRUE(report.failed.empty());
  EXPECT_EQ(report.rows_deleted.at("n"), 3000u);
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("n", &shard).ok());
  std::vector<testing::DumpedRow> left;
  ASSERT_TRUE(testing::DumpMap(*shard, &left).ok());
  EXPECT_EQ(left.size(), 3000u);
  for (const testing::DumpedRow& row : left) EXPECT_EQ(row.value, "even") << row.key;
}

TEST_F(DeleteMergeTest, DeleteFromShardSkipsABatchTheShardRecords) {
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k1", "a"}}).ok());
  Merge();
  std::shared_ptr<const MapPlugins> plugins;
  ASSERT_TRUE(runtime_->catalog().Get("m", &plugins).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("m", &shard).ok());
  DeleteMergeResult result;
  ASSERT_TRUE(DeleteFromShard(*plugins, *shard, DeleteEntry{testing::StateRecord("", "").time_ms, true, ""}, "test/d1", 1, &result).ok());
  EXPECT_EQ(result.rows_deleted, 1u);
  EXPECT_FALSE(result.already_merged);
  const ContentVersion after = VersionOf(*runtime_, "m");
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k2", "b"}}).ok());
  Merge();
  ASSERT_TRUE(DeleteFromShard(*plugins, *shard, DeleteEntry{testing::StateRecord("", "").time_ms, true, ""}, "test/d1", 2, &result).ok());
  EXPECT_TRUE(result.already_merged);
  EXPECT_EQ(result.rows_deleted, 0u);
  EXPECT_EQ(Get("m", "k2"), "b");
  EXPECT_EQ(VersionOf(*runtime_, "m").batches, after.batches + 1);
}

TEST_F(DeleteMergeTest, AnExpressionThatDoesNotParseForTheMapIsTheBatchsFaultAndHoldsBackItsMap) {
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k1", "a"}}).ok());
  Merge();
  // KeyStart is no field of a state map (the map was ranged when the deletion was made, say).
  const uint64_t deletion = StageDeletion(*runtime_, "m", "where KeyStart = 5\n", "d1");
  uint64_t later_m = 0;
  uint64_t later_n = 0;
  ASSERT_TRUE(testing::StageRows(*runtime_, "m", {{"k2", "b"}}, &later_m).ok());
  ASSERT_TRUE(testing::StageRows(*runtime_, "n", {{"x", "y"}}, &later_n).ok());
  const MergeReport report = Merge();
  ASSERT_EQ(report.failed.count(deletion), 1u);
  EXPECT_NE(report.failed.at(deletion).find("unknown field 'KeyStart'"), std::string::npos)
      << report.failed.at(deletion);
  EXPECT_NE(report.failed.at(deletion).find("delete entry of map m"), std::string::npos);
  ASSERT_EQ(report.held.size(), 1u);
  EXPECT_EQ(report.held[0].sequence, later_m);
  EXPECT_EQ(report.merged.count(later_n), 1u);
  // Counted towards quarantine: the batch is at fault, not the node.
  EXPECT_EQ(ReadMergeAttempts(runtime_->home().staging() + "/" + StagingStore::BatchFileName(deletion)).count, 1);
  EXPECT_EQ(Get("m", "k1"), "a");
  EXPECT_EQ(Get("m", "k2"), "(absent)");
}

}  // namespace
}  // namespace planb
