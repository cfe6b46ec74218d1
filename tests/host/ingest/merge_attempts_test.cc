// The attempts records of staged batches (merge_attempts.h): the durable per-batch file, and the in-flight record
// that counts a merger's death without a file made and synced per attempt. Real files in a temporary staging/.
#include "host/ingest/merge_attempts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ReadFile;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

class MergeAttemptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(Zip(1), "zip one");
    WriteFile(Zip(2), "zip two");
  }
  std::string Staging() const { return dir_.path(); }
  std::string Zip(int n) const { return Staging() + "/0000000000000000000" + std::to_string(n) + ".zip"; }
  std::string InFlight() const { return Staging() + "/.merge_in_flight"; }

  TempDir dir_;
};

TEST_F(MergeAttemptsTest, NoRecordsMeanNoAttempts) {
  const MergeAttempts attempts = ReadMergeAttempts(Zip(1));
  EXPECT_EQ(attempts.count, 0);
  EXPECT_EQ(attempts.last_error, "");
  EXPECT_TRUE(FoldMergeDeath(Staging()).ok());
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 0);
}

TEST_F(MergeAttemptsTest, AFailedAttemptIsWrittenWithItsErrorOnOneLine) {
  ASSERT_TRUE(WriteMergeAttempts(Zip(1), MergeAttempts{2, "refused\nsecond line"}).ok());
  const MergeAttempts attempts = ReadMergeAttempts(Zip(1));
  EXPECT_EQ(attempts.count, 2);
  EXPECT_EQ(attempts.last_error, "refused\\nsecond line");
  EXPECT_EQ(ReadMergeAttempts(Zip(2)).count, 0);
}

TEST_F(MergeAttemptsTest, AnAttemptLeftInFlightCountsAsADeathOnceFolded) {
  ASSERT_TRUE(WriteMergeAttempts(Zip(1), MergeAttempts{1, "refused"}).ok());
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 1).ok());
  // The merger died here. Readers see the death before it is folded...
  MergeAttempts attempts = ReadMergeAttempts(Zip(1));
  EXPECT_EQ(attempts.count, 2);
  EXPECT_EQ(attempts.last_error, "the merging process died during the merge");
  EXPECT_EQ(ReadMergeAttempts(Zip(2)).count, 0);
  // ...and folding writes it into the batch's own file and blanks the record: a second fold adds nothing.
  ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 2);
  // The next attempt of another batch overwrites the record; the death stays counted.
  ASSERT_TRUE(MarkMergeInFlight(Zip(2), 0).ok());
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 2);
  EXPECT_EQ(ReadMergeAttempts(Zip(2)).count, 1);
}

// The record is rewritten in place: a shorter record must not leave the tail of a longer one behind.
TEST_F(MergeAttemptsTest, TheRecordIsOverwrittenInPlaceAtAFixedSize) {
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 12).ok());
  const std::string first = ReadFile(InFlight());
  ASSERT_TRUE(MarkMergeInFlight(Zip(2), 0).ok());
  const std::string second = ReadFile(InFlight());
  EXPECT_EQ(first.size(), second.size());
  EXPECT_EQ(second.find("12"), std::string::npos) << second;
  EndMergeInFlight(Staging());
  EXPECT_EQ(ReadFile(InFlight()).find_first_not_of(" \n"), std::string::npos);
  EXPECT_EQ(ReadMergeAttempts(Zip(2)).count, 0);
}

TEST_F(MergeAttemptsTest, ARecordOfABatchNoLongerStagedIsDropped) {
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 0).ok());
  ASSERT_EQ(std::remove(Zip(1).c_str()), 0);  // merged (or quarantined) after all
  ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  EXPECT_FALSE(std::ifstream(Zip(1) + ".attempts").good());
  WriteFile(Zip(1), "staged again by an operator");
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 0);
}

TEST_F(MergeAttemptsTest, ClearingABatchBlanksOnlyARecordNamingIt) {
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 0).ok());
  ClearMergeAttempts(Zip(2));
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 1);
  ClearMergeAttempts(Zip(1));
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 0);
}

// Two records left by one death: which batch killed the merger is not known, so neither is counted and both are
// marked to merge alone; a later death of one, alone in flight, counts, and it stays alone.
TEST_F(MergeAttemptsTest, ADeathWithSeveralBatchesInFlightCountsNoneAndMarksEachAlone) {
  ASSERT_TRUE(WriteMergeAttempts(Zip(1), MergeAttempts{1, "refused"}).ok());
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 1, /*slot=*/0).ok());
  ASSERT_TRUE(MarkMergeInFlight(Zip(2), 0, /*slot=*/3).ok());
  EXPECT_TRUE(std::ifstream(Staging() + "/.merge_in_flight.3").good());
  for (int fold = 0; fold < 2; ++fold) {  // seen before the fold, and after one or two folds, the same
    const MergeAttempts first = ReadMergeAttempts(Zip(1));
    EXPECT_EQ(first.count, 1);
    EXPECT_TRUE(first.alone);
    EXPECT_NE(first.last_error.find("died while 2 batches were merging"), std::string::npos) << first.last_error;
    const MergeAttempts second = ReadMergeAttempts(Zip(2));
    EXPECT_EQ(second.count, 0);
    EXPECT_TRUE(second.alone);
    ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  }
  EXPECT_EQ(ReadFile(Zip(1) + ".attempts").substr(0, 8), "1 alone\n");
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 1, /*slot=*/0).ok());  // merged alone, and died again
  ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  const MergeAttempts counted = ReadMergeAttempts(Zip(1));
  EXPECT_EQ(counted.count, 2);
  EXPECT_TRUE(counted.alone);
  EXPECT_EQ(counted.last_error, "the merging process died during the merge");
  ClearMergeAttempts(Zip(2));  // merged: nothing of it stays
  EXPECT_FALSE(ReadMergeAttempts(Zip(2)).alone);
}

