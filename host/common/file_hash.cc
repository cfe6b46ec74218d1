#include "host/common/file_hash.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "host/common/bulk_xxh3.h"

namespace planb {

Status HashOpenFile(int fd, const std::string& path, uint64_t* size, uint64_t* checksum) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> hash(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(hash.get());
  // 256 KiB: read into a buffer that stays in L2 for the hash that follows (1 MiB did not).
  std::vector<char> buffer(size_t{1} << 18);
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("reading " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    XXH3_64bits_update(hash.get(), buffer.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  *size = total;
  *checksum = XXH3_64bits_digest(hash.get());
  return Status::Ok();
}

Status HashFile(const std::string& path, uint64_t* size, uint64_t* checksum) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    const std::string message = "opening " + path + ": " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(message) : Status::IOError(message);
  }
  const Status hashed = HashOpenFile(fd, path, size, checksum);
  ::close(fd);
  return hashed;
}

}  // namespace planb
