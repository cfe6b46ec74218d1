// A remote read's budget is charged by work: rows, bytes, time, and the node's stop flag, read every 4096 rows or
// every kReadBudgetClockBytes bytes, so that a few huge rows cannot run far past the deadline.
#include "host/common/read_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

ReadBudgetLimits Limits(Clock::time_point deadline, const std::atomic<bool>* stop = nullptr) {
  return ReadBudgetLimits{1000000, uint64_t{1} << 40, deadline, 5000, stop};
}

TEST(ReadBudget, WithoutABudgetNothingIsLimited) {
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(ChargeReadRow(nullptr, uint64_t{1} << 30).ok());
}

TEST(ReadBudget, ABigRowReadsTheClockAtOnce) {
  // A deadline already past: small rows are not checked against it until the 4096th ...
  ReadBudget budget(Limits(Clock::now() - std::chrono::seconds(1)));
  for (int i = 1; i < 4095; ++i) ASSERT_TRUE(budget.ChargeRow(10).ok()) << i;
  EXPECT_FALSE(budget.spent());
  // ... but one row of kReadBudgetClockBytes is (the 4095th, so not for its count).
  const Status s = budget.ChargeRow(kReadBudgetClockBytes);
  EXPECT_EQ(s.code(), Code::kFull);
  EXPECT_EQ(s.message(),
            "remote read cap: ran longer than 5000 ms (the node's remote_read_timeout); narrow it with --where");
  EXPECT_TRUE(budget.spent());
}

TEST(ReadBudget, BytesHaveACapOfTheirOwn) {
  ReadBudgetLimits limits = Limits(Clock::now() + std::chrono::hours(1));
  limits.max_bytes_examined = 100;
  ReadBudget budget(limits);
  EXPECT_TRUE(budget.ChargeRow(60).ok());
  EXPECT_TRUE(budget.ChargeRow(40).ok());
  const Status s = budget.ChargeRow(1);
  EXPECT_EQ(s.code(), Code::kFull);
  EXPECT_EQ(s.message(),
            "remote read cap: more than 100 bytes examined (the node's max_remote_bytes_examined); narrow it with "
            "--where");
}

TEST(ReadBudget, RowsHaveTheirCap) {
  ReadBudgetLimits limits = Limits(Clock::now() + std::chrono::hours(1));
  limits.max_rows_examined = 3;
  ReadBudget budget(limits);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(budget.ChargeRow(0).ok());
  EXPECT_EQ(budget.ChargeRow(0).message(),
            "remote read cap: more than 3 rows examined (the node's max_remote_rows_examined); narrow it with --where");
}

TEST(ReadBudget, TheNodesStopEndsTheReadAtTheNextCheck) {
  std::atomic<bool> stop{false};
  ReadBudget budget(Limits(Clock::now() + std::chrono::hours(1), &stop));
  EXPECT_TRUE(budget.ChargeRow(kReadBudgetClockBytes).ok());
  stop = true;
  const Status s = budget.ChargeRow(kReadBudgetClockBytes);
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_EQ(s.message(), "remote read cap: the node is stopping; the read was ended, try another node");
}

TEST(ReadBudget, EachRequestHasItsOwn) {
  ReadBudgetLimits limits = Limits(Clock::now() + std::chrono::hours(1));
  limits.max_rows_examined = 1;
  ReadBudget spent(limits);
  EXPECT_TRUE(spent.ChargeRow(0).ok());
  EXPECT_FALSE(spent.ChargeRow(0).ok());
  EXPECT_TRUE(spent.spent());
  ReadBudget fresh(limits);  // the same thread, another request
  EXPECT_FALSE(fresh.spent());
  EXPECT_TRUE(fresh.ChargeRow(0).ok());
}

}  // namespace
}  // namespace planb
