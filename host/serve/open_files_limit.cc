#include "host/serve/open_files_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace planb {

uint64_t RaiseOpenFilesLimit(uint64_t* before) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    *before = 0;
    return 0;
  }
  *before = limit.rlim_cur;
  if (limit.rlim_cur >= limit.rlim_max) return limit.rlim_cur;
  rlimit raised = limit;
  raised.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) return limit.rlim_cur;
  return raised.rlim_cur;
}

uint32_t ConnectionCapUnder(uint64_t open_files, uint64_t reserved, uint32_t configured) {
  const uint64_t room = open_files > reserved ? (open_files - reserved) / 2 : 0;
  return static_cast<uint32_t>(std::max<uint64_t>(kMinConnectionCap, std::min<uint64_t>(configured, room)));
}

}  // namespace planb
