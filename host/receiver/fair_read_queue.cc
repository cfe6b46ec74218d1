#include "host/receiver/fair_read_queue.h"

#include <algorithm>
#include <utility>

namespace planb {

FairReadLimits FairReadLimitsFor(size_t workers, size_t max_pending) {
  FairReadLimits limits;
  limits.workers = std::max<size_t>(workers, 1);
  limits.max_pending = std::max<size_t>(max_pending, 1);
  limits.max_running_per_client = std::max<size_t>(limits.workers / 2, 1);
  limits.max_pending_per_client = std::max<size_t>(limits.max_pending / 4, 1);
  return limits;
}

Status FairReadQueue::Admit(ReadJob job) {
  if (pending() >= limits_.max_pending) {
    return Status(Code::kFull, "busy: " + std::to_string(pending()) + " READ requests in progress, retry later");
  }
  ClientCounts& counts = clients_[job.client];
  if (counts.waiting + counts.running >= limits_.max_pending_per_client) {
    return Status(Code::kFull, "busy: this client has " + std::to_string(counts.waiting + counts.running) +
                                   " READ requests in progress, the most one client may have (" +
                                   std::to_string(limits_.max_pending_per_client) + "); retry later");
  }
  ++counts.waiting;
  waiting_.push_back(std::move(job));
  return Status::Ok();
}

std::vector<ReadJob> FairReadQueue::TakeStartable() {
  std::vector<ReadJob> start;
  for (auto it = waiting_.begin(); it != waiting_.end() && running_total_ < limits_.workers;) {
    ClientCounts& counts = clients_[it->client];
    if (counts.running >= limits_.max_running_per_client) {
      ++it;
      continue;
    }
    --counts.waiting;
    ++counts.running;
    ++running_total_;
    start.push_back(std::move(*it));
    it = waiting_.erase(it);
  }
  return start;
}

void FairReadQueue::Finished(const std::string& client) {
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.running == 0) return;
  --it->second.running;
  --running_total_;
  Forget(client);
}

void FairReadQueue::Forget(const std::string& client) {
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.waiting == 0 && it->second.running == 0) clients_.erase(it);
}

}  // namespace planb
