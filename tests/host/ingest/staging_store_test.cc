#include "host/ingest/staging_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::ReadFile;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

struct stat Stat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

class StagingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = Home::Open(dir_ / "home", &home_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A complete batch zip to stage. The staging store never reads it, so any bytes do; the name says which.
  std::string MakeZip(const std::string& name) {
    const std::string path = dir_ / (name + ".zip");
    WriteFile(path, "zip " + name);
    return path;
  }

  uint64_t Stage(const std::string& name, bool link_only = false) {
    StagingStore staging(home_);
    uint64_t sequence = 0;
    const Status s = staging.Stage(MakeZip(name), &sequence, link_only);
    EXPECT_TRUE(s.ok()) << s.message();
    return sequence;
  }

  std::string StagedPath(uint64_t sequence) const {
    return home_.staging() + "/" + StagingStore::BatchFileName(sequence);
  }

  std::vector<uint64_t> Listed() {
    std::vector<StagedBatch> batches;
    const Status s = StagingStore(home_).List(&batches);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<uint64_t> sequences;
    for (const StagedBatch& b : batches) {
      EXPECT_EQ(b.path, StagedPath(b.sequence));
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
  EXPECT_EQ(StagingStore::BatchFileName(7), "00000000000000000007.zip");
}

TEST_F(StagingStoreTest, StagingMovesTheZipUnderIncreasingSequenceNumbers) {
  const std::string a = MakeZip("a");
  const ino_t a_inode = Stat(a).st_ino;
  StagingStore staging(home_);
  uint64_t sequence = 0;
  ASSERT_TRUE(staging.Stage(a, &sequence).ok());
  EXPECT_EQ(sequence, 1u);
  EXPECT_EQ(Stage("b"), 2u);
  EXPECT_EQ(Stage("c"), 3u);
  EXPECT_FALSE(fs::exists(a));                     // moved, not copied
  EXPECT_EQ(Stat(StagedPath(1)).st_ino, a_inode);  // the same file
  EXPECT_EQ(ReadFile(StagedPath(2)), "zip b");
  EXPECT_EQ(Listed(), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(StagingStoreTest, LinkOnlyStagesAHardLinkAndLeavesTheSource) {
  const std::string a = MakeZip("a");
  StagingStore staging(home_);
  uint64_t sequence = 0;
  const Status s = staging.Stage(a, &sequence, /*link_only=*/true);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(sequence, 1u);
  ASSERT_TRUE(fs::exists(a));
  EXPECT_EQ(ReadFile(a), "zip a");
  EXPECT_EQ(Stat(StagedPath(1)).st_ino, Stat(a).st_ino);
  EXPECT_EQ(Stat(a).st_nlink, 2u);
  EXPECT_EQ(Listed(), std::vector<uint64_t>{1});

  // The source may be removed (sent everywhere) while the staged link waits for the merge.
  fs::remove(a);
  EXPECT_EQ(ReadFile(StagedPath(1)), "zip a");
}

TEST_F(StagingStoreTest, NumbersAreNeverReusedAfterStagingEmpties) {
  EXPECT_EQ(Stage("a"), 1u);
  EXPECT_EQ(Stage("b"), 2u);
  for (uint64_t sequence : Listed()) fs::remove(StagedPath(sequence));
  ASSERT_TRUE(Listed().empty());
  EXPECT_EQ(Stage("c"), 3u);

  // Another StagingStore on the same home (as after a restart) continues the sequence.
  Home reopened;
  ASSERT_TRUE(Home::Open(home_.root(), &reopened).ok());
  StagingStore staging(reopened);
  uint64_t sequence = 0;
  ASSERT_TRUE(staging.Stage(MakeZip("d"), &sequence).ok());
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
  const Status s = merger.MergePending(&report);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.batches, 2u);
  std::vector<StagedBatch> left;
  ASSERT_TRUE(StagingStore(runtime->home()).List(&left).ok());
  ASSERT_TRUE(left.empty());

  uint64_t third = 0;
  ASSERT_TRUE(StageRows(*runtime, "m", {{"k", "3"}}, &third).ok());
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);
  EXPECT_EQ(third, 3u);
}

// Two stagers at once (separate StagingStores, as in two processes: each takes its own flock on staging/.lock).
TEST_F(StagingStoreTest, ConcurrentStagersGetDistinctIncreasingNumbers) {
  constexpr int kPerThread = 40;
  std::vector<uint64_t> got[2];
  Status errors[2];
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < kPerThread; ++i) MakeZip("t" + std::to_string(t) + "-" + std::to_string(i));
  }
  auto stage_all = [&](int t) {
    Home home;
    errors[t] = Home::Open(home_.root(), &home);
    StagingStore staging(home);
    for (int i = 0; i < kPerThread && errors[t].ok(); ++i) {
      uint64_t sequence = 0;
      errors[t] = staging.Stage(dir_ / ("t" + std::to_string(t) + "-" + std::to_string(i) + ".zip"), &sequence);
      got[t].push_back(sequence);
    }
  };
  std::thread other(stage_all, 1);
  stage_all(0);
  other.join();
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(errors[t].ok()) << errors[t].message();
    ASSERT_EQ(got[t].size(), static_cast<size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(got[t].begin(), got[t].end()));
    EXPECT_EQ(std::adjacent_find(got[t].begin(), got[t].end()), got[t].end()) << "a number repeated";
  }
  std::vector<uint64_t> all = got[0];
  all.insert(all.end(), got[1].begin(), got[1].end());
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> expected;
  for (uint64_t n = 1; n <= 2 * kPerThread; ++n) expected.push_back(n);
  EXPECT_EQ(all, expected);  // distinct, none skipped
  EXPECT_EQ(Listed(), expected);
  // Each staged file is the zip its stager was given for that number.
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      EXPECT_EQ(ReadFile(StagedPath(got[t][i])), "zip t" + std::to_string(t) + "-" + std::to_string(i));
    }
  }
}

