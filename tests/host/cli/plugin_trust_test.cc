// Plugin files are code run with the host's rights: a file or directory that another account could write is
// refused before dlopen, so its constructors never run. The constructor_marker fixture leaves a file when its
// code runs; a trusted copy of it (the control) shows that the marker works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::CliEnv;
using testing::ProcessResult;
using ::testing::HasSubstr;

constexpr const char* kMarkerVariable = "PLANB_TEST_CONSTRUCTOR_MARKER";

class PluginTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    marker_ = env_.dir() + "/constructor-ran";
    ASSERT_EQ(::setenv(kMarkerVariable, marker_.c_str(), 1), 0);  // children inherit it
  }
  void TearDown() override { ::unsetenv(kMarkerVariable); }

  // A plugin directory `name` (mode `dir_mode`) holding the marker library with `file_mode`; its file's path.
  std::string PluginIn(const std::string& name, mode_t dir_mode, mode_t file_mode) {
    const std::string dir = env_.dir() + "/" + name;
    fs::create_directories(dir);
    const std::string file = dir + "/libplanb_marker.so";
    fs::copy_file(std::string(PLANB_FIXTURE_DIR) + "/constructor_marker/libplanb_constructor_marker.so", file);
    EXPECT_EQ(::chmod(file.c_str(), file_mode), 0);
    EXPECT_EQ(::chmod(dir.c_str(), dir_mode), 0);
    return file;
  }
  ProcessResult Plugins(const std::string& dir_name) {
    return env_.Run({"plugins", "--plugin-dir", env_.dir() + "/" + dir_name});
  }

  CliEnv env_;
  std::string marker_;
};

TEST_F(PluginTrust, ATrustedFileRunsItsConstructorSoTheMarkerWorks) {
  const std::string file = PluginIn("trusted", 0755, 0644);
  const ProcessResult r = Plugins("trusted");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + " not loaded: not a Plan B plugin")) << r.err;
  EXPECT_TRUE(fs::exists(marker_)) << "the control: a trusted library is loaded and its constructor runs";
}

TEST_F(PluginTrust, AFileOthersCanWriteIsRefusedBeforeItsCodeRuns) {
  const std::string file = PluginIn("plugins", 0755, 0666);
  const ProcessResult r = Plugins("plugins");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // like every file that does not load: named, and the others work
  EXPECT_THAT(r.err, HasSubstr(file + " not loaded: refused before loading: the file has mode 0666, writable by others"));
  EXPECT_THAT(r.err, HasSubstr("(chmod go-w " + file + ")"));
  EXPECT_FALSE(fs::exists(marker_)) << "the refused library's constructor ran";
}

TEST_F(PluginTrust, AFileItsGroupCanWriteIsRefused) {
  const std::string file = PluginIn("plugins", 0755, 0664);
  const ProcessResult r = Plugins("plugins");
  EXPECT_THAT(r.err, HasSubstr("has mode 0664, writable by its group"));
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(PluginTrust, ADirectoryOthersCanWriteRefusesEvenAFileWithASafeMode) {
  const std::string file = PluginIn("open", 0777, 0644);
  const ProcessResult r = Plugins("open");
  EXPECT_THAT(r.err, HasSubstr(file + " not loaded: refused before loading: its directory " + env_.dir() +
                               "/open has mode 0777, writable by others (chmod go-w " + env_.dir() + "/open)"));
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(PluginTrust, ASymlinkIsJudgedByTheFileAndDirectoryItLeadsTo) {
  const std::string target = PluginIn("open", 0777, 0644);
  fs::create_directories(env_.dir() + "/links");
  ASSERT_EQ(::chmod((env_.dir() + "/links").c_str(), 0755), 0);
  const std::string link = env_.dir() + "/links/libplanb_marker.so";
  fs::create_symlink(target, link);
  const ProcessResult r = Plugins("links");
  EXPECT_THAT(r.err, HasSubstr(link + " not loaded: refused before loading: its directory " + env_.dir() +
                               "/open has mode 0777"));
  ASSERT_EQ(::chmod((env_.dir() + "/open").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(target.c_str(), 0646), 0);
  const ProcessResult file = Plugins("links");
  EXPECT_THAT(file.err, HasSubstr(link + " not loaded: refused before loading: the file it links to, " + target +
                                  ", has mode 0646, writable by others"));
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(PluginTrust, AFileOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const std::string file = PluginIn("plugins", 0755, 0644);
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);  // nobody
  const ProcessResult r = Plugins("plugins");
  EXPECT_THAT(r.err, HasSubstr(file + " not loaded: refused before loading: the file is owned by uid 65534, neither "
                               "root nor this process's user"));
  EXPECT_FALSE(fs::exists(marker_));
}

}  // namespace
}  // namespace planb
