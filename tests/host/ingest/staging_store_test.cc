#include "host/ingest/staging_store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class StagingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = Home::Open(dir_ / "home", &home_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A complete batch directory to stage (its contents do not matter to the staging store).
  std::string MakeBatch(const std::string& name) {
    const std::string dir = dir_ / name;
    WriteFile(dir + "/m/marker", name);
    return dir;
  }

  uint64_t Stage(const std::string& name) {
    StagingStore staging(home_);
    uint64_t sequence = 0;
    const Status s = staging.Stage(MakeBatch(name), &sequence);
    EXPECT_TRUE(s.ok()) << s.message();
    return sequence;
  }

  std::vector<uint64_t> Listed(const std::string& directory) {
    std::vector<StagedBatch> batches;
    const Status s = StagingStore::List(directory, &batches);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<uint64_t> sequences;
    for (const StagedBatch& b : batches) {
      EXPECT_EQ(b.path, directory + "/" + StagingStore::BatchName(b.sequence));
      sequences.push_back(b.sequence);
    }
    return sequences;
  }

  TempDir dir_;
  Home home_;
};

TEST(StagingStore, BatchNamesAreTwentyDigits) {
  EXPECT_EQ(StagingStore::BatchName(1), "00000000000000000001");
  EXPECT_EQ(StagingStore::BatchName(42), "00000000000000000042");
  EXPECT_EQ(StagingStore::BatchName(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
}

TEST_F(StagingStoreTest, StagingMovesTheBatchUnderIncreasingSequenceNumbers) {
  EXPECT_EQ(Stage("a"), 1u);
  EXPECT_EQ(Stage("b"), 2u);
  EXPECT_EQ(Stage("c"), 3u);
  EXPECT_FALSE(fs::exists(dir_ / "a"));  // moved, not copied
  EXPECT_EQ(testing::ReadFile(home_.staging() + "/" + StagingStore::BatchName(2) + "/m/marker"), "b");
  EXPECT_EQ(Listed(home_.staging()), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(StagingStoreTest, NumbersAreNeverReusedAfterStagingEmpties) {
  EXPECT_EQ(Stage("a"), 1u);
  EXPECT_EQ(Stage("b"), 2u);
  for (uint64_t sequence : Listed(home_.staging())) {
    fs::remove_all(home_.staging() + "/" + StagingStore::BatchName(sequence));
  }
  ASSERT_TRUE(Listed(home_.staging()).empty());
  EXPECT_EQ(Stage("c"), 3u);

  // Another StagingStore on the same home (as after a restart) continues the sequence.
  Home reopened;
  ASSERT_TRUE(Home::Open(home_.root(), &reopened).ok());
  StagingStore staging(reopened);
  uint64_t sequence = 0;
  ASSERT_TRUE(staging.Stage(MakeBatch("d"), &sequence).ok());
  EXPECT_EQ(sequence, 4u);
}

TEST(StagingStore, NumbersAreNeverReusedAfterAMergeEmptiesStaging) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(OpenTestRuntime(dir.path(), StateMapSection("m", "direct"), &runtime).ok());
  uint64_t first = 0;
  uint64_t second = 0;
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "1"}}, &first).ok());
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "2"}}, &second).ok());
  MergeProcessor merger(*runtime);
  MergeReport report;
  ASSERT_TRUE(merger.MergePending(&report).ok());
  ASSERT_EQ(report.batches, 2u);
  std::vector<StagedBatch> left;
  ASSERT_TRUE(StagingStore::List(runtime->home().staging(), &left).ok());
  ASSERT_TRUE(left.empty());

  uint64_t third = 0;
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "3"}}, &third).ok());
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);
  EXPECT_EQ(third, 3u);
}

TEST_F(StagingStoreTest, ListIgnoresWhatIsNotABatchAndSortsByNumber) {
  fs::create_directories(home_.staging() + "/00000000000000000010");
  fs::create_directories(home_.staging() + "/00000000000000000009");
  fs::create_directories(home_.staging() + "/123");                    // too short
  fs::create_directories(home_.staging() + "/0000000000000000001x");   // not digits
  fs::create_directories(home_.staging() + "/000000000000000000011");  // too long
  WriteFile(home_.staging() + "/00000000000000000005", "a file, not a batch");
  WriteFile(home_.staging() + "/.sequence", "77\n");
  EXPECT_EQ(Listed(home_.staging()), (std::vector<uint64_t>{9, 10}));
}

TEST_F(StagingStoreTest, ListOfAMissingDirectoryIsAnError) {
  std::vector<StagedBatch> batches;
  EXPECT_FALSE(StagingStore::List(dir_ / "missing", &batches).ok());
}

TEST_F(StagingStoreTest, ACorruptCounterIsRefusedAndNothingMoves) {
  WriteFile(home_.staging() + "/.sequence", "garbage\n");
  StagingStore staging(home_);
  uint64_t sequence = 0;
  const std::string batch = MakeBatch("a");
  const Status s = staging.Stage(batch, &sequence);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_TRUE(Contains(s.message(), home_.staging() + "/.sequence")) << s.message();
  EXPECT_TRUE(fs::exists(batch + "/m/marker"));
  EXPECT_TRUE(Listed(home_.staging()).empty());
}

}  // namespace
}  // namespace planb
