// planb::Reader on a node that is not a storage node: lookups read a local snapshot fetched from a real
// `planb serve` on loopback; maintenance (called, or on the Reader's own thread) fetches a newer snapshot once the
// old one is due and switches lookups to it; an old snapshot keeps answering while the storage node is gone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "planb/reader.h"
#include "support/cluster_fixture.h"
#include "support/reader_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using testing::ClusterFixture;
using ::testing::HasSubstr;
using testing::LoadAtlantis;
using testing::ProcessResult;

constexpr char kMap[] = "country_to_capital";


std::unique_ptr<Reader> OpenReader(ClusterFixture& cluster, const std::string& extra, int64_t interval_ms) {
  return testing::OpenTestReader(cluster.WriteReaderConfig("reader", extra), cluster.ReaderHome("reader"), interval_ms);
}

std::string Capital(Reader& reader, const std::string& country) {
  const LookupResult r = reader.Lookup(kMap, country);
  if (r.code == Code::kNotFound) return "<miss>";
  if (r.code != Code::kOk) return std::string("<error> ") + r.error;
  return std::string(r.value.view());
}

TEST(ReaderSnapshots, MaintenanceSwitchesLookupsToANewerSnapshot) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  LoadAtlantis(cluster, "Poseidonia");
  // Kept 0 s: every maintenance pass may fetch, and lets go of environments not used since the pass before;
  // lookups themselves never wait for a fetch once a snapshot is on disk.
  std::unique_ptr<Reader> reader =
      OpenReader(cluster, "min_time_to_keep_snapshots = 0s\nmin_time_to_keep_env_open = 0s\n", 0);
  ASSERT_NE(reader, nullptr);
  Status s = reader->Prepare(kMap);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Poseidonia");

  LoadAtlantis(cluster, "Metropolis");
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Poseidonia") << "lookups read the snapshot they hold";
  s = reader->Maintain();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Metropolis");
  ReaderKey keys[2];
  keys[0].key = "Atlantis";
  keys[1].key = "Lemuria";
  LookupResult results[2];
  EXPECT_EQ(reader->LookupMany(kMap, keys, 2, results), Code::kOk);
  EXPECT_EQ(results[0].value.view(), "Metropolis");
  EXPECT_EQ(results[1].code, Code::kNotFound);
  // Used since the last pass: kept. Then idle for a whole pass: let go of, and opened again by the next lookup.
  ASSERT_TRUE(reader->Maintain().ok());
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Metropolis");

  // The storage node goes away: the snapshot held keeps answering, and maintenance reports the failed fetch.
  cluster.process(0).Stop();
  s = reader->Maintain();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(kMap));
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Metropolis");
}

TEST(ReaderSnapshots, TheMaintenanceThreadRefreshesInTheBackground) {
  ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  LoadAtlantis(cluster, "Poseidonia");
  std::unique_ptr<Reader> reader = OpenReader(cluster, "min_time_to_keep_snapshots = 0s\n", 20);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(Capital(*reader, "Atlantis"), "Poseidonia");
  LoadAtlantis(cluster, "Metropolis");
  // Waits (looking up, no sleep) until the thread has switched the map to the newer snapshot.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string capital = Capital(*reader, "Atlantis");
  while (capital == "Poseidonia" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
    capital = Capital(*reader, "Atlantis");
  }
  EXPECT_EQ(capital, "Metropolis");
}

TEST(ReaderSnapshots, NoStorageNodeAndNoSnapshotIsAnErrorNamingTheMap) {
  ClusterFixture cluster(1);  // never started: nothing listens
  std::unique_ptr<Reader> reader = OpenReader(cluster, "", 0);
  ASSERT_NE(reader, nullptr);
  const LookupResult r = reader->Lookup(kMap, "Atlantis");
  EXPECT_NE(r.code, Code::kOk);
  EXPECT_NE(r.code, Code::kNotFound);
  EXPECT_THAT(r.error, HasSubstr(kMap));
  EXPECT_THAT(r.error, HasSubstr("node1"));
  const Status s = reader->Prepare(kMap);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(kMap));
}

}  // namespace
}  // namespace planb
