#include "host/common/disk_room.h"

#include <sys/statvfs.h>

#include <algorithm>

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

std::string DiskRoom::Describe() const {
  return dir + " has " + std::to_string(free_bytes) + " bytes free and keeps " + std::to_string(margin) +
         " free (the larger of " + std::to_string(min_free) + " bytes and 1% of the filesystem)";
}

}  // namespace planb
