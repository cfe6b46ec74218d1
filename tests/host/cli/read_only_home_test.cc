// Reads on a home this user may not write: another user's (root's home read by `nobody`: dirs 0755, files 0644,
// lock.mdb 0644) and a home made read-only with `chmod -R a-w`. lookup, query and stores answer and create nothing;
// a load fails with an error naming the path. File modes mean nothing to root, so as root the reading runs in a
// child that drops to uid/gid 65534 (nobody).
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"
#include "planb/reader.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::CliEnv;
using ::planb::testing::ProcessResult;
using ::planb::testing::ReadFile;
using ::planb::testing::Ref;
using ::planb::testing::ReferenceData;
using ::testing::HasSubstr;

constexpr uid_t kNobody = 65534;

// planb with `args`, run as `uid`.
ProcessResult RunPlanbAs(uid_t uid, const std::vector<std::string>& args) {
  ::planb::testing::ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = args;
  spec.uid = uid;
  return ::planb::testing::RunProcess(spec);
}

// Every path under `root` with its mode, size and mtime: what "nothing changed" compares.
std::map<std::string, std::string> Tree(const std::string& root) {
  std::map<std::string, std::string> tree;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) != 0) continue;
    tree[entry.path().string()] = std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return tree;
}

// Every directory under and including `root` gets `dir_mode`, every file `file_mode`, and the owner `uid`.
void SetTree(const std::string& root, mode_t dir_mode, mode_t file_mode, uid_t uid) {
  std::vector<fs::path> paths{root};
  for (const auto& entry : fs::recursive_directory_iterator(root)) paths.push_back(entry.path());
  for (const fs::path& p : paths) {
    if (::geteuid() == 0) {
      ASSERT_EQ(::lchown(p.c_str(), uid, uid), 0) << p;
    }
    ASSERT_EQ(::chmod(p.c_str(), fs::is_directory(p) ? dir_mode : file_mode), 0) << p;
  }
}

class ReadOnlyHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProcessResult r = env_.Load({env_.Write(
        "cities.xml", ReferenceData(Ref("city_to_country", "cardiff", "Wales") + "\n" +
                                    Ref("city_to_country", "paris", "France")))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(fs::exists(env_.home() + "/shards/city_to_country/lock.mdb"));
    // A home made by an older planb or copied without its empty directories: reads must not create them.
    fs::remove_all(env_.home() + "/writer");
    fs::remove_all(env_.home() + "/outgoing");
    ASSERT_EQ(::chmod(env_.dir().c_str(), 0755), 0);  // mkdtemp's 0700 would hide everything from `nobody`
  }

  // The three reads as `uid`, each right, and nothing in the home created or changed.
  void ExpectReadsWork(uid_t uid) {
    const auto before = Tree(env_.home());
    const std::vector<std::string> base{"--home", env_.home(), "--config", env_.config()};
    auto run = [&](std::vector<std::string> args) {
      args.insert(args.begin(), base.begin(), base.end());
      return RunPlanbAs(uid, args);
    };
    ProcessResult r = run({"lookup", "city_to_country", "cardiff"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "Wales\n");
    r = run({"query", "city_to_country", "--where", "Key = 'paris'", "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("France"));
    r = run({"stores"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("city_to_country"));
    EXPECT_EQ(Tree(env_.home()), before);
    EXPECT_FALSE(fs::exists(env_.home() + "/writer"));

    // A write is refused, naming the home, and changes nothing either.
    r = run({"load", env_.Write("more.xml", ReferenceData(Ref("city_to_country", "rome", "Italy")))});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(env_.home()));
    EXPECT_EQ(Tree(env_.home()), before);
  }

  // The Reader, in a child running as `uid`: 0 when it found cardiff's value.
  int ReaderChild(uid_t uid) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (!::planb::testing::DropPrivilegesTo(uid)) ::_exit(127);
      ReaderOptions options;
      options.config_path = env_.config();
      options.home = env_.home();
      options.maintenance_interval_ms = 0;
      std::unique_ptr<Reader> reader;
      if (!Reader::Open(options, &reader).ok()) ::_exit(3);
      const LookupResult r = reader->Lookup("city_to_country", "cardiff");
      ::_exit(r.found() && r.value.view() == "Wales" ? 0 : 4);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  CliEnv env_;
};

TEST_F(ReadOnlyHomeTest, AnotherUserReadsAHomeItMayNotWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a child as another user (uid 65534)";
  SetTree(env_.home(), 0755, 0644, 0);  // root's home, lock.mdb 0644 too: LMDB refuses MDB_RDONLY with EACCES
  ExpectReadsWork(kNobody);
  EXPECT_EQ(ReaderChild(kNobody), 0);
}

TEST_F(ReadOnlyHomeTest, ItsOwnerReadsAHomeMadeReadOnly) {
  // chmod -R a-w; as root the owner becomes nobody, who then reads it (root would ignore the modes).
  const uid_t owner = ::geteuid() == 0 ? kNobody : ::geteuid();
  SetTree(env_.home(), 0555, 0444, owner);
  ExpectReadsWork(owner);
  EXPECT_EQ(ReaderChild(owner), 0);
  SetTree(env_.home(), 0755, 0644, owner);  // so that the temp directory can be removed
}

// A node that reads snapshots (not a storage node), its home read-only for the user: an existing snapshot serves
// (even a stale one: the refresh fails quietly), and with none the error says that fetching needs a writable home.
TEST(ReadOnlySnapshotHome, ServesTheSnapshotItHasAndSaysWhyItCannotFetch) {
  const uid_t user = ::geteuid() == 0 ? kNobody : ::geteuid();
  ::planb::testing::ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const ProcessResult load = cluster.Load(::planb::testing::ExampleDataFiles());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const std::string config = cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n");
  const std::string home = cluster.ReaderHome("reader");
  ProcessResult r = cluster.RunOnReader("reader", {"lookup", "country_to_capital", "Albania"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0755), 0);
  SetTree(home, 0555, 0444, user);

  const std::vector<std::string> lookup{"--config", config, "--home", home, "lookup", "country_to_capital", "Albania"};
  r = RunPlanbAs(user, lookup);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");

  SetTree(home, 0755, 0644, user);
  fs::remove_all(home + "/snapshots/country_to_capital");
  SetTree(home, 0555, 0444, user);
  r = RunPlanbAs(user, lookup);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot fetch one (the home must be writable to fetch)"));
  EXPECT_THAT(r.err, HasSubstr(home + "/snapshots"));
  SetTree(home, 0755, 0644, user);
}

}  // namespace
}  // namespace planb
