// ZipMapStream: one map's data read from a pipe into a batch zip, as snapshots stream LMDB's copy.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "host/transfer/batch_zip.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::ReadFile;
using ::planb::testing::TempDir;

// Bytes like LMDB pages: a counter every 64 bytes, zeros between.
std::string PageLikeBytes(size_t size) {
  std::string out(size, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < size; i += 64) {
    x = x * 1664525u + 1013904223u;
    std::memcpy(&out[i], &x, std::min<size_t>(4, size - i));
  }
  return out;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A pipe with a thread writing `bytes` into it and then closing its write end, as the snapshot's copy does.
// The write blocks until the reader has taken everything, so Finish() returns only once the pipe was drained.
class PipeWriter {
 public:
  explicit PipeWriter(std::string bytes) : bytes_(std::move(bytes)) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    thread_ = std::thread([this] {
      size_t done = 0;
      while (done < bytes_.size()) {
        const ssize_t n = ::write(write_fd_, bytes_.data() + done, bytes_.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      written_ = done;
      ::close(write_fd_);
    });
  }
  ~PipeWriter() {
    if (thread_.joinable()) thread_.join();
    ::close(read_fd_);
  }
  int read_fd() const { return read_fd_; }
  // Joins the writer: how many bytes it got into the pipe.
  size_t Finish() {
    thread_.join();
    return written_;
  }

 private:
  std::string bytes_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  size_t written_ = 0;
  std::thread thread_;
};

ZipOptions Options(bool compress) {
  ZipOptions options;
  options.compress = compress;
  options.durable = false;
  options.batch_id = "snapshot/node1/city/7";
  return options;
}

struct ZipEntry {
  std::string name;
  int method = -1;
};

std::vector<ZipEntry> Entries(const std::string& path) {
  std::vector<ZipEntry> entries;
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &error);
  EXPECT_NE(zip, nullptr) << path << ": libzip error " << error;
  if (zip == nullptr) return entries;
  for (zip_int64_t i = 0; i < zip_get_num_entries(zip, 0); ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) == 0) entries.push_back({st.name, st.comp_method});
  }
  zip_discard(zip);
  return entries;
}

TEST(ZipMapStreamTest, ZipsThePipesBytesAsTheMapsDataStoredOrDeflated) {
  TempDir dir;
  // Several times the pipe's capacity and libzip's block, and not a multiple of either.
  const std::string data = PageLikeBytes((size_t{9} << 20) + 4097);
  for (const bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "deflated" : "stored");
    const std::string zip = dir / (compress ? "deflated.zip" : "stored.zip");
    PipeWriter writer(data);
    const Status s = ZipMapStream("city", writer.read_fd(), zip, Options(compress));
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(writer.Finish(), data.size());
    EXPECT_FALSE(fs::exists(zip + ".tmp"));
    const std::vector<ZipEntry> entries = Entries(zip);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].name, "planb-batch");
    EXPECT_EQ(entries[1].name, "city/data.mdb");
    EXPECT_EQ(entries[1].method, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE);

    // Read back as every receiver reads a snapshot: the checks, the CRC, the declared size.
    const std::string dest = dir / (compress ? "out-deflated" : "out-stored");
    std::vector<std::string> maps;
    std::string batch_id;
    const Status unzipped = UnzipBatch(zip, dest, UnzipLimits(), &maps, &batch_id);
    ASSERT_TRUE(unzipped.ok()) << unzipped.message();
    EXPECT_EQ(maps, std::vector<std::string>{"city"});
    EXPECT_EQ(batch_id, "snapshot/node1/city/7");
    EXPECT_TRUE(ReadFile(dest + "/city/data.mdb") == data);
  }
}

TEST(ZipMapStreamTest, AnEmptyStreamGivesAnEmptyDataEntry) {
  TempDir dir;
  const std::string zip = dir / "empty.zip";
  PipeWriter writer("");
  const Status s = ZipMapStream("city", writer.read_fd(), zip, Options(false));
  ASSERT_TRUE(s.ok()) << s.message();
  writer.Finish();
  std::vector<std::string> maps;
  ASSERT_TRUE(UnzipBatch(zip, dir / "out", UnzipLimits(), &maps).ok());
  EXPECT_EQ(ReadFile(dir / "out/city/data.mdb"), "");
}

// Every refusal still reads the pipe to its end (the writer would block forever otherwise) and leaves nothing.
TEST(ZipMapStreamTest, RefusalsNameTheProblemDrainThePipeAndLeaveNothing) {
  TempDir dir;
  const std::string data = PageLikeBytes(size_t{3} << 20);
  struct Case {
    std::string what;
    std::string map;
    ZipOptions options;
    std::string zip;
    Code code;
    std::string part;
  };
  ZipOptions bad_id = Options(false);
  bad_id.batch_id = "two\nlines";
  ZipOptions replace = Options(false);
  replace.replace = true;
  const std::vector<Case> cases = {
      {"a map name with a slash", "ci/ty", Options(false), dir / "a.zip", Code::kInvalidArgument,
       "'ci/ty': not a valid map name"},
      {"an upper-case map name", "City", Options(false), dir / "b.zip", Code::kInvalidArgument,
       "'City': not a valid map name"},
      {"a batch id with a newline", "city", bad_id, dir / "c.zip", Code::kInvalidArgument,
       "batch id 'two\\x0alines' is not valid"},
      {"a replacement", "city", replace, dir / "d.zip", Code::kInvalidArgument, "never a replacement"},
      {"a zip in a missing directory", "city", Options(false), dir / "missing/e.zip", Code::kIOError,
       "missing/e.zip.tmp"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    PipeWriter writer(data);
    const Status s = ZipMapStream(c.map, writer.read_fd(), c.zip, c.options);
    EXPECT_EQ(s.code(), c.code) << s.message();
    EXPECT_TRUE(Contains(s.message(), c.part)) << s.message();
    EXPECT_EQ(writer.Finish(), data.size());  // drained: the writer got every byte out
    EXPECT_FALSE(fs::exists(c.zip));
    EXPECT_FALSE(fs::exists(c.zip + ".tmp"));
  }
}

// A read error on the stream (here: a descriptor open for writing only) fails the zip with the system's reason.
TEST(ZipMapStreamTest, AReadErrorFailsTheZipAndLeavesNothing) {
  TempDir dir;
  const std::string zip = dir / "bad.zip";
  const int fd = ::open((dir / "write-only").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  const Status s = ZipMapStream("city", fd, zip, Options(false));
  ::close(fd);
  EXPECT_EQ(s.code(), Code::kIOError) << s.message();
  EXPECT_TRUE(Contains(s.message(), "Bad file descriptor")) << s.message();
  EXPECT_FALSE(fs::exists(zip));
  EXPECT_FALSE(fs::exists(zip + ".tmp"));
}

}  // namespace
}  // namespace planb
