#include "host/common/read_budget.h"

namespace planb {

namespace {

struct Budget {
  bool active = false;
  ReadBudgetLimits limits;
  uint64_t rows = 0;
  uint64_t bytes = 0;
  uint64_t bytes_at_last_check = 0;
  bool spent = false;
};

thread_local Budget budget;

Status Spent(Code code, const std::string& why) {
  budget.spent = true;
  return Status(code, "remote read cap: " + why);
}

}  // namespace

ScopedReadBudget::ScopedReadBudget(const ReadBudgetLimits& limits) {
  budget = Budget{};
  budget.active = true;
  budget.limits = limits;
}

ScopedReadBudget::~ScopedReadBudget() { budget = Budget{}; }

Status ChargeReadRow(uint64_t bytes) {
  if (!budget.active) return Status::Ok();
  ++budget.rows;
  budget.bytes += bytes;
  if (budget.rows > budget.limits.max_rows_examined) {
    return Spent(Code::kFull, "more than " + std::to_string(budget.limits.max_rows_examined) +
                                  " rows examined (the node's max_remote_rows_examined); narrow it with --where");
  }
  if (budget.bytes > budget.limits.max_bytes_examined) {
    return Spent(Code::kFull, "more than " + std::to_string(budget.limits.max_bytes_examined) +
                                  " bytes examined (the node's max_remote_bytes_examined); narrow it with --where");
  }
  // Checking the clock per row would cost more than a small row: every 4096 rows, or sooner when the rows are
  // big (read_budget.h).
  if ((budget.rows & 4095) != 0 && budget.bytes - budget.bytes_at_last_check < kReadBudgetClockBytes) {
    return Status::Ok();
  }
  budget.bytes_at_last_check = budget.bytes;
  if (budget.limits.stop != nullptr && budget.limits.stop->load(std::memory_order_relaxed)) {
    return Spent(Code::kIOError, "the node is stopping; the read was ended, try another node");
  }
  if (std::chrono::steady_clock::now() > budget.limits.deadline) {
    return Spent(Code::kFull, "ran longer than " + std::to_string(budget.limits.timeout_ms) +
                                  " ms (the node's remote_read_timeout); narrow it with --where");
  }
  return Status::Ok();
}

bool ReadBudgetSpent() { return budget.spent; }

}  // namespace planb
