#include "host/monitoring/http_endpoint.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "host/common/http_bind.h"
#include "host/common/log_text.h"

namespace planb {

namespace {

uint16_t BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

void MhdLog(void* self, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string line = text;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  static_cast<const HttpEndpoint*>(self)->LogLine("http: " + LogValue(line));
}

MHD_Result Queue(MHD_Connection* connection, const HttpResponse& answer, bool head) {
  MHD_Response* response = MHD_create_response_from_buffer(head ? 0 : answer.body.size(),
                                                           const_cast<char*>(answer.body.data()),
                                                           MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type.c_str());
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (answer.status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result queued = MHD_queue_response(connection, answer.status, response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result OnRequest(void* self, MHD_Connection* connection, const char* url, const char* method,
                     const char* /*version*/, const char* /*upload_data*/, size_t* upload_data_size,
                     void** request_state) {
  // The first call announces the request (headers read); answering it at once refuses any body without reading
  // it: only GET and HEAD are served.
  if (*request_state == nullptr) {
    static int announced;
    *request_state = &announced;
    if (*upload_data_size == 0 && (std::strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
                                   std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0)) {
      // A GET without a body: answered on this first call.
    } else {
      *upload_data_size = 0;
      return Queue(connection, {MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "method not allowed\n"},
                   false);
    }
  }
  const auto* endpoint = static_cast<const HttpEndpoint*>(self);
  const HttpResponse answer = endpoint->Answer(method, url);
  return Queue(connection, answer, std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0);
}

}  // namespace

HttpEndpoint::~HttpEndpoint() { Stop(); }

HttpResponse HttpEndpoint::Answer(const std::string& method, const std::string& path) const {
  if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
    return {MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  const auto route = routes_.find(path);
  if (route == routes_.end()) return {MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", "404 page not found\n"};
  return route->second();
}

Status HttpEndpoint::Start(const std::string& bind, std::map<std::string, HttpHandler> routes, HttpLimits limits,
                           Log log, std::string* bound) {
  HttpBind parsed;
  PLANB_RETURN_IF_ERROR(ParseHttpBind(bind, &parsed));
  const int fd = ::socket(parsed.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IOError("cannot listen on " + bind + ": socket: " + std::strerror(errno));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // a restart need not wait for TIME_WAIT
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&parsed.address), parsed.length) != 0 ||
      ::listen(fd, 64) != 0) {
    const int error = errno;
    ::close(fd);
    return Status::IOError("cannot listen on " + bind + ": " + std::strerror(error));
  }
  routes_ = std::move(routes);
  log_ = std::move(log);
  daemon_ = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, nullptr, nullptr, &OnRequest, this,
      MHD_OPTION_EXTERNAL_LOGGER, &MhdLog, this, MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(fd),
      MHD_OPTION_CONNECTION_LIMIT, limits.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      limits.max_connections_per_address, MHD_OPTION_CONNECTION_TIMEOUT, limits.idle_timeout_seconds,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.connection_memory_bytes,
      // RFC 7230 to the letter (HTTP/1.1 without Host: 400): a tool that sends it wrong is told, not guessed at.
      MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    ::close(fd);
    return Status::IOError("cannot serve HTTP on " + bind + ": libmicrohttpd did not start");
  }
  *bound = parsed.host + ":" + std::to_string(BoundPort(fd));  // MHD_stop_daemon closes fd
  return Status::Ok();
}

void HttpEndpoint::Stop() {
  if (daemon_ != nullptr) {
    MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
  }
}

}  // namespace planb
