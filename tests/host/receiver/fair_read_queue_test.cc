// The read pool's per-client shares: no client runs on more than half of the threads (at least one), none queues
// more than a quarter of the node's reads, and the others' reads start in arrival order past a saturated client.
#include "host/receiver/fair_read_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace planb {
namespace {

ReadJob Job(const std::string& client, uint64_t id) { return ReadJob{"route", id, {}, {}, client}; }

std::vector<uint64_t> Ids(const std::vector<ReadJob>& jobs) {
  std::vector<uint64_t> ids;
  for (const ReadJob& job : jobs) ids.push_back(job.request_id);
  return ids;
}

TEST(FairReadLimits, HalfTheThreadsAndAQuarterOfTheQueuePerClientAtLeastOne) {
  FairReadLimits three = FairReadLimitsFor(3, 16);
  EXPECT_EQ(three.max_running_per_client, 1u);
  EXPECT_EQ(three.max_pending_per_client, 4u);
  FairReadLimits eight = FairReadLimitsFor(8, 64);
  EXPECT_EQ(eight.max_running_per_client, 4u);
  EXPECT_EQ(eight.max_pending_per_client, 16u);
  FairReadLimits one = FairReadLimitsFor(1, 1);
  EXPECT_EQ(one.max_running_per_client, 1u);
  EXPECT_EQ(one.max_pending_per_client, 1u);
}

TEST(FairReadQueue, AGreedyClientHoldsOneThreadAndTheOthersStartPastItsQueue) {
  FairReadQueue queue(FairReadLimitsFor(3, 16));
  for (uint64_t id = 1; id <= 4; ++id) ASSERT_TRUE(queue.Admit(Job("client greedy", id)).ok());
  const Status fifth = queue.Admit(Job("client greedy", 5));
  EXPECT_EQ(fifth.code(), Code::kFull);
  EXPECT_EQ(fifth.message(),
            "busy: this client has 4 READ requests in progress, the most one client may have (4); retry later");
  EXPECT_EQ(Ids(queue.TakeStartable()), std::vector<uint64_t>{1});  // one thread; two stay idle for the others
  ASSERT_TRUE(queue.Admit(Job("client reader", 10)).ok());
  ASSERT_TRUE(queue.Admit(Job("client other", 20)).ok());
  EXPECT_EQ(Ids(queue.TakeStartable()), (std::vector<uint64_t>{10, 20}));
  EXPECT_TRUE(queue.TakeStartable().empty());  // every thread busy
  queue.Finished("client reader");
  EXPECT_EQ(Ids(queue.TakeStartable()), std::vector<uint64_t>{});  // greedy still runs its one
  queue.Finished("client greedy");
  EXPECT_EQ(Ids(queue.TakeStartable()), std::vector<uint64_t>{2});
  EXPECT_EQ(queue.pending(), 4u);  // 2 and 20 running, 3 and 4 waiting
}

TEST(FairReadQueue, TheNodesOwnBoundHoldsAcrossClients) {
  FairReadQueue queue(FairReadLimitsFor(3, 8));  // two per client
  for (int c = 0; c < 4; ++c) {
    for (uint64_t i = 0; i < 2; ++i) ASSERT_TRUE(queue.Admit(Job("client c" + std::to_string(c), i)).ok());
  }
  const Status full = queue.Admit(Job("client late", 99));
  EXPECT_EQ(full.code(), Code::kFull);
  EXPECT_EQ(full.message(), "busy: 8 READ requests in progress, retry later");
  EXPECT_EQ(queue.TakeStartable().size(), 3u);
}

TEST(FairReadQueue, AFinishedClientIsForgottenAndAnUnknownFinishChangesNothing) {
  FairReadQueue queue(FairReadLimitsFor(3, 16));
  ASSERT_TRUE(queue.Admit(Job("client a", 1)).ok());
  ASSERT_EQ(queue.TakeStartable().size(), 1u);
  queue.Finished("client nobody");
  EXPECT_EQ(queue.pending(), 1u);
  queue.Finished("client a");
  queue.Finished("client a");  // twice: no underflow
  EXPECT_EQ(queue.pending(), 0u);
  for (uint64_t id = 1; id <= 4; ++id) EXPECT_TRUE(queue.Admit(Job("client a", id)).ok()) << id;
}

}  // namespace
}  // namespace planb
