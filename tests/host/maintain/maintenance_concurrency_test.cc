// Lookups while maintenance runs: passes that delete rows and compact the shard (every pass, with
// reclaim_free_share = 0) swap the shard's files under readers, and lookups through the runtime's environments
// still answer right all along (a reader holding the old environment reads the old files; the next open gets the
// new ones). Merges cannot run meanwhile: both take merging/.lock.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "host/common/iso_time.h"
#include "host/ingest/merge_processor.h"
#include "host/maintain/maintenance_runner.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::LookupShard;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StageRows;
using ::planb::testing::StateMapSection;
using ::planb::testing::TempDir;

TEST(MaintenanceConcurrency, LookupsAnswerRightWhilePassesCompactAndSwapTheShard) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  ASSERT_TRUE(OpenTestRuntime(dir.path(), StateMapSection("m", "hashed", "reclaim_free_share = 0\n"), &runtime).ok());
  for (int batch = 0; batch < 3; ++batch) {  // rewrites leave free pages: every pass has something to reclaim
    std::vector<std::pair<std::string, std::string>> rows;
    for (int i = 0; i < 3000; ++i) rows.emplace_back("key-" + std::to_string(i), "value-" + std::to_string(i));
    rows.emplace_back("batch", std::to_string(batch));
    ASSERT_TRUE(StageRows(*runtime, "m", rows).ok());
    MergeReport report;
    ASSERT_TRUE(MergeProcessor(*runtime).MergePending(&report).ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int> reclaimed{0};
  std::thread maintainer([&] {
    for (int pass = 0; pass < 15; ++pass) {
      MaintenanceOptions options;
      options.now_ms = CurrentTimeMs();
      MaintenanceReport report;
      const Status s = RunMaintenance(*runtime, options, &report);
      EXPECT_TRUE(s.ok()) << s.message();
      for (const MapMaintenanceReport& map : report.maps) reclaimed += map.reclaimed ? 1 : 0;
    }
    done = true;
  });
  int lookups = 0;
  while (!done || lookups < 200) {
    const int i = lookups % 3000;
    std::string value;
    ASSERT_EQ(LookupShard(*runtime, "m", "key-" + std::to_string(i), &value), Code::kOk) << "lookup " << lookups;
    ASSERT_EQ(value, "value-" + std::to_string(i));
    ++lookups;
  }
  maintainer.join();
  EXPECT_GE(reclaimed.load(), 5) << "the passes did not swap the shard under the lookups";
  std::string value;
  EXPECT_EQ(LookupShard(*runtime, "m", "batch", &value), Code::kOk);
  EXPECT_EQ(value, "2");
}

}  // namespace
}  // namespace planb
