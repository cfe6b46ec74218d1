#include "host/common/fault_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace planb {

bool FaultPointActive(const char* point) {
  // Read on every call, not cached: a test process sets PLANB_FAULT for one test and unsets it after. The points
  // sit on per-chunk and per-batch paths, where one getenv is noise.
  const char* configured = std::getenv("PLANB_FAULT");
  return configured != nullptr && std::strcmp(configured, point) == 0;
}

void FaultPoint(const char* point) {
  if (FaultPointActive(point)) ::kill(::getpid(), SIGKILL);
}

}  // namespace planb
