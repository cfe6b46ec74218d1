// A per-thread cost cap for one read request that a peer sent (a storage node's remote READ): how many rows it
// may examine and until when it may run. The node sets it around the request; the scan charges each row and
// stops with a clear error naming the cap once it is spent. Unset (the default, and every local command), it
// costs one thread-local load per row and limits nothing.
// Thread-safety: per thread by construction (thread_local); a ScopedReadBudget applies to its own thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

struct ReadBudgetLimits {
  uint64_t max_rows_examined = 0;  // REQUIRES: above 0
  std::chrono::steady_clock::time_point deadline;
  int64_t timeout_ms = 0;  // for the message: the cap the deadline came from
};

// Installs `limits` for the current thread until destroyed (then none again). Not nestable.
class ScopedReadBudget {
 public:
  explicit ScopedReadBudget(const ReadBudgetLimits& limits);
  ~ScopedReadBudget();
  ScopedReadBudget(const ScopedReadBudget&) = delete;
  ScopedReadBudget& operator=(const ScopedReadBudget&) = delete;
};

// Charges one examined row to this thread's budget: OK without a budget or while it lasts; else kFull
// "remote read cap: more than N rows examined (max_remote_rows_examined) ..." or "... ran longer than N ms
// (remote_read_timeout) ...". The clock is read once every 4096 rows.
Status ChargeReadRow();

// Whether this thread's budget ran out (a charge failed) since it was installed.
bool ReadBudgetSpent();

}  // namespace planb
