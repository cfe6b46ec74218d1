// A per-thread cost cap for one read request that a peer sent (a storage node's remote READ): how many rows and
// bytes it may examine, until when it may run, and a stop flag (the node's shutdown). The node sets it around the
// request; the scan charges each row with its size and stops with a clear error naming the cap once it is
// spent. Unset (the default, and every local command), it costs one thread-local load per row and limits
// nothing.
// Work is charged by what it costs, not by count alone: one row of a few megabytes, decoded and compared
// against a long `contains`, costs what thousands of small rows do. So the clock and the stop flag are read every
// 4096 rows or every kReadBudgetClockBytes bytes charged, whichever comes first: a read overruns its deadline
// by at most that much work (about a millisecond), never by a whole scan.
// Thread-safety: per thread by construction (thread_local); a ScopedReadBudget applies to its own thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "planb/status.h"

namespace planb {

// Bytes charged between two reads of the clock (and of the stop flag).
inline constexpr uint64_t kReadBudgetClockBytes = 1 << 20;

struct ReadBudgetLimits {
  uint64_t max_rows_examined = 0;   // REQUIRES: above 0
  uint64_t max_bytes_examined = 0;  // REQUIRES: above 0; keys and values of the rows examined
  std::chrono::steady_clock::time_point deadline;
  int64_t timeout_ms = 0;                        // for the message: the cap the deadline came from
  const std::atomic<bool>* stop = nullptr;      // when set and true, the read ends ("the node is stopping")
};

// Installs `limits` for the current thread until destroyed (then none again). Not nestable.
class ScopedReadBudget {
 public:
  explicit ScopedReadBudget(const ReadBudgetLimits& limits);
  ~ScopedReadBudget();
  ScopedReadBudget(const ScopedReadBudget&) = delete;
  ScopedReadBudget& operator=(const ScopedReadBudget&) = delete;
};

// Charges one examined row of `bytes` (its key and value as stored) to this thread's budget: OK without a budget
// or while it lasts; else kFull "remote read cap: more than N rows examined (max_remote_rows_examined) ...",
// "... more than N bytes examined (max_remote_bytes_examined) ...", "... ran longer than N ms
// (remote_read_timeout) ..." or kIOError "... the node is stopping".
Status ChargeReadRow(uint64_t bytes);

// Whether this thread's budget ran out (a charge failed) since it was installed.
bool ReadBudgetSpent();

}  // namespace planb
