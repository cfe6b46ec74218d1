// Reader::Stats on a single node (shards) and on a reader node (snapshots of a real `planb serve`): every answer
// is counted once as found, miss or error, single and batched, on any thread, and counts survive the thread
// that made them; unknown maps and keys of the wrong kind are counted; the content version and the snapshot's
// install time are what lookups read; refreshes and failed refreshes are counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "host/common/iso_time.h"
#include "planb/reader.h"
#include "support/cluster_fixture.h"
#include "support/reader_fixture.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::TimedRef;

const MapStats& Of(const ReaderStats& stats, const std::string& map) {
  for (const MapStats& m : stats.maps) {
    if (m.map == map) return m;
  }
  ADD_FAILURE() << "no stats for map " << map;
  static const MapStats none;
  return none;
}


TEST(ReaderStats, EveryAnswerIsCountedOnceAsFoundMissOrError) {
  CliEnv env(testing::kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write(
      "typed.xml", ReferenceData(Lines({TimedRef("st_hashed", "", "Paris", "France"),
                                        TimedRef("st_hashed", "", "Lyon", "France"),
                                        RangeRef("rg", "", "1", "100", "outer")})))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);

  ReaderStats before = reader->Stats();
  EXPECT_EQ(Of(before, "st_hashed").lookups, 0u);
  EXPECT_FALSE(Of(before, "st_hashed").serving) << "nothing looked up yet";
  EXPECT_FALSE(Of(before, "st_hashed").content_version.has_value());

  EXPECT_TRUE(reader->Lookup("st_hashed", "Paris").found());
  EXPECT_EQ(reader->Lookup("st_hashed", "Rome").code, Code::kNotFound);
  EXPECT_EQ(reader->Lookup("st_hashed", int64_t{5}).code, Code::kInvalidArgument);  // wrong kind of key
  EXPECT_EQ(reader->Lookup("st_hashed", "Paris", LookupTime::At(0)).code, Code::kInvalidArgument);  // no time
  EXPECT_EQ(reader->Lookup("tm_unused", "k").code, Code::kNoData);
  EXPECT_EQ(reader->Lookup("no_such_map", "k").code, Code::kInvalidArgument);
  ReaderKey keys[4];
  keys[0].key = "Lyon";
  keys[1].key = "Oslo";
  keys[2].number = 7;  // wrong kind in a text-keyed batch: only its own result fails
  keys[3].key = "Paris";
  LookupResult results[4];
  EXPECT_EQ(reader->LookupMany("st_hashed", keys, 4, results), Code::kInvalidArgument);
  EXPECT_EQ(reader->LookupMany("no_such_map", keys, 4, results), Code::kInvalidArgument);
  EXPECT_EQ(reader->LookupMany("tm_unused", keys, 2, results), Code::kNoData);
  // Another thread's lookups, counted after it exited (its context is freed with it).
  std::thread([&] {
    EXPECT_TRUE(reader->Lookup("rg", int64_t{50}).found());
    EXPECT_EQ(reader->Lookup("rg", int64_t{500}).code, Code::kNotFound);
  }).join();

  const ReaderStats stats = reader->Stats();
  const MapStats& st = Of(stats, "st_hashed");
  EXPECT_EQ(st.found, 1u + 2u);   // Paris; Lyon and Paris of the batch
  EXPECT_EQ(st.misses, 1u + 1u);  // Rome; Oslo
  EXPECT_EQ(st.errors, 2u + 1u);  // the number key, the time; the batch's number key
  EXPECT_EQ(st.lookups, st.found + st.misses + st.errors);
  EXPECT_TRUE(st.serving);
  EXPECT_FALSE(st.reads_snapshot) << "a single node reads its shards";
  ASSERT_TRUE(st.content_version.has_value());
  EXPECT_EQ(*st.content_version, 1u) << "one batch merged";
  EXPECT_FALSE(st.snapshot_created_ms.has_value());
  const MapStats& unused = Of(stats, "tm_unused");
  EXPECT_EQ(unused.errors, 1u + 2u);
  EXPECT_EQ(unused.found + unused.misses, 0u);
  EXPECT_FALSE(unused.serving);
  const MapStats& rg = Of(stats, "rg");
  EXPECT_EQ(rg.found, 1u);
  EXPECT_EQ(rg.misses, 1u);
  EXPECT_EQ(stats.unknown_map_lookups, 1u + 4u);

  // A merge moves the content version lookups read, and the next Stats says so.
  const ProcessResult more = env.Load({env.Write(
      "more.xml", ReferenceData(Lines({TimedRef("st_hashed", "", "Oslo", "Norway")})))});
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(Of(reader->Stats(), "st_hashed").content_version.value_or(0), 2u);
}

