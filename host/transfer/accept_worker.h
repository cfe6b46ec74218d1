// Runs BatchSink::Accept for committed uploads on a thread of its own, one batch at a time, so that a long
// verification never stalls the receiver's ROUTER loop (other uploads keep flowing, status polls are answered).
// Results come back through TakeResults; a zmq PAIR socket becomes readable when one is waiting, so the loop
// can poll it beside its ROUTER instead of spinning.
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

#include "host/transfer/upload_receiver.h"
#include "planb/status.h"

namespace planb {

class AcceptWorker {
 public:
  struct Job {
    uint64_t token = 0;
    std::string path;
    std::string batch_id;
  };
  struct Result {
    uint64_t token = 0;
    Status status;
    uint64_t sequence = 0;
  };

  explicit AcceptWorker(BatchSink& sink) : sink_(sink) {}
  ~AcceptWorker() { Stop(); }
  AcceptWorker(const AcceptWorker&) = delete;
  AcceptWorker& operator=(const AcceptWorker&) = delete;

  // Creates the wake-up sockets in `context` and starts the thread.
  Status Start(zmq::context_t& context);
  void Submit(Job job);
  // Finished jobs since the last call, in order; drains the wake-up socket.
  std::vector<Result> TakeResults();
  // Lets the running Accept finish, drops jobs not started (the caller still owns their files) and joins.
  void Stop();
  // Readable when TakeResults has something.
  zmq::socket_t& wake_socket() { return *wake_in_; }

 private:
  void Loop();

  BatchSink& sink_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Job> jobs_;
  std::vector<Result> results_;
  bool stop_ = false;
  std::unique_ptr<zmq::socket_t> wake_in_;   // the Run thread's end
  std::unique_ptr<zmq::socket_t> wake_out_;  // the worker's end
};

}  // namespace planb
