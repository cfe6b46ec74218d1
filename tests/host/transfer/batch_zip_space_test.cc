// UnzipBatch against free space (issue 11, defect 3): a zip bomb under max_batch_size must not fill the disk.
// Extraction goes to a small tmpfs; without permission to mount one (not root) the test is skipped, saying so.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <zip.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/transfer/batch_zip.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

// A tmpfs of `size` mounted on <temp>/mnt for the test's life.
class SmallFilesystem {
 public:
  explicit SmallFilesystem(const std::string& size) : dir_(temp_ / "mnt") {
    fs::create_directories(dir_);
    const std::string options = "size=" + size;
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& dir() const { return dir_; }

 private:
  testing::TempDir temp_;
  std::string dir_;
  bool mounted_ = false;
};

void WriteBatchZip(const std::string& path, size_t data_bytes) {
  const std::string manifest = "planb-batch 2\nid node1/stream-1\n";
  const std::string data(data_bytes, '\0');  // inflates from almost nothing: a bomb
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(zip, nullptr) << error;
  ASSERT_GE(zip_file_add(zip, "planb-batch", zip_source_buffer(zip, manifest.data(), manifest.size(), 0), 0), 0);
  ASSERT_GE(zip_file_add(zip, "m/data.mdb", zip_source_buffer(zip, data.data(), data.size(), 0), 0), 0);
  ASSERT_EQ(zip_close(zip), 0) << zip_strerror(zip);
}

TEST(BatchZipSpace, InflationStopsAtFreeSpaceMinusTheMargin) {
  SmallFilesystem small("200m");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): free-space test skipped";
  testing::TempDir source;
  // 150 MB under a max_batch_size of 64 GiB, but it would leave 50 MB free on 200 MB: less than the 64 MiB margin.
  const std::string bomb = source / "bomb.zip";
  WriteBatchZip(bomb, size_t{150} << 20);
  ASSERT_LT(fs::file_size(bomb), size_t{1} << 20);
  std::vector<std::string> maps;
  const std::string dest = small.dir() + "/out";
  Status s = UnzipBatch(bomb, dest, UnzipLimits(), &maps);
  EXPECT_EQ(s.code(), Code::kFull) << s.message();
  EXPECT_NE(s.message().find("not enough disk to extract " + bomb + ": it inflates to 157286400 bytes"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("keeps " + std::to_string(uint64_t{64} << 20) + " free (the larger of"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(fs::exists(dest));
  // A batch that leaves the margin free still extracts.
  const std::string small_zip = source / "small.zip";
  WriteBatchZip(small_zip, size_t{1} << 20);
  s = UnzipBatch(small_zip, dest, UnzipLimits(), &maps);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fs::file_size(dest + "/m/data.mdb"), size_t{1} << 20);
}

}  // namespace
}  // namespace planb
