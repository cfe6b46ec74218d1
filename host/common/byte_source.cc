#include "host/common/byte_source.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace planb {

Status FdByteSource::Read(char* buffer, size_t size, size_t* got) {
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, size);
    if (n >= 0) {
      *got = static_cast<size_t>(n);
      return Status::Ok();
    }
    if (errno != EINTR) return Status::IOError(std::string("read failed: ") + std::strerror(errno));
  }
}

Status StreamByteSource::Read(char* buffer, size_t size, size_t* got) {
  in_.read(buffer, static_cast<std::streamsize>(size));
  *got = static_cast<size_t>(in_.gcount());
  if (*got == 0 && in_.bad()) return Status::IOError("read failed");
  return Status::Ok();
}

}  // namespace planb
