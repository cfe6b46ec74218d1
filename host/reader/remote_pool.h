// The connections of a Reader in remote mode (ReaderOptions::remote): RemoteReaders (remote_read.h), each holding
// one connection per storage node it has asked, kept open across lookups so that a lookup pays a round trip, not
// a connect and (with CURVE) a handshake. A lookup leases an idle one, or makes one while fewer than `capacity`
// exist, else waits until one comes back: threads looking up at once hold at most `capacity` of them, and a lone
// thread reuses the same one for every lookup.
// Thread-safety: all methods; a leased RemoteReader is its lessee's alone until the lease ends.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/transfer/remote_read.h"

namespace planb {

class RemotePool {
 public:
  // REQUIRES: capacity >= 1; `cluster` outlives the pool.
  RemotePool(const ClusterConfig& cluster, size_t capacity);
  ~RemotePool();
  RemotePool(const RemotePool&) = delete;
  RemotePool& operator=(const RemotePool&) = delete;

  struct Pooled {
    std::unique_ptr<RemoteReader> reader;
    uint64_t counted = 0;  // its connections_made() already added to the pool's total
  };

  // A RemoteReader leased until the lease is destroyed, when it goes back to the pool.
  class Lease {
   public:
    Lease(RemotePool* pool, std::unique_ptr<Pooled> pooled) : pool_(pool), pooled_(std::move(pooled)) {}
    Lease(Lease&&) = default;
    ~Lease() {
      if (pooled_ != nullptr) pool_->Return(std::move(pooled_));
    }
    RemoteReader& reader() { return *pooled_->reader; }

   private:
    RemotePool* pool_;
    std::unique_ptr<Pooled> pooled_;
  };

  Lease Take();

  // Connections made (each with its handshake) by the readers returned so far.
  uint64_t connections_made() const;
  size_t capacity() const { return capacity_; }

 private:
  void Return(std::unique_ptr<Pooled> pooled);

  zmq::context_t context_;  // first: destroyed after every socket of the readers below
  const ClusterConfig& cluster_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Pooled>> idle_;
  size_t made_ = 0;
  uint64_t connections_made_ = 0;
};

}  // namespace planb