TEST_F(StagingStoreTest, ListIgnoresWhatIsNotABatchAndSortsByNumber) {
  WriteFile(StagedPath(10), "z");
  WriteFile(StagedPath(9), "z");
  fs::create_directories(home_.staging() + "/00000000000000000005.zip");  // a directory, not a zip file
  WriteFile(home_.staging() + "/123.zip", "too short");
  WriteFile(home_.staging() + "/0000000000000000001x.zip", "not digits");
  WriteFile(home_.staging() + "/000000000000000000011.zip", "too long");
  WriteFile(home_.staging() + "/00000000000000000007", "no .zip");
  WriteFile(home_.staging() + "/00000000000000000008.zip.tmp", "a zip being written");
  WriteFile(home_.staging() + "/00000000000000000004.ZIP", "upper case");
  fs::create_symlink(StagedPath(9), StagedPath(6));  // a link to a file elsewhere is not a staged batch
  WriteFile(home_.staging() + "/.sequence", "77\n");
  WriteFile(home_.staging() + "/.lock", "");
  EXPECT_EQ(Listed(), (std::vector<uint64_t>{9, 10}));
}

TEST_F(StagingStoreTest, ListOfAMissingStagingDirectoryIsAnErrorNamingIt) {
  fs::remove_all(home_.staging());
  std::vector<StagedBatch> batches;
  const Status s = StagingStore(home_).List(&batches);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), home_.staging())) << s.message();
}

TEST_F(StagingStoreTest, ContainsIsWhetherTheBatchIsStillStaged) {
  StagingStore staging(home_);
  EXPECT_FALSE(staging.Contains(1));
  EXPECT_EQ(Stage("a"), 1u);
  EXPECT_EQ(Stage("b"), 2u);
  EXPECT_TRUE(staging.Contains(1));
  EXPECT_TRUE(staging.Contains(2));
  EXPECT_FALSE(staging.Contains(3));
  fs::remove(StagedPath(1));  // merged
  EXPECT_FALSE(staging.Contains(1));
  EXPECT_TRUE(staging.Contains(2));
  fs::create_directories(StagedPath(5));
  EXPECT_FALSE(staging.Contains(5));  // a directory of that name is not a batch
}

TEST_F(StagingStoreTest, ACorruptCounterIsRefusedAndNothingMoves) {
  WriteFile(home_.staging() + "/.sequence", "garbage\n");
  StagingStore staging(home_);
  uint64_t sequence = 0;
  const std::string zip = MakeZip("a");
  const Status s = staging.Stage(zip, &sequence);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_TRUE(Contains(s.message(), home_.staging() + "/.sequence")) << s.message();
  EXPECT_EQ(ReadFile(zip), "zip a");
  EXPECT_TRUE(Listed().empty());
}

TEST_F(StagingStoreTest, AMissingZipIsAnErrorNamingItAndTakesNoNumber) {
  StagingStore staging(home_);
  uint64_t sequence = 0;
  const std::string missing = dir_ / "missing.zip";
  Status s = staging.Stage(missing, &sequence);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_TRUE(Contains(s.message(), missing)) << s.message();
  s = staging.Stage(missing, &sequence, /*link_only=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), missing)) << s.message();
  EXPECT_TRUE(Listed().empty());
  EXPECT_EQ(Stage("a"), 1u);
}

TEST_F(StagingStoreTest, ADirectoryIsRefusedNamingIt) {
  const std::string dir = dir_ / "a-stream";
  WriteFile(dir + "/m/data.mdb", "not zipped");
  StagingStore staging(home_);
  uint64_t sequence = 0;
  const Status s = staging.Stage(dir, &sequence);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), dir)) << s.message();
  EXPECT_TRUE(Contains(s.message(), "not a batch zip file")) << s.message();
  EXPECT_TRUE(fs::exists(dir + "/m/data.mdb"));
  EXPECT_TRUE(Listed().empty());
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

TEST_F(StagingStoreTest, ACounterBehindTheQueueNeverReplacesAQueuedBatch) {
  EXPECT_EQ(Stage("a"), 1u);
  EXPECT_EQ(Stage("b"), 2u);
  // As after restoring .sequence from an old backup, or deleting it by hand.
  WriteFile(home_.staging() + "/.sequence", "1\n");
  EXPECT_EQ(Stage("c"), 3u);
  fs::remove(home_.staging() + "/.sequence");
  EXPECT_EQ(Stage("d"), 4u);
  EXPECT_EQ(Listed(), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(ReadFile(StagedPath(1)), "zip a");
  EXPECT_EQ(ReadFile(StagedPath(2)), "zip b");
}

}  // namespace
}  // namespace planb
