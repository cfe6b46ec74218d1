// ZeroMQ, opened when a command first makes a context: uploads, remote reads, serve, snapshot fetches.
#include <zmq.h>

#include "host/on_demand/on_demand_library.h"

namespace {
planb::OnDemandLibrary& Zmq() {
  static planb::OnDemandLibrary library(PLANB_LIBZMQ_SONAME, "ZeroMQ transfers (uploads, remote reads, serve)");
  return library;
}
}  // namespace

PLANB_ON_DEMAND(Zmq, void*, zmq_ctx_new, (void), ())
PLANB_ON_DEMAND(Zmq, int, zmq_ctx_term, (void* context), (context))
PLANB_ON_DEMAND(Zmq, int, zmq_has, (const char* capability), (capability))
PLANB_ON_DEMAND(Zmq, int, zmq_errno, (void), ())
PLANB_ON_DEMAND(Zmq, const char*, zmq_strerror, (int errnum), (errnum))
PLANB_ON_DEMAND(Zmq, void*, zmq_socket, (void* context, int type), (context, type))
PLANB_ON_DEMAND(Zmq, int, zmq_close, (void* s), (s))
PLANB_ON_DEMAND(Zmq, int, zmq_bind, (void* s, const char* addr), (s, addr))
PLANB_ON_DEMAND(Zmq, int, zmq_connect, (void* s, const char* addr), (s, addr))
PLANB_ON_DEMAND(Zmq, int, zmq_setsockopt, (void* s, int option, const void* value, size_t size),
                (s, option, value, size))
PLANB_ON_DEMAND(Zmq, int, zmq_getsockopt, (void* s, int option, void* value, size_t* size),
                (s, option, value, size))
PLANB_ON_DEMAND(Zmq, int, zmq_socket_monitor, (void* s, const char* addr, int events), (s, addr, events))
PLANB_ON_DEMAND(Zmq, int, zmq_send, (void* s, const void* buf, size_t len, int flags), (s, buf, len, flags))
PLANB_ON_DEMAND(Zmq, int, zmq_poll, (zmq_pollitem_t* items, int count, long timeout), (items, count, timeout))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_init, (zmq_msg_t* msg), (msg))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_init_size, (zmq_msg_t* msg, size_t size), (msg, size))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_init_data, (zmq_msg_t* msg, void* data, size_t size, zmq_free_fn* ffn, void* hint),
                (msg, data, size, ffn, hint))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_close, (zmq_msg_t* msg), (msg))
PLANB_ON_DEMAND(Zmq, void*, zmq_msg_data, (zmq_msg_t* msg), (msg))
PLANB_ON_DEMAND(Zmq, size_t, zmq_msg_size, (const zmq_msg_t* msg), (msg))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_more, (const zmq_msg_t* msg), (msg))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_get, (const zmq_msg_t* msg, int property), (msg, property))
PLANB_ON_DEMAND(Zmq, const char*, zmq_msg_gets, (const zmq_msg_t* msg, const char* property), (msg, property))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_send, (zmq_msg_t* msg, void* s, int flags), (msg, s, flags))
PLANB_ON_DEMAND(Zmq, int, zmq_msg_recv, (zmq_msg_t* msg, void* s, int flags), (msg, s, flags))
PLANB_ON_DEMAND(Zmq, int, zmq_curve_keypair, (char* z85_public, char* z85_secret), (z85_public, z85_secret))
PLANB_ON_DEMAND(Zmq, int, zmq_curve_public, (char* z85_public, const char* z85_secret), (z85_public, z85_secret))
PLANB_ON_DEMAND(Zmq, char*, zmq_z85_encode, (char* dest, const uint8_t* data, size_t size), (dest, data, size))
PLANB_ON_DEMAND(Zmq, uint8_t*, zmq_z85_decode, (uint8_t* dest, const char* text), (dest, text))
