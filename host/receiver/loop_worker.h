// LoopWorker runs jobs on threads of its own (one by default: one job at a time in submission order; with more,
// jobs start in submission order and may finish out of it), for a thread that serves a
// zmq poll loop (the upload receiver's ROUTER loop), so that a slow job never stalls that loop. Results come back
// through TakeResults; a zmq PAIR socket (wake_socket) becomes readable when one is waiting, so the loop can poll
// it beside its other sockets instead of spinning. The job itself is the `run` handler given at construction;
// AcceptWorker and ReadWorker are the two users.
// Thread-safety: Start, Submit, pending, TakeResults, Stop and wake_socket from the loop's thread only; `run` and
// `on_exception` are called on the worker thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "planb/status.h"

namespace planb {

// The wake-up socket pair of a LoopWorker (not a template, so it lives in loop_worker.cc).
class WakeSignal {
 public:
  // Binds a PAIR socket to an inproc endpoint named after `name` and never used before in this process, and
  // connects a second one to it. On failure both are closed and the message names `name`.
  Status Open(zmq::context_t& context, const std::string& name);
  // Makes the bound end readable; from any worker thread.
  void Notify();
  // Reads every pending wake-up off the bound end.
  void Drain();
  void Close();
  zmq::socket_t& socket() { return *in_; }

 private:
  std::unique_ptr<zmq::socket_t> in_;   // the loop's end
  std::unique_ptr<zmq::socket_t> out_;  // the worker's end
  std::mutex notify_mutex_;             // guards out_ against worker threads notifying at once
};

template <typename JobT, typename ResultT>
class LoopWorker {
 public:
  using Job = JobT;
  using Result = ResultT;
  // Does the job. May take the job's contents apart, but only once it cannot throw any more: on an exception
  // `on_exception` builds the result from the same job.
  using Handler = std::function<Result(Job&)>;
  // The result for a job whose handler threw, so that an exception neither kills the thread nor loses the job.
  using FailureHandler = std::function<Result(Job&, const std::exception&)>;

  // `name` ("accept worker") names the wake-up endpoint and Start's error; `threads` (at least 1) run jobs.
  LoopWorker(std::string name, Handler run, FailureHandler on_exception, size_t threads = 1)
      : name_(std::move(name)),
        run_(std::move(run)),
        on_exception_(std::move(on_exception)),
        thread_count_(threads == 0 ? 1 : threads) {}
  ~LoopWorker() { Stop(); }
  LoopWorker(const LoopWorker&) = delete;
  LoopWorker& operator=(const LoopWorker&) = delete;

  // Creates the wake-up sockets in `context` and starts the threads.
  Status Start(zmq::context_t& context) {
    Status status = wake_.Open(context, name_);
    if (!status.ok()) return status;
    stop_ = false;
    for (size_t i = 0; i < thread_count_; ++i) threads_.emplace_back([this] { Loop(); });
    return Status::Ok();
  }

  void Submit(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    work_ready_.notify_one();
  }

  // Jobs submitted but not yet finished (queued or running).
  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size() + running_;
  }

  // Finished jobs since the last call, in order; drains the wake-up socket.
  std::vector<Result> TakeResults() {
    wake_.Drain();
    std::vector<Result> results;
    std::lock_guard<std::mutex> lock(mu_);
    results.swap(results_);
    return results;
  }

  // Lets the running jobs finish, drops the queued ones (whatever they hold stays the caller's) and joins.
  void Stop() {
    if (threads_.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      jobs_.clear();
    }
    work_ready_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    wake_.Close();
  }

  // Readable when TakeResults has something. REQUIRES: a successful Start.
  zmq::socket_t& wake_socket() { return wake_.socket(); }

 private:
  void Loop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_ready_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
        ++running_;
      }
      Result result = RunOne(job);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --running_;
        results_.push_back(std::move(result));
      }
      wake_.Notify();
    }
  }

  Result RunOne(Job& job) {
    try {
      return run_(job);
    } catch (const std::exception& e) {
      return on_exception_(job, e);
    }
  }

  const std::string name_;
  const Handler run_;
  const FailureHandler on_exception_;
  const size_t thread_count_;
  WakeSignal wake_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Job> jobs_;
  size_t running_ = 0;
  std::vector<Result> results_;
  bool stop_ = false;
};

}  // namespace planb
