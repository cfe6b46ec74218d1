#include "host/ingest/gz_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace planb {
namespace {

constexpr unsigned kBlockSize = 64 * 1024;

// gzerror's text without the "<fd:N>: " gzdopen puts in front.
std::string GzWhat(const char* what) {
  std::string text = what != nullptr ? what : "unknown error";
  if (text.rfind("<fd:", 0) == 0 && text.find(": ") != std::string::npos) text.erase(0, text.find(": ") + 2);
  return text;
}

}  // namespace

GzBuffer::GzBuffer() : buffer_(new char[kBlockSize]) { setg(buffer_.get(), buffer_.get(), buffer_.get()); }

GzBuffer::~GzBuffer() {
  if (file_ != nullptr) gzclose(file_);
}

Status GzBuffer::Open(const std::string& path) {
  name_ = path == "-" ? "stdin" : path;
  // A duplicate of standard input, so that gzclose leaves fd 0 open.
  const int fd = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(name_ + ": cannot open: " + std::strerror(errno));
  file_ = gzdopen(fd, "rb");
  if (file_ == nullptr) {
    ::close(fd);
    return Status(Code::kFull, name_ + ": cannot open: out of memory");
  }
  gzbuffer(file_, kBlockSize);
  return Status::Ok();
}

GzBuffer::int_type GzBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (file_ == nullptr || !status_.ok()) return traits_type::eof();
  const int n = gzread(file_, buffer_.get(), kBlockSize);
  if (n <= 0) {
    if (n < 0) {
      int code = Z_OK;
      const char* what = gzerror(file_, &code);
      status_ = code == Z_ERRNO ? Status::IOError(name_ + ": read failed: " + std::strerror(errno))
                                : Status::Invalid(name_ + ": corrupt gzip data: " + GzWhat(what));
    } else {
      // gzread returns 0 both at a clean end and at the end of a truncated gzip stream: gzerror tells.
      int code = Z_OK;
      const char* what = gzerror(file_, &code);
      if (code != Z_OK) status_ = Status::Invalid(name_ + ": corrupt gzip data: " + GzWhat(what));
    }
    return traits_type::eof();
  }
  setg(buffer_.get(), buffer_.get(), buffer_.get() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace planb
