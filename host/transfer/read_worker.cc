#include "host/transfer/read_worker.h"

#include <atomic>
#include <exception>

namespace planb {

Status ReadWorker::Start(zmq::context_t& context) {
  // A fresh inproc name per instance: zmq unbinds a closed inproc endpoint asynchronously (see AcceptWorker).
  static std::atomic<uint64_t> instances{0};
  const std::string endpoint = "inproc://planb-read-worker-" + std::to_string(++instances);
  try {
    wake_in_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    wake_in_->set(zmq::sockopt::linger, 0);
    wake_in_->bind(endpoint);
    wake_out_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    wake_out_->set(zmq::sockopt::linger, 0);
    wake_out_->connect(endpoint);
  } catch (const zmq::error_t& e) {
    wake_in_.reset();
    wake_out_.reset();
    return Status::IOError(std::string("upload receiver: cannot set up the read worker's wake-up socket: ") +
                           e.what());
  }
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void ReadWorker::Submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  work_ready_.notify_one();
}

size_t ReadWorker::pending() {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size() + running_;
}

std::vector<ReadWorker::Result> ReadWorker::TakeResults() {
  zmq::message_t ignored;
  while (wake_in_ && wake_in_->recv(ignored, zmq::recv_flags::dontwait)) {
  }
  std::vector<Result> results;
  std::lock_guard<std::mutex> lock(mu_);
  results.swap(results_);
  return results;
}

void ReadWorker::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    jobs_.clear();
  }
  work_ready_.notify_all();
  thread_.join();
  wake_out_.reset();
  wake_in_.reset();
}

void ReadWorker::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = 1;
    }
    Result result{std::move(job.routing_id), job.request_id, Status(), {}};
    try {
      result.status = sink_.ExecuteRead(job.args, &result.result.exit_code, &result.result.out, &result.result.err);
    } catch (const std::exception& e) {
      result.status = Status::Internal(std::string("READ ") + (job.args.empty() ? "" : job.args[0]) + ": " + e.what());
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = 0;
      results_.push_back(std::move(result));
    }
    try {
      (void)wake_out_->send(zmq::message_t(), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // The Run loop still finds the result within its poll interval.
    }
  }
}

}  // namespace planb
