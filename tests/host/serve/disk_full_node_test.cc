// A storage node (a real `planb serve`) whose home is on a small tmpfs that fills up (issue 16, "Faults"): a load
// is refused before anything is staged, a staged batch's merge fails with "disk full" and stays queued, a
// snapshot cannot be made, maintenance refuses to compact, and no shard changes; once space returns the merge resumes by itself and everything
// reads as it should. Skipped where a tmpfs cannot be mounted (not root).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/storage/home.h"
#include "host/transfer/batch_zip.h"
#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::planb::testing::RunPlanb;
using ::planb::testing::WaitUntil;
using ::testing::HasSubstr;

constexpr int kRows = 20000;

// A tmpfs of `bytes` mounted on `dir` (created) until destruction.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, uint64_t bytes) : dir_(dir) {
    fs::create_directories(dir);
    const std::string options = "size=" + std::to_string(bytes);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) == 0;
    error_ = errno;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  int error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  int error_ = 0;
};

// Fills the filesystem of `path` (a new file) until not one more 4 KiB block fits.
void FillUp(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::string block(1 << 20, 'f');
  ssize_t written = 0;
  do {
    written = ::write(fd, block.data(), block.size());  // short writes near the end, then ENOSPC
  } while (written > 0);
  ASSERT_EQ(errno, ENOSPC) << std::strerror(errno);
  ::close(fd);
}

// A batch zip of kRows rows for city_to_country (the example config's section), written off the tmpfs.
std::string MakeBatch(const std::string& dir) {
  std::unique_ptr<Runtime> runtime;
  EXPECT_TRUE(testing::OpenTestRuntime(dir + "/writer", testing::StateMapSection("city_to_country", "hashed"), &runtime)
                  .ok());
  StreamWriter writer(runtime->catalog(), dir + "/writer/stream");
  for (int i = 0; i < kRows; ++i) {
    EXPECT_TRUE(writer.Add("city_to_country", testing::StateRecord("city-" + std::to_string(i), "country-" +
                                                                   std::to_string(i) + std::string(200, 'c')))
                    .ok());
  }
  EXPECT_TRUE(writer.Finish().ok());
  const std::string zip = dir + "/batch.zip";
  EXPECT_TRUE(ZipBatch(dir + "/writer/stream", zip, ZipOptions{true, "test/full"}).ok());
  return zip;
}

TEST(DiskFullNode, NothingIsWrittenWhileFullAndWorkResumesWhenSpaceReturns) {
  // Every shard with a tenth of its pages free is compacted by maintenance: here, every shard, every pass.
  ClusterFixture cluster(1, "reclaim_free_share = 0.1\n");
  Tmpfs disk(cluster.home(0), uint64_t{256} << 20);
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(disk.error());
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ProcessResult r = cluster.Load(ExampleDataFiles());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const std::string loaded = cluster.Dump(0);

  // A batch staged while the node is down (as a local load would leave it), then the disk fills up.
  ASSERT_EQ(cluster.process(0).Stop(), 0);
  const std::string zip = MakeBatch(cluster.dir());
  Home home;
  ASSERT_TRUE(Home::Open(cluster.home(0), &home).ok());
  fs::copy_file(zip, cluster.home(0) + "/batch.zip");
  uint64_t sequence = 0;
  ASSERT_TRUE(StagingStore(home).Stage(cluster.home(0) + "/batch.zip", &sequence).ok());
  const std::string filler = cluster.home(0) + "/filler";
  FillUp(filler);
  if (HasFatalFailure()) return;

  // The merge fails, says why, and keeps the batch queued; the shard stays as it was.
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  ASSERT_TRUE(WaitUntil([&] { return cluster.process(0).log().find("merge failed (will retry)") != std::string::npos; },
                        {cluster.process(0).log_file()}))
      << cluster.process(0).log();
  EXPECT_THAT(cluster.process(0).log(), HasSubstr("disk full"));
  EXPECT_TRUE(StagingStore(home).Contains(sequence));
  EXPECT_EQ(cluster.Dump(0), loaded);

  // A load is refused before anything is staged anywhere (exit 2); a reader gets no snapshot (exit 2).
  const std::string more = cluster.dir() + "/more.xml";
  testing::WriteFile(more, testing::ReferenceData(testing::Ref("country_to_capital", "Wales", "Cardiff")));
  r = cluster.Load({more});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nothing was staged on any node"));
  EXPECT_THAT(r.err, HasSubstr("node1: disk full: the load needs about"));
  cluster.WriteReaderConfig("reader");
  r = cluster.RunOnReader("reader", {"lookup", "country_to_capital", "Albania"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("node1 (SNAPSHOT refused (full)"));
  EXPECT_TRUE(fs::is_empty(cluster.home(0) + "/outgoing")) << "a failed snapshot copy must not be left behind";
  // Maintenance would compact every shard (a copy beside it): it refuses, saying why, and changes nothing.
  const std::vector<std::string> maintain = {"--config", cluster.config(0), "--home", cluster.home(0), "maintain",
                                             "--once"};
  r = RunPlanb(maintain);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("planb: maintain: city_to_country: failed: not enough disk to compact "));
  EXPECT_THAT(r.err, HasSubstr("the shard is left as it was"));
  EXPECT_EQ(cluster.Dump(0), loaded);
  EXPECT_TRUE(cluster.process(0).running());

  // Space returns: the merge resumes by itself (the node retries), and everything reads.
  fs::remove(filler);
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const std::vector<std::string> read = {"--config", cluster.config(0), "--home", cluster.home(0), "lookup"};
  auto lookup = [&](const std::string& map, const std::string& key) {
    std::vector<std::string> args = read;
    args.insert(args.end(), {map, key});
    return RunPlanb(args);
  };
  r = lookup("city_to_country", "city-" + std::to_string(kRows - 1));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "country-" + std::to_string(kRows - 1) + std::string(200, 'c') + "\n");
  r = lookup("country_to_capital", "Albania");
  EXPECT_EQ(r.out, "Tirana\n");
  r = cluster.Load({more});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  r = cluster.RunOnReader("reader", {"lookup", "country_to_capital", "Wales"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Cardiff\n");
  r = RunPlanb(maintain);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = lookup("country_to_capital", "Albania");
  EXPECT_EQ(r.out, "Tirana\n");
}

}  // namespace
}  // namespace planb
