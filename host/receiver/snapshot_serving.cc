#include "host/receiver/snapshot_serving.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace planb {

Status ServedSnapshots::Add(Token token, const std::string& map, const std::string& owner,
                            const std::string& client, const PreparedSnapshot& prepared, Clock::time_point now) {
  const int fd = ::open(prepared.zip_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening snapshot zip " + prepared.zip_path + ": " + std::strerror(errno));
  Entry entry;
  entry.fd = fd;
  entry.map = map;
  entry.owner = owner;
  entry.client = client;
  entry.pace = TransferPace(now);
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

std::vector<ServedSnapshots::Closed> ServedSnapshots::ExpireIdle(Clock::time_point now,
                                                                 std::chrono::milliseconds expiry, uint64_t min_rate) {
  std::vector<Closed> closed;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    Closed why{entry.map, entry.client, "an idle", ""};
    if (now - entry.last_touch >= expiry) {
      why.why = "no FETCH for " + std::to_string(expiry.count()) + " ms";
    } else {
      why.how = "a slow";
      why.why = entry.pace.Check(now, entry.served, entry.size > entry.served ? entry.size - entry.served : 0, expiry,
                                 min_rate);
    }
    if (why.why.empty()) {
      ++it;
      continue;
    }
    ::close(entry.fd);
    closed.push_back(std::move(why));
    it = entries_.erase(it);
  }
  return closed;
}

size_t ServedSnapshots::CountFor(const std::string& client) const {
  size_t n = 0;
  for (const auto& [token, entry] : entries_) n += entry.client == client;
  return n;
}

void ServedSnapshots::Clear() {
  for (auto& [token, entry] : entries_) ::close(entry.fd);
  entries_.clear();
}

}  // namespace planb
