// libsystemd (and libgcrypt, lz4, zstd, libcap), opened when `planb serve` tells systemd it is ready.
#include <systemd/sd-daemon.h>

#include "host/on_demand/on_demand_library.h"

namespace {
planb::OnDemandLibrary& Systemd() {
  static planb::OnDemandLibrary library(PLANB_LIBSYSTEMD_SONAME, "serve's readiness and watchdog notices");
  return library;
}
}  // namespace

PLANB_ON_DEMAND(Systemd, int, sd_notify, (int unset_environment, const char* state), (unset_environment, state))
PLANB_ON_DEMAND(Systemd, int, sd_watchdog_enabled, (int unset_environment, uint64_t* usec), (unset_environment, usec))
