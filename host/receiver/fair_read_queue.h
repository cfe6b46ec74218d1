// The READ requests a storage node has taken, queued per client and started on the read pool so that no client
// holds more than half of its threads (at least one): one client's slow queries, however many it sends, leave
// the other threads to everybody else's lookups. A client may also have only so many reads queued or running,
// so that one client cannot fill the node's whole queue. Jobs start in arrival order among clients that are
// below their share.
// Thread-safety: the receiver's Run thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "host/receiver/read_worker.h"
#include "planb/status.h"

namespace planb {

struct FairReadLimits {
  size_t workers = kReadThreads;  // threads of the read pool
  size_t max_pending = 16;        // reads queued or running, all clients together
  size_t max_pending_per_client = 4;
  size_t max_running_per_client = 1;
};

// The per-client bounds a pool of `workers` threads and `max_pending` reads gets: half of each (at least one).
FairReadLimits FairReadLimitsFor(size_t workers, size_t max_pending);

class FairReadQueue {
 public:
  explicit FairReadQueue(FairReadLimits limits) : limits_(limits) {}

  // Takes `job` (whose `client` names its client) or, over a bound, kFull "busy: ..." saying which bound, so
  // that the client retries or tries another node.
  Status Admit(ReadJob job);
  // The jobs that may start now, in arrival order: as many as there are idle threads, each from a client below
  // its running share. Each counts as running until Finished.
  std::vector<ReadJob> TakeStartable();
  // A job of `client` ended (answered or failed).
  void Finished(const std::string& client);

  size_t pending() const { return waiting_.size() + running_total_; }

 private:
  struct ClientCounts {
    size_t waiting = 0;
    size_t running = 0;
  };
  void Forget(const std::string& client);

  FairReadLimits limits_;
  std::deque<ReadJob> waiting_;
  std::map<std::string, ClientCounts> clients_;
  size_t running_total_ = 0;
};

}  // namespace planb
