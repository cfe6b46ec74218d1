#include "host/receiver/snapshot_serving.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace planb {

Status ServedSnapshots::Add(Token token, const std::string& map, const std::string& owner,
                            const PreparedSnapshot& prepared, Clock::time_point now) {
  const int fd = ::open(prepared.zip_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening snapshot zip " + prepared.zip_path + ": " + std::strerror(errno));
  Entry entry;
  entry.fd = fd;
  entry.map = map;
  entry.owner = owner;
  entry.zip_path = prepared.zip_path;
  entry.size = prepared.size;
  entry.last_touch = now;
  entries_.emplace(token, std::move(entry));
  return Status::Ok();
}

ServedSnapshots::Entry* ServedSnapshots::Find(Token token, const std::string& owner) {
  auto it = entries_.find(token);
  return it == entries_.end() || it->second.owner != owner ? nullptr : &it->second;
}

Status ServedSnapshots::ReadAt(const Entry& entry, uint64_t offset, size_t length, char* out) {
  while (length > 0) {
    const ssize_t n = ::pread(entry.fd, out, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("reading snapshot zip " + entry.zip_path + ": " + std::strerror(errno));
    if (n == 0) {
      return Status::IOError("reading snapshot zip " + entry.zip_path + ": it ends at " + std::to_string(offset) +
                             " bytes, before the " + std::to_string(entry.size) + " offered");
    }
    out += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::vector<std::string> ServedSnapshots::ExpireIdle(Clock::time_point now, std::chrono::milliseconds expiry) {
  std::vector<std::string> expired;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now - it->second.last_touch < expiry) {
      ++it;
      continue;
    }
    ::close(it->second.fd);
    expired.push_back(it->second.map);
    it = entries_.erase(it);
  }
  return expired;
}

void ServedSnapshots::Clear() {
  for (auto& [token, entry] : entries_) ::close(entry.fd);
  entries_.clear();
}

}  // namespace planb
