// What planb creates in a home gets the home's modes, not the umask's: files 0640 and directories 0750 by default,
// file_mode = 0600 gives 0600 / 0700. Checked under the common umask 022 (which alone would give 0644 / 0755) by
// walking every home of a real cluster after a load, merges, and a reader's snapshot fetch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::ProcessResult;

// Sets the umask for the test's life (child processes inherit it).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

// "path mode" for every entry under `home` (and `home` itself) whose mode is not the expected one.
std::vector<std::string> WrongModes(const std::string& home, mode_t file_mode, mode_t dir_mode, size_t* checked) {
  std::vector<std::string> wrong;
  std::vector<fs::path> paths{home};
  for (const auto& entry : fs::recursive_directory_iterator(home)) paths.push_back(entry.path());
  for (const fs::path& p : paths) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    const mode_t want = S_ISDIR(st.st_mode) ? dir_mode : file_mode;
    ++*checked;
    if ((st.st_mode & 07777) != want) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%o", st.st_mode & 07777);
      wrong.push_back(p.string() + " " + mode);
    }
  }
  return wrong;
}

TEST(FileMode, EveryFileOfEveryHomeIs0640AndEveryDirectory0750UnderUmask022) {
  ScopedUmask umask(022);
  ::planb::testing::ClusterFixture cluster(2);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  const ProcessResult load = cluster.Load(::planb::testing::ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  ASSERT_TRUE(cluster.WaitMerged(1)) << cluster.process(1).log();
  cluster.WriteReaderConfig("reader");
  const ProcessResult r = cluster.RunOnReader("reader", {"lookup", "country_to_capital", "Albania"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(cluster.ReaderHome("reader") + "/snapshots/country_to_capital"));

  for (const std::string& home : {cluster.home(0), cluster.home(1), cluster.ReaderHome("reader"),
                                  cluster.dir() + "/proc-home"}) {
    size_t checked = 0;
    EXPECT_EQ(WrongModes(home, 0640, 0750, &checked), std::vector<std::string>{}) << home;
    EXPECT_GE(checked, 6u) << home;  // the reader: home, snapshots/, the map, .fetch.lock, a snapshot, data.mdb
  }
}

TEST(FileMode, TheConfigsFileModeIsHonoured) {
  ScopedUmask umask(022);
  ::planb::testing::CliEnv env(std::string("file_mode = 0600\n") + ::planb::testing::kCliConfig);
  const std::string xml = env.Write(
      "a.xml", ::planb::testing::ReferenceData(::planb::testing::Ref("city_to_country", "cardiff", "Wales")));
  ProcessResult r = env.Load({xml});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = env.Load({xml});  // a second merge into the existing shard
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t checked = 0;
  EXPECT_EQ(WrongModes(env.home(), 0600, 0700, &checked), std::vector<std::string>{});
  EXPECT_GT(checked, 8u);
}

}  // namespace
}  // namespace planb