// The record says which map (and plugins) the merge had reached, so that a death is reported naming them; a
// record written before the merge reached any map, or by an earlier release (40 bytes), still counts the death.
TEST_F(MergeAttemptsTest, ADeathDuringAMapsMergeNamesTheMapAndItsPlugins) {
  ASSERT_TRUE(MarkMergeInFlight(Zip(1), 0).ok());
  ASSERT_TRUE(NoteMergeInFlightPart(Zip(1), 0, 0, "map 'a' (store type 'x' (/p/libplanb_x.so))").ok());
  ASSERT_TRUE(NoteMergeInFlightPart(Zip(1), 0, 0, "map 'b' (store type 'y' (/p/libplanb_y.so))").ok());
  MergeAttempts attempts = ReadMergeAttempts(Zip(1));
  EXPECT_EQ(attempts.count, 1);
  EXPECT_EQ(attempts.last_error,
            "the merging process died during the merge of map 'b' (store type 'y' (/p/libplanb_y.so))");
  ASSERT_TRUE(FoldMergeDeath(Staging()).ok());
  EXPECT_EQ(ReadMergeAttempts(Zip(1)).last_error, attempts.last_error);

  // Escaped, and cut to the record's fixed size.
  ASSERT_TRUE(NoteMergeInFlightPart(Zip(2), 0, 0, "map 'c'\n" + std::string(2000, 'z')).ok());
  const std::string record = ReadFile(InFlight());
  EXPECT_EQ(record.size(), 512u);
  EXPECT_EQ(record.back(), '\n');
  EXPECT_EQ(record.find('\n'), record.size() - 1);
  attempts = ReadMergeAttempts(Zip(2));
  EXPECT_EQ(attempts.count, 1);
  EXPECT_EQ(attempts.last_error.rfind("the merging process died during the merge of map 'c'\\nzzz", 0), 0u)
      << attempts.last_error;

  // An earlier release's record: "<name> <count>" in 40 bytes.
  WriteFile(Zip(3), "zip three");
  std::string earlier = std::filesystem::path(Zip(3)).filename().string() + " 1";
  earlier.resize(39, ' ');
  WriteFile(InFlight(), earlier + "\n");
  attempts = ReadMergeAttempts(Zip(3));
  EXPECT_EQ(attempts.count, 2);
  EXPECT_EQ(attempts.last_error, "the merging process died during the merge");
}

TEST_F(MergeAttemptsTest, ARecordNoteOfASlotOutsideTheRangeIsRefused) {
  EXPECT_EQ(NoteMergeInFlightPart(Zip(1), 0, kMaxMergeSlots, "map 'a'").code(), Code::kInvalidArgument);
}

TEST_F(MergeAttemptsTest, ASlotOutsideTheRangeIsRefused) {
  EXPECT_EQ(MarkMergeInFlight(Zip(1), 0, kMaxMergeSlots).code(), Code::kInvalidArgument);
  EXPECT_EQ(MarkMergeInFlight(Zip(1), 0, -1).code(), Code::kInvalidArgument);
}

// A record torn by a power loss, or written by anything else, names no batch: it never counts a death.
TEST_F(MergeAttemptsTest, AMalformedRecordNamesNothing) {
  const std::string record_size_line = std::string(39, ' ') + "\n";
  for (const std::string& bad : {
           std::string(""),
           std::string("00000000000000000001.zip 0"),                         // short: torn
           "00000000000000000001.zip 0" + std::string(100, ' ') + "\n",       // long
           ("00000000000000000001.zip -1" + record_size_line).substr(0, 40),  // negative count
           ("00000000000000000001.zi 0" + record_size_line).substr(0, 40),    // not a batch name
           ("../../00000000000000001.zip 0" + record_size_line).substr(0, 40),
           ("0000000000000000000\n.zip 0" + record_size_line).substr(0, 40),
           ("00000000000000000001.zip x" + record_size_line).substr(0, 40),
           std::string(40, '\0'),
       }) {
    WriteFile(InFlight(), bad);
    EXPECT_EQ(ReadMergeAttempts(Zip(1)).count, 0) << "record: " << bad;
    EXPECT_TRUE(FoldMergeDeath(Staging()).ok());
    EXPECT_FALSE(std::ifstream(Zip(1) + ".attempts").good()) << "record: " << bad;
  }
}

}  // namespace
}  // namespace planb
