#include "host/common/http_bind.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "host/common/log_text.h"

namespace planb {

Status ParseHttpBind(const std::string& text, HttpBind* out) {
  const auto bad = [&text](const std::string& why) {
    return Status::Invalid("'" + LogValue(text) + "' is not HOST:PORT (" + why + "; e.g. 127.0.0.1:9464)");
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return bad("no port");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos) {
    return bad("the port is not a number from 0 to 65535");
  }
  const unsigned long port = std::stoul(port_text);
  if (port > 65535) return bad("the port is not a number from 0 to 65535");
  if (host == "localhost") host = "127.0.0.1";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out->address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr) != 1) {
      return bad("'" + LogValue(host) + "' is not an IPv6 address");
    }
    out->length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out->address);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    if (host.empty() || ::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) != 1) {
      return bad(host.empty() ? std::string("no host") : "'" + LogValue(host) + "' is not an IPv4 address, [IPv6] or localhost");
    }
    out->length = sizeof(sockaddr_in);
  }
  out->host = host;
  return Status::Ok();
}

}  // namespace planb
