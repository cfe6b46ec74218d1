// Endpoints for the two ways a node fails to answer: nobody listens (the connection is refused at once) and a
// node that accepts the connection and never replies (the request times out).
#pragma once

#include <string>
#include <zmq.hpp>

namespace planb::testing {

// A loopback endpoint nobody listens on (a port just bound and released): connections to it are refused.
inline std::string UnusedEndpoint(zmq::context_t& context) {
  zmq::socket_t probe(context, zmq::socket_type::router);
  probe.set(zmq::sockopt::linger, 0);
  probe.bind("tcp://127.0.0.1:*");
  std::string endpoint = probe.get(zmq::sockopt::last_endpoint);
  probe.unbind(endpoint);
  return endpoint;
}

// A node that takes connections and requests and never answers, for as long as it lives.
class SilentNode {
 public:
  explicit SilentNode(zmq::context_t& context) : socket_(context, zmq::socket_type::router) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::socket_t socket_;
  std::string endpoint_;
};

}  // namespace planb::testing
