// libmicrohttpd (and GnuTLS with its chain), opened when `planb serve` starts its metrics and health listener.
#include <microhttpd.h>

#include <cstdarg>

#include "host/on_demand/on_demand_library.h"

namespace {
planb::OnDemandLibrary& Microhttpd() {
  static planb::OnDemandLibrary library(PLANB_LIBMICROHTTPD_SONAME, "the metrics and health listener of serve");
  return library;
}
}  // namespace

// Variadic: its options go to the va_list form, the one a forward can pass them to.
extern "C" struct MHD_Daemon* MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                               void* apc_cls, MHD_AccessHandlerCallback dh, void* dh_cls, ...) {
  static const auto real = reinterpret_cast<decltype(&::MHD_start_daemon_va)>(Microhttpd().Symbol("MHD_start_daemon_va"));
  va_list options;
  va_start(options, dh_cls);
  struct MHD_Daemon* daemon = real(flags, port, apc, apc_cls, dh, dh_cls, options);
  va_end(options);
  return daemon;
}
PLANB_ON_DEMAND(Microhttpd, void, MHD_stop_daemon, (struct MHD_Daemon * daemon), (daemon))
PLANB_ON_DEMAND(Microhttpd, struct MHD_Response*, MHD_create_response_from_buffer,
                (size_t size, void* buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode))
PLANB_ON_DEMAND(Microhttpd, enum MHD_Result, MHD_add_response_header,
                (struct MHD_Response * response, const char* header, const char* content), (response, header, content))
PLANB_ON_DEMAND(Microhttpd, enum MHD_Result, MHD_queue_response,
                (struct MHD_Connection * connection, unsigned int status, struct MHD_Response* response),
                (connection, status, response))
PLANB_ON_DEMAND(Microhttpd, void, MHD_destroy_response, (struct MHD_Response * response), (response))
