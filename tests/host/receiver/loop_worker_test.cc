// LoopWorker: jobs run on its thread in order, results come back through TakeResults, the wake-up socket becomes
// readable when they wait, and a throwing job still yields a result.
#include "host/receiver/loop_worker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace planb {
namespace {

using Worker = LoopWorker<int, std::string>;

// Collects results until `count` arrived, polling the wake-up socket as the receiver's loop does; the deadline
// only bounds a failing test.
std::vector<std::string> Collect(Worker& worker, size_t count) {
  std::vector<std::string> all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(worker.wake_socket()), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    for (std::string& r : worker.TakeResults()) all.push_back(std::move(r));
  }
  return all;
}

TEST(LoopWorker, RunsJobsInOrderAndWakesTheLoop) {
  zmq::context_t context;
  Worker worker(
      "test worker", [](int& job) { return "job " + std::to_string(job); },
      [](int&, const std::exception& e) { return std::string("failed: ") + e.what(); });
  ASSERT_TRUE(worker.Start(context).ok());
  for (int i = 0; i < 20; ++i) worker.Submit(i);
  const std::vector<std::string> results = Collect(worker, 20);
  ASSERT_EQ(results.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(results[i], "job " + std::to_string(i));
  EXPECT_EQ(worker.pending(), 0u);
  worker.Stop();
}

TEST(LoopWorker, AThrowingJobYieldsItsFailureResultAndTheThreadGoesOn) {
  zmq::context_t context;
  Worker worker(
      "test worker",
      [](int& job) -> std::string {
        if (job == 1) throw std::runtime_error("job one broke");
        return "ok " + std::to_string(job);
      },
      [](int& job, const std::exception& e) { return "failed " + std::to_string(job) + ": " + e.what(); });
  ASSERT_TRUE(worker.Start(context).ok());
  worker.Submit(0);
  worker.Submit(1);
  worker.Submit(2);
  EXPECT_EQ(Collect(worker, 3), (std::vector<std::string>{"ok 0", "failed 1: job one broke", "ok 2"}));
}

}  // namespace
}  // namespace planb
