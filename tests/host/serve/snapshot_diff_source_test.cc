// BatchesMergedSince (host/serve/snapshot_diff_source.h): from a shard's merge records, which batches a reader at
// an older version lacks, or why they cannot be named.
#include "host/serve/snapshot_diff_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <memory>
#include <string>
#include <vector>

#include "host/transfer/snapshot_diff_file.h"
#include "planb/lmdb.h"
#include "support/map_fixture.h"
#include "support/snapshot_fixture.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BatchesMergedSinceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string shard;
    ASSERT_TRUE(MakeShard(dir_.path(), NumberedRows(0, 3), &shard, &start_).ok());
    ASSERT_TRUE(OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed"), &runtime_).ok());
    ASSERT_TRUE(runtime_->OpenShard("m", &env_).ok());
  }
  // Records batch `id` as merged at `merged_ms` (as a merge's transaction does); returns the version after it.
  ContentVersion Record(const std::string& id, int64_t merged_ms) {
    Txn txn;
    EXPECT_TRUE(txn.Begin(env_->env(), 0).ok());
    bool counted = false;
    EXPECT_TRUE(RecordMergedBatch(txn.get(), env_->meta(), env_->batches(), id, merged_ms, &counted).ok());
    EXPECT_TRUE(counted);
    EXPECT_TRUE(txn.Commit().ok());
    Txn read;
    EXPECT_TRUE(read.Begin(env_->env(), MDB_RDONLY).ok());
    ContentVersion version;
    EXPECT_TRUE(ReadContentVersion(read.get(), env_->meta(), &version).ok());
    return version;
  }
  Status Since(const ContentVersion& have, std::vector<std::string>* ids, bool* found, std::string* why) {
    Txn txn;
    PLANB_RETURN_IF_ERROR(txn.Begin(env_->env(), MDB_RDONLY));
    return BatchesMergedSince(txn.get(), *env_, have, ids, found, why);
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<MapEnv> env_;
  ContentVersion start_;
};

TEST_F(BatchesMergedSinceTest, NamesTheBatchesAfterEachPointOfTheHistoryOldestFirst) {
  // Merged in an order that is not the ids' order, one at the same millisecond as another.
  const ContentVersion after_z = Record("z-batch", 4'000'000'000'000);
  const ContentVersion after_a = Record("a-batch", 4'000'000'000'100);
  Record("m-batch", 4'000'000'000'100);
  std::vector<std::string> ids;
  bool found = false;
  std::string why;
  ASSERT_TRUE(Since(start_, &ids, &found, &why).ok());
  EXPECT_TRUE(found) << why;
  EXPECT_THAT(ids, ElementsAre("z-batch", "a-batch", "m-batch"));
  ASSERT_TRUE(Since(after_z, &ids, &found, &why).ok());
  EXPECT_TRUE(found) << why;
  EXPECT_THAT(ids, ElementsAre("a-batch", "m-batch"));
  ASSERT_TRUE(Since(after_a, &ids, &found, &why).ok());
  EXPECT_TRUE(found) << why;
  EXPECT_THAT(ids, ElementsAre("m-batch"));
}

TEST_F(BatchesMergedSinceTest, AVersionThatIsNoPointOfTheHistoryIsSaidSo) {
  Record("b1", 4'000'000'000'000);
  Record("b2", 4'000'000'000'001);
  std::vector<std::string> ids;
  bool found = true;
  std::string why;
  // Another node's history: the same count as after b1, but b2 instead of b1.
  ContentVersion elsewhere = start_;
  elsewhere.batches += 1;
  elsewhere.digest ^= XXH3_64bits("b2", 2);
  ASSERT_TRUE(Since(elsewhere, &ids, &found, &why).ok());
  EXPECT_FALSE(found);
  EXPECT_TRUE(ids.empty());
  EXPECT_THAT(why, HasSubstr("is not a point of this shard's history"));
  // Ahead of the shard, or at it: nothing to walk.
  ContentVersion ahead{start_.batches + 5, 1};
  ASSERT_TRUE(Since(ahead, &ids, &found, &why).ok());
  EXPECT_FALSE(found);
  EXPECT_THAT(why, HasSubstr("is not behind this node's shard"));
}

TEST_F(BatchesMergedSinceTest, MoreBatchesBehindThanADiffCarriesOrThanRecordedAreSaidSo) {
  Record("b1", 4'000'000'000'000);
  std::vector<std::string> ids;
  bool found = true;
  std::string why;
  // A version of no batches but a digest: walking back both batches reaches {0, 0}, not it.
  ASSERT_TRUE(Since(ContentVersion{0, 7}, &ids, &found, &why).ok());
  EXPECT_FALSE(found);
  // A version far behind: more batches than a diff carries.
  Txn txn;
  ASSERT_TRUE(txn.Begin(env_->env(), 0).ok());
  ASSERT_TRUE(WriteContentVersion(txn.get(), env_->meta(), ContentVersion{kMaxDiffBatches + 10, 1}).ok());
  ASSERT_TRUE(txn.Commit().ok());
  ASSERT_TRUE(Since(ContentVersion{5, 1}, &ids, &found, &why).ok());
  EXPECT_FALSE(found);
  EXPECT_THAT(why, HasSubstr("batches behind, more than a diff carries (1024)"));
  ASSERT_TRUE(Since(ContentVersion{kMaxDiffBatches, 1}, &ids, &found, &why).ok());
  EXPECT_FALSE(found);
  EXPECT_THAT(why, HasSubstr("the shard records 2 batches, fewer than the 10 merged since"));
}

}  // namespace
}  // namespace planb::testing
