// Free space before writing: every place that reserves or fills a node's disk (PREPARE before a load, an
// upload's BEGIN, unzipping a batch) keeps the same margin free, so that a load PREPARE found room for also finds
// it when its batches arrive and are unpacked, and nothing a peer sends can fill the disk the shards live on.
#pragma once

#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

// The least a node keeps free on a filesystem it writes: the larger of this and 1% of the filesystem.
inline constexpr uint64_t kDefaultMinFreeBytes = uint64_t{64} << 20;

struct DiskRoom {
  bool known = false;       // statvfs answered; when not, the writes themselves report the real problem
  std::string dir;
  uint64_t free_bytes = 0;  // available to this process (f_bavail)
  uint64_t margin = 0;      // kept free: max(min_free, 1% of the filesystem)
  uint64_t min_free = 0;

  // Whether `needed` more bytes fit above the margin (true when not known).
  bool Fits(uint64_t needed) const { return !known || (free_bytes >= margin && free_bytes - margin >= needed); }
  // "DIR has F bytes free and keeps M free (the larger of X bytes and 1% of the filesystem)", for messages.
  std::string Describe() const;
};

DiskRoom MeasureDiskRoom(const std::string& dir, uint64_t min_free = kDefaultMinFreeBytes);

// An LMDB error on `path` (in directory `dir`) said as what it is when the disk is full: LMDB reports a write that
// fell short as EIO and a full disk as ENOSPC, both I/O errors. kFull "disk full: PATH (N bytes free on its
// filesystem): ..." for ENOSPC, or for EIO when less than max(`needed`, 1 MiB) is free; `s` unchanged otherwise.
Status DescribeDiskFull(const Status& s, const std::string& path, const std::string& dir, uint64_t needed);

// a + b, or the largest uint64_t where that overflows (sizes declared by peers may be anything).
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace planb
