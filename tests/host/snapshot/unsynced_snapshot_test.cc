// A snapshot a diff installed without syncing it carries the boot it was written in: trusted in that boot, not in
// another (a reboot may have lost its pages), synced and unmarked once it is old enough.
#include "host/snapshot/unsynced_snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "host/common/boot_id.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;

class UnsyncedSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "data.mdb") << "the snapshot's pages";
    ASSERT_TRUE(CurrentBootId(&boot_).ok());
  }
  std::string Mark() const { return dir_ / kUnsyncedBootFile; }
  void WriteMark(const std::string& text) const { std::ofstream(Mark(), std::ios::trunc) << text; }
  // Moves the mark's mtime `seconds` into the past.
  void AgeMark(int seconds) const {
    struct timeval times[2];
    ::gettimeofday(&times[0], nullptr);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    ASSERT_EQ(::utimes(Mark().c_str(), times), 0);
  }

  TempDir dir_;
  std::string boot_;
};

TEST_F(UnsyncedSnapshotTest, TheBootIdIsTheKernels) {
  EXPECT_EQ(boot_.size(), 36u);
  EXPECT_EQ(ReadFile("/proc/sys/kernel/random/boot_id"), boot_ + "\n");
}

TEST_F(UnsyncedSnapshotTest, AMarkOfThisBootIsTrusted) {
  bool marked = false;
  ASSERT_TRUE(MarkUnsyncedSnapshot(dir_.path(), &marked).ok());
  EXPECT_TRUE(marked);
  EXPECT_EQ(ReadFile(Mark()), boot_ + "\n");
  EXPECT_TRUE(CheckUnsyncedSnapshot(dir_.path()).ok());
}

TEST_F(UnsyncedSnapshotTest, ASnapshotWithoutAMarkIsTrusted) { EXPECT_TRUE(CheckUnsyncedSnapshot(dir_.path()).ok()); }

TEST_F(UnsyncedSnapshotTest, AMarkOfAnotherBootIsCorruptionNamingBothBoots) {
  WriteMark("00000000-0000-0000-0000-000000000000\n");
  const Status s = CheckUnsyncedSnapshot(dir_.path());
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_THAT(s.message(), HasSubstr(dir_.path()));
  EXPECT_THAT(s.message(), HasSubstr("boot 00000000-0000-0000-0000-000000000000"));
  EXPECT_THAT(s.message(), HasSubstr("this is boot " + boot_));
}

TEST_F(UnsyncedSnapshotTest, MalformedMarksAreCorruption) {
  for (const std::string& text : {std::string(), std::string("\n"), boot_ + "x\n", boot_.substr(1) + "\n",
                                  std::string(200, 'a'), std::string("bad\x1b[31m\n")}) {
    WriteMark(text);
    const Status s = CheckUnsyncedSnapshot(dir_.path());
    EXPECT_EQ(s.code(), Code::kCorruption) << text;
    EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("\x1b"))) << "escaped";
  }
}

TEST_F(UnsyncedSnapshotTest, AMarkThatIsASymlinkIsNeverFollowed) {
  const std::string target = dir_ / "elsewhere";
  std::ofstream(target) << boot_ << "\n";
  ASSERT_EQ(::symlink(target.c_str(), Mark().c_str()), 0);
  const Status s = CheckUnsyncedSnapshot(dir_.path());
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_THAT(s.message(), HasSubstr("symlink"));
}

TEST_F(UnsyncedSnapshotTest, AFreshMarkWaitsAndAnOldOneIsSyncedAndRemoved) {
  bool marked = false;
  ASSERT_TRUE(MarkUnsyncedSnapshot(dir_.path(), &marked).ok());
  bool synced = true;
  ASSERT_TRUE(SyncUnsyncedSnapshot(dir_.path(), 60 * 1000, &synced).ok());
  EXPECT_FALSE(synced);
  EXPECT_TRUE(std::filesystem::exists(Mark()));

  AgeMark(61);
  ASSERT_TRUE(SyncUnsyncedSnapshot(dir_.path(), 60 * 1000, &synced).ok());
  EXPECT_TRUE(synced);
  EXPECT_FALSE(std::filesystem::exists(Mark()));
  EXPECT_EQ(ReadFile(dir_ / "data.mdb"), "the snapshot's pages");
  EXPECT_TRUE(CheckUnsyncedSnapshot(dir_.path()).ok());

  // Nothing to do without a mark.
  ASSERT_TRUE(SyncUnsyncedSnapshot(dir_.path(), 0, &synced).ok());
  EXPECT_FALSE(synced);
}

TEST_F(UnsyncedSnapshotTest, SyncingASnapshotWhoseDataIsGoneFailsAndKeepsTheMark) {
  bool marked = false;
  ASSERT_TRUE(MarkUnsyncedSnapshot(dir_.path(), &marked).ok());
  std::filesystem::remove(dir_ / "data.mdb");
  bool synced = true;
  const Status s = SyncUnsyncedSnapshot(dir_.path(), 0, &synced);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("data.mdb"));
  EXPECT_FALSE(synced);
  EXPECT_TRUE(std::filesystem::exists(Mark()));
}

}  // namespace
}  // namespace planb::testing
