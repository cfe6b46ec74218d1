// The cost cap of one read request that a peer sent (a storage node's remote READ): how many rows and bytes it may
// examine, until when it may run, and a stop flag (the node's shutdown). The node makes one per request and hands
// it to the read functions, which charge each row examined with its size and stop with a clear error naming the
// cap once it is spent. Local commands pass none (nullptr): nothing is limited.
// Work is charged by what it costs, not by count alone: one row of a few megabytes, decoded and compared
// against a long `contains`, costs what thousands of small rows do. So the clock and the stop flag are read every
// 4096 rows or every kReadBudgetClockBytes bytes charged, whichever comes first: a read overruns its deadline
// by at most that much work (about a millisecond), never by a whole scan.
// Thread-safety: one request's, used by the thread running it.
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

class ReadBudget {
 public:
  explicit ReadBudget(const ReadBudgetLimits& limits) : limits_(limits) {}

  // Charges one examined row of `bytes` (its key and value as stored): OK while the budget lasts; else kFull
  // "remote read cap: more than N rows examined (max_remote_rows_examined) ...", "... more than N bytes examined
  // (max_remote_bytes_examined) ...", "... ran longer than N ms (remote_read_timeout) ..." or kIOError "... the
  // node is stopping".
  Status ChargeRow(uint64_t bytes);

  // Whether a charge failed: the request's output is partial and must not be sent.
  bool spent() const { return spent_; }

 private:
  Status Spent(Code code, const std::string& why);

  ReadBudgetLimits limits_;
  uint64_t rows_ = 0;
  uint64_t bytes_ = 0;
  uint64_t bytes_at_last_check_ = 0;
  bool spent_ = false;
};

// Charges `budget` when there is one (a remote READ); OK without (a local command).
inline Status ChargeReadRow(ReadBudget* budget, uint64_t bytes) {
  return budget == nullptr ? Status::Ok() : budget->ChargeRow(bytes);
}

}  // namespace planb
