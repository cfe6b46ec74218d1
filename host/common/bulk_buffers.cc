#include "host/common/bulk_buffers.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace planb {

namespace {

constexpr int kMmapThreshold = 4 << 20;
constexpr int kTrimThreshold = 64 << 20;

}  // namespace

void KeepBulkBuffersInProcess() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
  // Failures leave glibc's defaults: slower bulk transfers, nothing wrong.
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  (void)mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace planb
