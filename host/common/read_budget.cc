#include "host/common/read_budget.h"

namespace planb {

Status ReadBudget::Spent(Code code, const std::string& why) {
  spent_ = true;
  return Status(code, "remote read cap: " + why);
}

Status ReadBudget::ChargeRow(uint64_t bytes) {
  ++rows_;
  bytes_ += bytes;
  if (rows_ > limits_.max_rows_examined) {
    return Spent(Code::kFull, "more than " + std::to_string(limits_.max_rows_examined) +
                                  " rows examined (the node's max_remote_rows_examined); narrow it with --where");
  }
  if (bytes_ > limits_.max_bytes_examined) {
    return Spent(Code::kFull, "more than " + std::to_string(limits_.max_bytes_examined) +
                                  " bytes examined (the node's max_remote_bytes_examined); narrow it with --where");
  }
  // Checking the clock per row would cost more than a small row: every 4096 rows, or sooner when the rows are
  // big (read_budget.h).
  if ((rows_ & 4095) != 0 && bytes_ - bytes_at_last_check_ < kReadBudgetClockBytes) return Status::Ok();
  bytes_at_last_check_ = bytes_;
  if (limits_.stop != nullptr && limits_.stop->load(std::memory_order_relaxed)) {
    return Spent(Code::kIOError, "the node is stopping; the read was ended, try another node");
  }
  if (std::chrono::steady_clock::now() > limits_.deadline) {
    return Spent(Code::kFull, "ran longer than " + std::to_string(limits_.timeout_ms) +
                                  " ms (the node's remote_read_timeout); narrow it with --where");
  }
  return Status::Ok();
}

}  // namespace planb
