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

bool FaultPointActiveFor(const char* point, std::string_view subject) {
  const char* configured = std::getenv("PLANB_FAULT");
  if (configured == nullptr) return false;
  const std::string_view value(configured);
  const size_t length = std::strlen(point);
  return value.size() == length + 1 + subject.size() && value.compare(0, length, point) == 0 && value[length] == ':' &&
         value.substr(length + 1) == subject;
}

void FaultPoint(const char* point) {
  if (FaultPointActive(point)) ::kill(::getpid(), SIGKILL);
}

}  // namespace planb