// Counts from many threads at once add up exactly: each thread writes only its own counters.
TEST(ReaderStats, ConcurrentLookupsAddUp) {
  CliEnv env(testing::kTypedMapsConfig);
  const ProcessResult load = env.Load(
      {env.Write("one.xml", ReferenceData(Lines({TimedRef("st_hashed", "", "Paris", "France")})))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  constexpr int kThreads = 4, kRounds = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        (void)reader->Lookup("st_hashed", "Paris");
        (void)reader->Lookup("st_hashed", "Nowhere");
      }
    });
  }
  // Stats while they run: never more than what was asked, counters only grow.
  uint64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    const uint64_t now = Of(reader->Stats(), "st_hashed").lookups;
    EXPECT_GE(now, last);
    EXPECT_LE(now, uint64_t{2} * kThreads * kRounds);
    last = now;
  }
  for (std::thread& t : threads) t.join();
  const MapStats st = Of(reader->Stats(), "st_hashed");  // a copy: the ReaderStats is a temporary
  EXPECT_EQ(st.found, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(st.misses, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(st.errors, 0u);
}

constexpr char kMap[] = "country_to_capital";


TEST(ReaderStats, ASnapshotReaderSaysWhatItServesAndCountsRefreshes) {
  testing::ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  testing::LoadAtlantis(cluster, "Poseidonia");
  std::unique_ptr<Reader> reader =
      testing::OpenTestReader(cluster.WriteReaderConfig("reader", "min_time_to_keep_snapshots = 0s\n"), cluster.ReaderHome("reader"));
  ASSERT_NE(reader, nullptr);
  const int64_t before_fetch = CurrentTimeMs();
  ASSERT_EQ(reader->Lookup(kMap, "Atlantis").value.view(), "Poseidonia");
  MapStats st = Of(reader->Stats(), kMap);
  EXPECT_TRUE(st.serving);
  EXPECT_TRUE(st.reads_snapshot);
  ASSERT_TRUE(st.snapshot_created_ms.has_value());
  EXPECT_GE(*st.snapshot_created_ms, before_fetch - 1000) << "installed by this lookup's fetch";
  EXPECT_LE(*st.snapshot_created_ms, CurrentTimeMs());
  EXPECT_EQ(st.content_version.value_or(0), 1u);
  EXPECT_EQ(st.refreshes, 0u);
  const int64_t first_created = *st.snapshot_created_ms;

  testing::LoadAtlantis(cluster, "Metropolis");
  ASSERT_TRUE(reader->Refresh(kMap).ok());
  EXPECT_EQ(reader->Lookup(kMap, "Atlantis").value.view(), "Metropolis");
  st = Of(reader->Stats(), kMap);
  EXPECT_EQ(st.refreshes, 1u);
  EXPECT_EQ(st.content_version.value_or(0), 2u);
  ASSERT_TRUE(st.snapshot_created_ms.has_value());
  EXPECT_GE(*st.snapshot_created_ms, first_created);
  EXPECT_EQ(st.refresh_failures, 0u);
  EXPECT_EQ(st.last_refresh_error, "");

  // The storage node goes away: the refresh fails, is counted and said, and the old snapshot keeps serving.
  cluster.process(0).Stop();
  const Status failed = reader->Refresh(kMap);
  ASSERT_FALSE(failed.ok());
  st = Of(reader->Stats(), kMap);
  EXPECT_EQ(st.refresh_failures, 1u);
  EXPECT_EQ(st.last_refresh_error, failed.message());
  EXPECT_EQ(st.refreshes, 1u);
  EXPECT_EQ(reader->Lookup(kMap, "Atlantis").value.view(), "Metropolis");
  EXPECT_EQ(Of(reader->Stats(), kMap).found, 3u);
}

}  // namespace
}  // namespace planb
