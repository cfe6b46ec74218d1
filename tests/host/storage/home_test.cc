// The home refuses subdirectories that are symlinks (or not directories), and RemoveTree never follows a link:
// planb clears receive/, merging/ and outgoing/ as the node's user (often root), so a link there would have it
// empty another tree.
#include "host/storage/home.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "host/common/file_util.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A directory outside the home with a file and a subdirectory holding another: what a link must not reach.
std::string Victim(const testing::TempDir& dir) {
  const std::string victim = dir / "victim";
  fs::create_directories(victim + "/inner");
  testing::WriteFile(victim + "/precious", "keep me\n");
  testing::WriteFile(victim + "/inner/also", "keep me too\n");
  return victim;
}

void ExpectVictimWhole(const std::string& victim) {
  EXPECT_EQ(testing::ReadFile(victim + "/precious"), "keep me\n");
  EXPECT_EQ(testing::ReadFile(victim + "/inner/also"), "keep me too\n");
}

TEST(Home, RefusesEachSubdirectoryThatIsASymlinkAndLeavesItsTargetAlone) {
  testing::TempDir dir;
  const std::string victim = Victim(dir);
  for (const char* sub : {"writer", "receive", "staging", "merging", "shards", "snapshots", "outgoing"}) {
    const std::string root = dir / (std::string("home-") + sub);
    Home made;
    ASSERT_TRUE(Home::Open(root, &made).ok());
    const std::string linked = root + "/" + sub;
    fs::remove(linked);
    fs::create_directory_symlink(victim, linked);
    for (bool open : {true, false}) {
      Home home;
      const Status s = open ? Home::Open(root, &home) : Home::Locate(root, &home);
      EXPECT_EQ(s.code(), Code::kInvalidArgument) << sub;
      EXPECT_THAT(s.message(), HasSubstr(linked + " is a symbolic link; planb refuses to follow links inside its home"))
          << sub;
    }
  }
  ExpectVictimWhole(victim);
}

TEST(Home, RefusesASubdirectoryThatIsAFile) {
  testing::TempDir dir;
  const std::string root = dir / "home";
  fs::create_directories(root);
  testing::WriteFile(root + "/staging", "");
  Home home;
  const Status s = Home::Open(root, &home);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(root + "/staging is not a directory"));
}

TEST(Home, TheRootItselfMayBeALinkAnOperatorMade) {
  testing::TempDir dir;
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "home");
  Home home;
  ASSERT_TRUE(Home::Open(dir / "home", &home).ok());
  EXPECT_TRUE(fs::is_directory(dir / "real/shards"));
}

TEST(RemoveTree, RemovesALinkAsALinkAndNeverWhatItPointsAt) {
  testing::TempDir dir;
  const std::string victim = Victim(dir);
  const std::string tree = dir / "tree";
  fs::create_directories(tree + "/a/b");
  testing::WriteFile(tree + "/a/b/file", "x");
  fs::create_directory_symlink(victim, tree + "/a/dir_link");
  fs::create_symlink(victim + "/precious", tree + "/a/b/file_link");
  fs::create_directory_symlink(victim, dir / "top_link");
  ASSERT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  ASSERT_TRUE(RemoveTree(dir / "top_link").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "top_link")));
  ExpectVictimWhole(victim);
  EXPECT_TRUE(RemoveTree(dir / "never-there").ok());
}

TEST(RemoveTree, SaysWhatItCouldNotRemove) {
  testing::TempDir dir;
  const std::string tree = dir / "tree";
  fs::create_directories(tree + "/sub");
  testing::WriteFile(tree + "/sub/file", "x");
  // A name too long for the filesystem: an error even for root, which permissions would not stop.
  const std::string long_name = tree + "/" + std::string(300, 'n');
  const Status s = RemoveTree(long_name);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("removing " + long_name));
  EXPECT_TRUE(RemoveTree(tree).ok());
}

}  // namespace
}  // namespace planb
