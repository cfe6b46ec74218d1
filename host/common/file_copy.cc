#include "host/common/file_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "host/common/file_util.h"

namespace planb {

namespace {

Status Errno(int err, const std::string& what) {
  return Status(err == ENOSPC ? Code::kFull : Code::kIOError, what + ": " + std::strerror(err));
}

// The read/write fallback (filesystems or kernels that refuse copy_file_range between these files).
Status CopyByReading(int in_fd, uint64_t offset, uint64_t length, int out_fd, const std::string& in_path,
                     const std::string& out_path) {
  std::vector<char> buffer(size_t{1} << 20);
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, buffer.size()));
    const ssize_t n = ::pread(in_fd, buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "reading " + in_path);
    if (n == 0) return Status::Corruption(in_path + ": ends " + std::to_string(length) + " bytes early");
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
      const ssize_t w = ::write(out_fd, buffer.data() + done, static_cast<size_t>(n) - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Errno(errno, "writing " + out_path);
      done += static_cast<size_t>(w);
    }
    offset += static_cast<uint64_t>(n);
    length -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status CopyFileBytes(int in_fd, uint64_t offset, uint64_t length, int out_fd, const std::string& in_path,
                     const std::string& out_path) {
  loff_t in_offset = static_cast<loff_t>(offset);
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, uint64_t{1} << 30));
    const ssize_t n = ::copy_file_range(in_fd, &in_offset, out_fd, nullptr, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      return CopyByReading(in_fd, static_cast<uint64_t>(in_offset), length, out_fd, in_path, out_path);
    }
    if (n < 0) return Errno(errno, "copying " + in_path + " to " + out_path);
    if (n == 0) return Status::Corruption(in_path + ": ends " + std::to_string(length) + " bytes early");
    length -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status CopyFileTo(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) return Errno(errno, "opening " + from);
  struct stat st;
  if (::fstat(in, &st) != 0) {
    const int err = errno;
    ::close(in);
    return Errno(err, "reading the size of " + from);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(in);
    return Status::Invalid(from + ": not a regular file");
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, HomeFileMode());
  if (out < 0) {
    const int err = errno;
    ::close(in);
    return Errno(err, "creating " + to);
  }
  Status s = CopyFileBytes(in, 0, static_cast<uint64_t>(st.st_size), out, from, to);
  ::close(in);
  if (::close(out) != 0 && s.ok()) s = Errno(errno, "closing " + to);
  if (!s.ok()) ::unlink(to.c_str());
  return s;
}

}  // namespace planb
