// Runs BatchSink::ExecuteRead for READ requests on a thread of its own, one at a time in arrival order, so that a
// long query never stalls the receiver's ROUTER loop (uploads keep flowing). Like AcceptWorker, results come
// back through TakeResults and a zmq PAIR socket becomes readable when one is waiting.
// Thread-safety: Start, Submit, TakeResults, Stop and wake_socket from the receiver's Run thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/protocol.h"
#include "host/transfer/upload_receiver.h"
#include "planb/status.h"

namespace planb {

class ReadWorker {
 public:
  struct Job {
    std::string routing_id;
    uint64_t request_id = 0;
    std::vector<std::string> args;
  };
  struct Result {
    std::string routing_id;
    uint64_t request_id = 0;
    Status status;  // non-OK: the sink refused the request (answered ERROR)
    protocol::ReadResult result;
  };

  explicit ReadWorker(BatchSink& sink) : sink_(sink) {}
  ~ReadWorker() { Stop(); }
  ReadWorker(const ReadWorker&) = delete;
  ReadWorker& operator=(const ReadWorker&) = delete;

  Status Start(zmq::context_t& context);
  void Submit(Job job);
  // Requests submitted but not yet finished (queued or running).
  size_t pending();
  // Finished requests since the last call, in order; drains the wake-up socket.
  std::vector<Result> TakeResults();
  // Lets the running read finish, drops the queued ones (their senders time out) and joins.
  void Stop();
  zmq::socket_t& wake_socket() { return *wake_in_; }

 private:
  void Loop();

  BatchSink& sink_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Job> jobs_;
  size_t running_ = 0;
  std::vector<Result> results_;
  bool stop_ = false;
  std::unique_ptr<zmq::socket_t> wake_in_;
  std::unique_ptr<zmq::socket_t> wake_out_;
};

}  // namespace planb
