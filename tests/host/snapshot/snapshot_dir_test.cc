#include "host/snapshot/snapshot_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "host/common/iso_time.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(SnapshotDir, SnapshotNamesAreOneToEighteenDigits) {
  int64_t time = 0;
  EXPECT_TRUE(ParseSnapshotName("1700000000123", &time));
  EXPECT_EQ(time, 1700000000123);
  EXPECT_TRUE(ParseSnapshotName("7", &time));
  EXPECT_EQ(time, 7);
  EXPECT_TRUE(ParseSnapshotName("999999999999999999", &time));
  for (const char* name : {"", "1700000000123x", ".1700000000123", "-1", "1e9", "9999999999999999999", ".fetch.lock"}) {
    EXPECT_FALSE(ParseSnapshotName(name, &time)) << name;
  }
}

TEST(SnapshotDir, ScratchNamesNameTheirProcess) {
  pid_t pid = 0;
  EXPECT_TRUE(ParseScratchOwner(".fetch-123-4", &pid));
  EXPECT_EQ(pid, 123);
  EXPECT_TRUE(ParseScratchOwner(".fetch-77-1.zip.part", &pid));
  EXPECT_EQ(pid, 77);
  EXPECT_TRUE(ParseScratchOwner(".delete-9-2", &pid));
  EXPECT_EQ(pid, 9);
  for (const char* name : {".fetch.lock", ".fetch--1", ".fetch-abc-1", ".fetch-0-1", ".fetch-12", ".delete-",
                           "1700000000123", ".checked", ".fetch-12345678901-1"}) {
    EXPECT_FALSE(ParseScratchOwner(name, &pid)) << name;
  }
  pid = 0;
  EXPECT_TRUE(ParseScratchOwner(SnapshotDir::NewFetchScratchName(), &pid));
  EXPECT_EQ(pid, ::getpid());
  EXPECT_NE(SnapshotDir::NewFetchScratchName(), SnapshotDir::NewFetchScratchName());
  EXPECT_TRUE(ParseScratchOwner(SnapshotDir::NewDeleteScratchName(), &pid));
}

TEST(SnapshotDir, ListsCompleteSnapshotsOldestFirst) {
  TempDir dir;
  SnapshotDir snapshots(dir / "m");
  std::vector<int64_t> times = {1};
  ASSERT_TRUE(snapshots.List(&times).ok());  // no directory yet: no snapshots
  EXPECT_THAT(times, IsEmpty());
  int64_t newest = -1;
  ASSERT_TRUE(snapshots.Newest(&newest).ok());
  EXPECT_EQ(newest, 0);
  for (const char* name : {"1700000000300", "1700000000100", "1700000000200", ".fetch-1-1", "12x", ".delete-1-1"}) {
    fs::create_directories(dir / ("m/" + std::string(name)));
  }
  WriteFile(dir / "m/.fetch.lock", "");
  ASSERT_TRUE(snapshots.List(&times).ok());
  EXPECT_THAT(times, ElementsAre(1700000000100, 1700000000200, 1700000000300));
  ASSERT_TRUE(snapshots.Newest(&newest).ok());
  EXPECT_EQ(newest, 1700000000300);
  EXPECT_EQ(snapshots.SnapshotPath(5), dir / "m/5");
}

TEST(SnapshotDir, ListingAFileIsAnErrorNamingIt) {
  TempDir dir;
  WriteFile(dir / "m", "not a directory");
  std::vector<int64_t> times;
  const Status s = SnapshotDir(dir / "m").List(&times);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("listing snapshots in " + (dir / "m")));
}

TEST(SnapshotDir, MarkersRecordWhenTheyWereTouched) {
  TempDir dir;
  fs::create_directories(dir / "m");
  SnapshotDir snapshots(dir / "m");
  EXPECT_EQ(snapshots.MarkerTimeMs(kCheckedMarker), 0);
  const int64_t before = CurrentTimeMs();
  ASSERT_TRUE(snapshots.Touch(kCheckedMarker).ok());
  const int64_t touched = snapshots.MarkerTimeMs(kCheckedMarker);
  EXPECT_GE(touched, before - 1000);  // file systems may round mtimes
  EXPECT_LE(touched, CurrentTimeMs());
  fs::last_write_time(dir / (std::string("m/") + kCheckedMarker), fs::file_time_type::clock::now() - std::chrono::hours(2));
  EXPECT_LT(snapshots.MarkerTimeMs(kCheckedMarker), before - 3600 * 1000);
  ASSERT_TRUE(snapshots.Touch(kCheckedMarker).ok());  // again: the time moves on
  EXPECT_GE(snapshots.MarkerTimeMs(kCheckedMarker), before - 1000);
  ASSERT_TRUE(snapshots.RemoveMarker(kCheckedMarker).ok());
  EXPECT_EQ(snapshots.MarkerTimeMs(kCheckedMarker), 0);
  EXPECT_TRUE(snapshots.RemoveMarker(kCheckedMarker).ok());  // missing is fine

  const Status s = SnapshotDir(dir / "missing").Touch(kFailedMarker);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr(dir / (std::string("missing/") + kFailedMarker)));
}

TEST(SnapshotDir, ASharedLockKeepsExclusiveLockersOut) {
  TempDir dir;
  const std::string path = dir / "1700000000000";
  fs::create_directories(path);
  int shared = -1;
  bool vanished = true;
  ASSERT_TRUE(LockSnapshotShared(path, &shared, &vanished).ok());
  ASSERT_FALSE(vanished);
  ASSERT_GE(shared, 0);
  int second_shared = -1;
  ASSERT_TRUE(LockSnapshotShared(path, &second_shared, &vanished).ok());  // readers share
  ASSERT_GE(second_shared, 0);
  int exclusive = 0;
  ASSERT_TRUE(TryLockSnapshotExclusive(path, &exclusive).ok());
  EXPECT_EQ(exclusive, -1);
  UnlockSnapshot(shared);
  ASSERT_TRUE(TryLockSnapshotExclusive(path, &exclusive).ok());
  EXPECT_EQ(exclusive, -1);  // one reader is left
  UnlockSnapshot(second_shared);
  ASSERT_TRUE(TryLockSnapshotExclusive(path, &exclusive).ok());
  EXPECT_GE(exclusive, 0);
  UnlockSnapshot(exclusive);
}

TEST(SnapshotDir, AMissingOrReplacedDirectoryHasVanished) {
  TempDir dir;
  int fd = 0;
  bool vanished = false;
  ASSERT_TRUE(LockSnapshotShared(dir / "1", &fd, &vanished).ok());
  EXPECT_TRUE(vanished);
  EXPECT_EQ(fd, -1);
  ASSERT_TRUE(TryLockSnapshotExclusive(dir / "1", &fd).ok());
  EXPECT_EQ(fd, -1);
  // A file where a snapshot directory should be is an error naming it.
  WriteFile(dir / "2", "");
  const Status s = LockSnapshotShared(dir / "2", &fd, &vanished);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("opening snapshot " + (dir / "2")));
}

TEST(SnapshotDir, ProcessAliveTellsLiveFromReaped) {
  EXPECT_TRUE(ProcessAlive(::getpid()));
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  EXPECT_FALSE(ProcessAlive(child));
}

}  // namespace
}  // namespace planb::testing
