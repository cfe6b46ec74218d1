// A small HTTP/1.1 listener for operators' tools (Prometheus scrapes, load balancers' health checks): GET and HEAD
// of a fixed set of paths, each answered by a function; anything else 404 (unknown path) or 405 (other method).
// Built on libmicrohttpd (Debian's libmicrohttpd12): a maintained, RFC-conforming server with the limits an
// exposed port needs (connections in all and per address, an idle timeout that closes dripping clients, a
// per-connection memory cap that refuses huge headers with 431), in one internal thread. Bound to loopback or a
// management network: it has no authentication (docs/operations.md).
// Thread-safety: Start and Stop on one thread; handlers run on the listener's thread, one at a time.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "planb/status.h"

struct MHD_Daemon;

namespace planb {

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse()>;

struct HttpLimits {
  unsigned max_connections = 64;
  unsigned max_connections_per_address = 16;
  unsigned idle_timeout_seconds = 10;    // a connection that sends nothing for this long is closed
  size_t connection_memory_bytes = 32 << 10;  // request line and headers beyond this: 431
};

class HttpEndpoint {
 public:
  using Log = std::function<void(const std::string&)>;

  HttpEndpoint() = default;
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Listens on `bind` (ParseHttpBind, host/common/http_bind.h) and serves `routes` (exact paths, "/metrics")
  // until Stop. `bound` gets "HOST:PORT" with the port actually bound. Errors: the text does not parse, the
  // address cannot be bound (in use, not local), with the system's reason.
  Status Start(const std::string& bind, std::map<std::string, HttpHandler> routes, HttpLimits limits, Log log,
               std::string* bound);
  // Closes the listener and every connection; waits for a handler in progress.
  void Stop();

  // libmicrohttpd's callbacks.
  HttpResponse Answer(const std::string& method, const std::string& path) const;
  void LogLine(const std::string& line) const {
    if (log_) log_(line);
  }

 private:
  MHD_Daemon* daemon_ = nullptr;
  std::map<std::string, HttpHandler> routes_;
  Log log_;
};

}  // namespace planb
