// Which staged batches may merge at once (merge_schedule.h): one writer per map, each map's batches in staging
// order, unknown maps touching every map, `alone` batches with nothing beside them.
#include "host/ingest/merge_schedule.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace planb {
namespace {

MergeSchedule::Batch Of(std::vector<std::string> maps) { return MergeSchedule::Batch{std::move(maps), true, false}; }

// Starts every batch NextReady offers, as a merger with `slots` free slots would; returns the indexes started.
std::vector<size_t> StartReady(MergeSchedule* schedule, size_t slots) {
  std::vector<size_t> started;
  while (started.size() < slots) {
    const std::optional<size_t> next = schedule->NextReady();
    if (!next) break;
    schedule->Start(*next);
    started.push_back(*next);
  }
  return started;
}

TEST(MergeSchedule, BatchesOfDifferentMapsGoSideBySide) {
  MergeSchedule schedule;
  schedule.Add(Of({"a"}));
  schedule.Add(Of({"b"}));
  schedule.Add(Of({"c"}));
  EXPECT_EQ(StartReady(&schedule, 2), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(schedule.running(), 2u);
  schedule.Finish(1);
  EXPECT_EQ(StartReady(&schedule, 1), (std::vector<size_t>{2}));
}

TEST(MergeSchedule, AMapsBatchesMergeOneAtATimeInStagingOrder) {
  MergeSchedule schedule;
  schedule.Add(Of({"a"}));       // 0
  schedule.Add(Of({"a"}));       // 1: waits for 0
  schedule.Add(Of({"b"}));       // 2: free
  schedule.Add(Of({"a", "b"}));  // 3: waits for 1 and 2
  schedule.Add(Of({"b"}));       // 4: waits for 3, though b is free once 2 is done
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{0, 2}));
  schedule.Finish(2);
  EXPECT_EQ(StartReady(&schedule, 8), std::vector<size_t>{});
  schedule.Finish(0);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{1}));
  schedule.Finish(1);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{3}));
  schedule.Finish(3);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{4}));
}

// A held back or quarantined batch is finished without starting: the batches behind it move on.
TEST(MergeSchedule, ABatchFinishedWithoutStartingReleasesItsMaps) {
  MergeSchedule schedule;
  schedule.Add(Of({"a"}));
  schedule.Add(Of({"a"}));
  const std::optional<size_t> first = schedule.NextReady();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, 0u);
  schedule.Finish(*first);  // held back, say
  EXPECT_TRUE(schedule.finished(0));
  EXPECT_EQ(schedule.NextReady(), std::optional<size_t>(1));
  EXPECT_EQ(schedule.running(), 0u);
}

TEST(MergeSchedule, ABatchOfUnknownMapsWaitsForEverythingBeforeItAndHoldsEverythingAfter) {
  MergeSchedule schedule;
  schedule.Add(Of({"a"}));
  schedule.Add(MergeSchedule::Batch{{}, /*maps_known=*/false, false});
  schedule.Add(Of({"b"}));
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{0}));
  schedule.Finish(0);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{1}));
  schedule.Finish(1);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{2}));
}

TEST(MergeSchedule, AnAloneBatchRunsWithNothingBesideIt) {
  MergeSchedule schedule;
  schedule.Add(Of({"a"}));
  schedule.Add(MergeSchedule::Batch{{"b"}, true, /*alone=*/true});
  schedule.Add(Of({"c"}));  // free, but behind a batch waiting to be alone
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{0}));
  schedule.Finish(0);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{1}));  // and nothing beside it
  schedule.Finish(1);
  EXPECT_EQ(StartReady(&schedule, 8), (std::vector<size_t>{2}));
}

TEST(MergeSchedule, NothingIsReadyWhenEverythingIsFinished) {
  MergeSchedule schedule;
  EXPECT_FALSE(schedule.NextReady().has_value());
  schedule.Add(Of({"a"}));
  schedule.Start(0);
  schedule.Finish(0);
  EXPECT_FALSE(schedule.NextReady().has_value());
  EXPECT_EQ(schedule.running(), 0u);
}

}  // namespace
}  // namespace planb
