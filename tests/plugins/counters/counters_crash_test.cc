// kill -9 at each merge fault point (PLANB_FAULT, host/common/fault_point.h) while a batch of histogram and metric
// rows merges, then the merge again (as a restarted node does with what is still staged): every count as if the
// batch had merged once.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "host/common/file_util.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "plugins/counters/bucket_fixture.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::Bucket;
using ::planb::testing::CountEvent;
using ::planb::testing::GetBucket;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::TempDir;

constexpr char kConfig[] =
    "[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 1m\n"
    "[map.lat]\ntype = metric\nscheme = lookup_table\nbucket = 1m\n";

// One batch holding `events` for both maps (histogram: no <value>; metric: the event's value), staged.
Status StageBoth(Runtime& runtime, const std::vector<CountEvent>& events) {
  static std::atomic<int> counter{0};
  const std::string stream = "crash-stream-" + std::to_string(++counter);
  StreamWriter writer(runtime.catalog(), runtime.home().writer() + "/" + stream);
  for (const CountEvent& event : events) {
    Record record = ::planb::testing::ToRecord(event);
    PLANB_RETURN_IF_ERROR(writer.Add("lat", record));
    record.has_value = false;
    PLANB_RETURN_IF_ERROR(writer.Add("hits", record));
  }
  PLANB_RETURN_IF_ERROR(writer.Finish());
  const std::string zip = writer.dir() + ".zip";
  PLANB_RETURN_IF_ERROR(ZipBatch(writer.dir(), zip, ZipOptions{/*compress=*/false, /*batch_id=*/"test/" + stream}));
  uint64_t staged = 0;
  PLANB_RETURN_IF_ERROR(StagingStore(runtime.home()).Stage(zip, &staged));
  return RemoveTree(writer.dir());
}

Status MergeAll(Runtime& runtime) {
  MergeReport report;
  return MergeProcessor(runtime).MergePending(&report);
}

std::unique_ptr<Runtime> Open(const TempDir& dir) {
  std::unique_ptr<Runtime> runtime;
  const Status s = OpenTestRuntime(dir.path(), kConfig, &runtime);
  EXPECT_TRUE(s.ok()) << s.message();
  return runtime;
}

Bucket At(Runtime& runtime, const std::string& map, const std::string& key, int64_t time) {
  std::shared_ptr<MapEnv> shard;
  const Status s = runtime.OpenShard(map, &shard);
  EXPECT_TRUE(s.ok()) << s.message();
  return shard == nullptr ? Bucket() : GetBucket(*shard, key, time);
}

class CountersCrash : public ::testing::TestWithParam<const char*> {};

TEST_P(CountersCrash, AMergeKilledAndRunAgainCountsTheBatchOnce) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime = Open(dir);
  ASSERT_NE(runtime, nullptr);
  // Shards exist first, so that the batch below merges in write transactions (not a first move into place).
  ASSERT_TRUE(StageBoth(*runtime, {{"k", 0, "1.5"}}).ok());
  ASSERT_TRUE(MergeAll(*runtime).ok());
  ASSERT_TRUE(StageBoth(*runtime, {{"k", 1, "2.5"}, {"k", 2, "4"}, {"j", 70000, "8"}}).ok());
  runtime.reset();  // the child opens the shards itself; one process must not hold them twice
  const char* point = GetParam();
  EXPECT_EXIT(
      {
        ::setenv("PLANB_FAULT", point, 1);
        std::unique_ptr<Runtime> child = Open(dir);
        (void)MergeAll(*child);
        std::exit(0);  // not reached: the fault point kills the process
      },
      ::testing::KilledBySignal(SIGKILL), "");
  runtime = Open(dir);
  ASSERT_TRUE(MergeAll(*runtime).ok());  // what a restarted node does with what is still staged
  EXPECT_EQ(At(*runtime, "hits", "k", 0).count, 3);
  EXPECT_EQ(At(*runtime, "hits", "j", 60000).count, 1);
  const Bucket lat = At(*runtime, "lat", "k", 59999);
  EXPECT_EQ(lat.count, 3);
  EXPECT_EQ(lat.sum, 8);
  EXPECT_EQ(lat.min, 1.5);
  EXPECT_EQ(lat.max, 4);
  EXPECT_EQ(At(*runtime, "lat", "j", 60000).sum, 8);
  // Nothing is left staged to merge a third time.
  ASSERT_TRUE(MergeAll(*runtime).ok());
  EXPECT_EQ(At(*runtime, "hits", "k", 0).count, 3);
}

INSTANTIATE_TEST_SUITE_P(FaultPoints, CountersCrash,
                         ::testing::Values("merge.mid_batch", "merge.before_commit", "merge.after_commit"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace planb
