#include "host/reader/remote_pool.h"

namespace planb {

RemotePool::RemotePool(const ClusterConfig& cluster, size_t capacity) : cluster_(cluster), capacity_(capacity) {}

RemotePool::~RemotePool() {
  // Every lease has ended (the Reader is destroyed with no lookup running): close the sockets before the context.
  idle_.clear();
}

RemotePool::Lease RemotePool::Take() {
  std::unique_lock<std::mutex> lock(mutex_);
  returned_.wait(lock, [this] { return !idle_.empty() || made_ < capacity_; });
  if (!idle_.empty()) {
    std::unique_ptr<Pooled> pooled = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(pooled));
  }
  ++made_;
  lock.unlock();
  auto pooled = std::make_unique<Pooled>();
  pooled->reader = std::make_unique<RemoteReader>(context_, cluster_);
  return Lease(this, std::move(pooled));
}

void RemotePool::Return(std::unique_ptr<Pooled> pooled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t made = pooled->reader->connections_made();
    connections_made_ += made - pooled->counted;
    pooled->counted = made;
    idle_.push_back(std::move(pooled));
  }
  returned_.notify_one();
}

uint64_t RemotePool::connections_made() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_made_;
}

}  // namespace planb
