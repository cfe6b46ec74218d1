#include "host/receiver/loop_worker.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace planb {

Status WakeSignal::Open(zmq::context_t& context, const std::string& name) {
  // A name never used before in this process: zmq unbinds a closed inproc endpoint asynchronously, so a
  // worker reusing a predecessor's name (say, its address) could find it still taken.
  static std::atomic<uint64_t> instances{0};
  std::string slug = name;
  std::replace(slug.begin(), slug.end(), ' ', '-');
  const std::string endpoint = "inproc://planb-" + slug + "-" + std::to_string(++instances);
  try {
    in_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    in_->set(zmq::sockopt::linger, 0);
    in_->bind(endpoint);
    out_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    out_->set(zmq::sockopt::linger, 0);
    out_->connect(endpoint);
  } catch (const zmq::error_t& e) {
    Close();
    return Status::IOError("cannot set up the " + name + "'s wake-up socket: " + e.what());
  }
  return Status::Ok();
}

void WakeSignal::Notify() {
  // A zmq socket is not thread-safe, and a worker with several threads notifies from each.
  std::lock_guard<std::mutex> lock(notify_mutex_);
  try {
    (void)out_->send(zmq::message_t(), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The loop still finds the result within its poll interval.
  }
}

void WakeSignal::Drain() {
  zmq::message_t ignored;
  while (in_ && in_->recv(ignored, zmq::recv_flags::dontwait)) {
  }
}

void WakeSignal::Close() {
  out_.reset();
  in_.reset();
}

}  // namespace planb
