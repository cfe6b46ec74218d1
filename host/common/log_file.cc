#include "host/common/log_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace planb {

namespace {

Status OpenForAppend(const std::string& path, int* fd) {
  *fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (*fd < 0) {
    const int error = errno;
    return Status::IOError("log_file " + path + ": cannot open for appending: " +
                           (error == ELOOP ? std::string("it is a symbolic link") : std::strerror(error)));
  }
  return Status::Ok();
}

}  // namespace

LogFile::~LogFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogFile::Open(const std::string& path) {
  int fd = -1;
  PLANB_RETURN_IF_ERROR(OpenForAppend(path, &fd));
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  path_ = path;
  return Status::Ok();
}

Status LogFile::Reopen() {
  int fd = -1;
  PLANB_RETURN_IF_ERROR(OpenForAppend(path_, &fd));
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  return Status::Ok();
}

void LogFile::Write(std::string_view line) {
  std::string text(line);
  text += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses log lines, never the node
    done += static_cast<size_t>(n);
  }
}

}  // namespace planb
