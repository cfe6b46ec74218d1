#include "host/transfer/fd_zip_source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

namespace planb {

namespace {

// libzip asks for a few KiB at a time; a pipe hands over up to its capacity per read.
constexpr size_t kBlockBytes = size_t{1} << 20;

struct FdSource {
  int fd;
  std::vector<char> block = std::vector<char>(kBlockBytes);
  size_t begin = 0;  // unread bytes of `block`: [begin, end)
  size_t end = 0;
  bool at_end = false;
  zip_error_t error;
  time_t mtime = std::time(nullptr);

  explicit FdSource(int fd_in) : fd(fd_in) { zip_error_init(&error); }
  ~FdSource() { zip_error_fini(&error); }

  // Up to `len` bytes into `out`: 0 at the end of the stream, -1 on a read error.
  zip_int64_t Read(void* out, zip_uint64_t len) {
    if (begin == end && !at_end) {
      ssize_t n;
      do {
        n = ::read(fd, block.data(), block.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) {
        zip_error_set(&error, ZIP_ER_READ, errno);
        return -1;
      }
      begin = 0;
      end = static_cast<size_t>(n);
      at_end = n == 0;
    }
    const size_t count = std::min<size_t>(end - begin, len);
    std::memcpy(out, block.data() + begin, count);
    begin += count;
    return static_cast<zip_int64_t>(count);
  }
};

zip_int64_t Callback(void* userdata, void* data, zip_uint64_t len, zip_source_cmd_t command) {
  auto* source = static_cast<FdSource*>(userdata);
  switch (command) {
    case ZIP_SOURCE_OPEN:
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_READ:
      return source->Read(data, len);
    case ZIP_SOURCE_STAT: {
      if (len < sizeof(zip_stat_t)) {
        zip_error_set(&source->error, ZIP_ER_INVAL, 0);
        return -1;
      }
      auto* stat = static_cast<zip_stat_t*>(data);
      zip_stat_init(stat);  // no size: it is known at the end
      stat->mtime = source->mtime;
      stat->valid |= ZIP_STAT_MTIME;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&source->error, data, len);
    case ZIP_SOURCE_FREE:
      delete source;
      return 0;
    case ZIP_SOURCE_SUPPORTS:
      // (zip_source_make_command_bitmap is variadic: libzip is opened on demand, host/on_demand/)
      return ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_OPEN) | ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_READ) |
             ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_CLOSE) | ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_STAT) |
             ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_ERROR) | ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_FREE);
    default:
      zip_error_set(&source->error, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

}  // namespace

zip_source_t* MakeFdZipSource(zip_t* zip, int fd) {
  auto source = std::make_unique<FdSource>(fd);
  zip_source_t* made = zip_source_function(zip, Callback, source.get());
  if (made != nullptr) (void)source.release();  // freed by ZIP_SOURCE_FREE
  return made;
}

}  // namespace planb
