// "HOST:PORT" for an HTTP listener (metrics_bind): an IPv4 address, [IPv6] or localhost, and a port 0..65535
// (0: any free port). Parsed once for the config's check and again for the bind, the same way.
#pragma once

#include <sys/socket.h>

#include <string>

#include "planb/status.h"

namespace planb {

struct HttpBind {
  sockaddr_storage address{};
  socklen_t length = 0;
  std::string host;  // as shown: "127.0.0.1", "[::1]"
};

// kInvalidArgument naming the text and what is wrong ("'x' is not HOST:PORT (no port; e.g. 127.0.0.1:9464)").
Status ParseHttpBind(const std::string& text, HttpBind* out);

}  // namespace planb
