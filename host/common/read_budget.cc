#include "host/common/read_budget.h"

namespace planb {

namespace {

struct Budget {
  bool active = false;
  ReadBudgetLimits limits;
  uint64_t rows = 0;
  bool spent = false;
};

thread_local Budget budget;

}  // namespace

ScopedReadBudget::ScopedReadBudget(const ReadBudgetLimits& limits) { budget = Budget{true, limits, 0, false}; }

ScopedReadBudget::~ScopedReadBudget() { budget = Budget{}; }

Status ChargeReadRow() {
  if (!budget.active) return Status::Ok();
  ++budget.rows;
  if (budget.rows > budget.limits.max_rows_examined) {
    budget.spent = true;
    return Status(Code::kFull, "remote read cap: more than " + std::to_string(budget.limits.max_rows_examined) +
                                   " rows examined (the node's max_remote_rows_examined); narrow it with --where");
  }
  // Checking the clock per row would cost more than the row: every 4096 rows is well under a millisecond apart.
  if ((budget.rows & 4095) == 0 && std::chrono::steady_clock::now() > budget.limits.deadline) {
    budget.spent = true;
    return Status(Code::kFull, "remote read cap: ran longer than " + std::to_string(budget.limits.timeout_ms) +
                                   " ms (the node's remote_read_timeout); narrow it with --where");
  }
  return Status::Ok();
}

bool ReadBudgetSpent() { return budget.spent; }

}  // namespace planb
