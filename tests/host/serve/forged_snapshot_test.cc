// A reader is not pinned by one node's claim (issue 38, defect 9): a snapshot carrying a forged content version
// (9e18) was installed, and afterwards every honest node was refused as "behind" until an operator deleted files.
// Now a reader whose snapshot is ahead of every node that answers, all at one version, says so (refresh's error,
// `planb stores`), keeps serving it, and `planb refresh --accept-older MAP` moves it back to what the nodes have.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lmdb.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "support/cluster_fixture.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using ::planb::testing::ClusterFixture;
using ::planb::testing::ExampleDataFiles;
using ::planb::testing::ProcessResult;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kMap[] = "country_to_capital";

// Rewrites the content version in the meta table of the one snapshot of kMap under `home`: what a node that
// forged its version would have installed there. The fault is injected into the file, as a node could make it.
void ForgeSnapshotVersion(const std::string& home, const std::string& version_text) {
  const fs::path map_dir = fs::path(home) / "snapshots" / kMap;
  fs::path snapshot;
  for (const auto& entry : fs::directory_iterator(map_dir)) {
    if (entry.is_directory() && entry.path().filename().string()[0] != '.') snapshot = entry.path();
  }
  ASSERT_FALSE(snapshot.empty()) << "no snapshot in " << map_dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_maxdbs(env, 64);
  mdb_env_set_mapsize(env, size_t{1} << 30);
  ASSERT_EQ(mdb_env_open(env, snapshot.c_str(), MDB_NOLOCK, 0600), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi meta = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
  MDB_val key{std::strlen("content_version"), const_cast<char*>("content_version")};
  MDB_val value{version_text.size(), const_cast<char*>(version_text.data())};
  ASSERT_EQ(mdb_put(txn, meta, &key, &value, 0), 0);
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

TEST(ForgedSnapshot, AReaderAheadOfEveryNodeSaysSoAndRefreshAcceptOlderMovesItBack) {
  ClusterFixture cluster(2);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  PLANB_ASSERT_NODE_STARTS(cluster, 1);
  ASSERT_TRUE(cluster.LoadAndWaitMerged(ExampleDataFiles(), 2));
  cluster.WriteReaderConfig("reader");
  const auto reader = [&cluster](const std::vector<std::string>& args) { return cluster.RunOnReader("reader", args); };
  ProcessResult r = reader({"lookup", kMap, "Albania"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out, "Tirana\n");
  ASSERT_NO_FATAL_FAILURE(ForgeSnapshotVersion(cluster.ReaderHome("reader"), "9000000000000000000 00000000deadbeef"));

  // Before, every node was "behind" for good. Now: said, with the way back; the snapshot held keeps serving.
  r = reader({"refresh", kMap});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the snapshot held (content version 9000000000000000000) is ahead of every storage "
                               "node that answered: node1, node2 have content version 2"));
  EXPECT_THAT(r.err, HasSubstr("planb refresh --accept-older country_to_capital"));
  r = reader({"stores"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("WARNING: country_to_capital: snapshot of country_to_capital: the snapshot held "
                               "(content version 9000000000000000000) is ahead of every storage node"));
  r = reader({"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // Moving back is asked for by map.
  r = reader({"refresh", "--accept-older"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("refresh --accept-older needs the MAP(s)"));
  r = reader({"refresh", "--accept-older", kMap});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "country_to_capital: installed the nodes' older snapshot (the one held was at "
                   "9000000000000000000), content version 2\n");
  r = reader({"stores"});
  EXPECT_THAT(r.out, Not(HasSubstr("WARNING")));
  EXPECT_THAT(r.out, HasSubstr("country_to_capital"));
  r = reader({"refresh", kMap});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "country_to_capital: the snapshot held is current, content version 2\n");
  r = reader({"lookup", kMap, "Albania"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Tirana\n");
}

}  // namespace
}  // namespace planb
