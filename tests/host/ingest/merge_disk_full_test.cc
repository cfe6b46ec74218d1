// Issue 11, defect 12: a merge that runs out of disk said "Input/output error" (LMDB's word for a short write).
// On a real full filesystem (a small tmpfs; skipped where mounting is not permitted) it says disk full and names
// the shard.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>
#include <memory>
#include <string>

#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

class MergeDiskFullTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (mounted_) ::umount2(mount_.c_str(), MNT_DETACH);
  }

  TempDir dir_;
  std::string mount_ = dir_ / "small";
  bool mounted_ = false;
};

TEST_F(MergeDiskFullTest, AMergeOnAFullDiskSaysDiskFullAndNamesTheShard) {
  const std::string config = StateMapSection("m", "hashed");
  // The batch, written on the ordinary disk.
  std::unique_ptr<Runtime> writer_runtime;
  ASSERT_TRUE(OpenTestRuntime(dir_ / "writer", config, &writer_runtime).ok());
  StreamWriter writer(writer_runtime->catalog(), dir_ / "writer/stream");
  const std::string padding(200, 'v');
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(writer.Add("m", StateRecord("key-" + std::to_string(i), padding + std::to_string(i))).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  const std::string zip = dir_ / "batch.zip";
  ASSERT_TRUE(ZipBatch(dir_ / "writer/stream", zip, ZipOptions{true, "test/full"}).ok());
  const uint64_t data_bytes = fs::file_size(dir_ / "writer/stream/m/data.mdb");
  const uint64_t zip_bytes = fs::file_size(zip);

  // Room for the staged zip and its extraction, and for half a shard.
  fs::create_directories(mount_);
  const uint64_t size = zip_bytes + data_bytes + data_bytes / 2 + (256 << 10);
  const std::string options = "size=" + std::to_string(size);
  if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  mounted_ = true;
  {
    std::unique_ptr<Runtime> runtime;
    ASSERT_TRUE(OpenTestRuntime(mount_ + "/node", config, &runtime).ok());
    const std::string copy = mount_ + "/node/batch.zip";
    fs::copy_file(zip, copy);
    uint64_t sequence = 0;
    ASSERT_TRUE(StagingStore(runtime->home()).Stage(copy, &sequence).ok());
    MergeReport report;
    UnzipLimits limits;
    limits.min_free_bytes = 0;  // the extraction fits; the shard's writes are what must run out
    const Status s = MergeProcessor(*runtime, limits).MergePending(&report);
    EXPECT_EQ(s.code(), Code::kFull) << s.message();
    EXPECT_NE(s.message().find("disk full: " + runtime->home().ShardPath("m") + " ("), std::string::npos)
        << s.message();
    EXPECT_TRUE(StagingStore(runtime->home()).Contains(sequence));  // kept, retried, not counted
    EXPECT_EQ(ReadMergeAttempts(runtime->home().staging() + "/" + StagingStore::BatchFileName(sequence)).count, 0);
  }
}

// The same for `load`'s stream writer (before: LMDB's "Input/output error" or "No space left on device" alone).
TEST_F(MergeDiskFullTest, AStreamThatRunsOutOfDiskSaysDiskFullAndNamesItsFile) {
  fs::create_directories(mount_);
  if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=2m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  mounted_ = true;
  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(OpenTestRuntime(dir_ / "node", StateMapSection("m", "hashed"), &runtime).ok());
  StreamWriter writer(runtime->catalog(), mount_ + "/stream");
  const std::string padding(200, 'v');
  Status s;
  for (int i = 0; i < 200000 && s.ok(); ++i) s = writer.Add("m", StateRecord("key-" + std::to_string(i), padding));
  if (s.ok()) s = writer.Finish();
  EXPECT_EQ(s.code(), Code::kFull) << s.message();
  EXPECT_NE(s.message().find("disk full: " + mount_ + "/stream/m"), std::string::npos) << s.message();
  writer.Discard();
}

}  // namespace
}  // namespace planb
