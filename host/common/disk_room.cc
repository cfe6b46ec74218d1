#include "host/common/disk_room.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace planb {

namespace {
constexpr uint64_t kMarginPercent = 1;
}  // namespace

DiskRoom MeasureDiskRoom(const std::string& dir, uint64_t min_free) {
  DiskRoom room;
  room.dir = dir;
  room.min_free = min_free;
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) return room;
  room.known = true;
  room.free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  const uint64_t size = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  room.margin = std::max(min_free, size / 100 * kMarginPercent);
  return room;
}

Status DescribeDiskFull(const Status& s, const std::string& path, const std::string& dir, uint64_t needed) {
  if (s.ok() || s.code() != Code::kIOError) return s;
  const bool short_write = s.message().find(std::strerror(EIO)) != std::string::npos;
  const bool no_space = s.message().find(std::strerror(ENOSPC)) != std::string::npos;
  if (!short_write && !no_space) return s;
  struct statvfs fs_stat {};
  if (::statvfs(dir.c_str(), &fs_stat) != 0) return s;
  const uint64_t free_bytes = static_cast<uint64_t>(fs_stat.f_bavail) * fs_stat.f_frsize;
  if (!no_space && free_bytes >= std::max<uint64_t>(needed, uint64_t{1} << 20)) return s;
  return Status(Code::kFull, "disk full: " + path + " (" + std::to_string(free_bytes) +
                                 " bytes free on its filesystem): " + s.message());
}

std::string DiskRoom::Describe() const {
  return dir + " has " + std::to_string(free_bytes) + " bytes free and keeps " + std::to_string(margin) +
         " free (the larger of " + std::to_string(min_free) + " bytes and 1% of the filesystem)";
}

}  // namespace planb
