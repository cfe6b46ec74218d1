// Plugins' own tables (PluginDescriptor::tables), through the real planb: the id_table test scheme keeps
// key <-> id tables, and ids are local to each LMDB file, so these tests fail if tables do not reach the plugin
// or if a merge copies a batch's scheme bytes into the shard instead of resolving every key again.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <string>

#include "support/test_env.h"

namespace planb {
namespace {

using testing::ProcessResult;
using testing::RunPlanb;
using testing::TempDir;
using testing::WriteFile;

std::string Xml(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string xml = "<referenceData xmlns=\"reference-data:2\">\n";
  for (const auto& [key, value] : rows) {
    xml += "<reference><map>m</map><key>" + key + "</key><value>" + value + "</value></reference>\n";
  }
  return xml + "</referenceData>\n";
}

class PluginTables : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_ / "planb.ini", "home = " + dir_ / "home" + "\nplugin_dir = " + PLANB_FIXTURE_DIR +
                                      "/id_table\n[map.m]\ntype = state\nscheme = id_table\n");
  }
  ProcessResult Planb(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", dir_ / "planb.ini"});
    return RunPlanb(args);
  }
  TempDir dir_;
};

TEST_F(PluginTables, ASchemesTablesAreCreatedInTheShard) {
  WriteFile(dir_ / "a.xml", Xml({{"alpha", "1"}}));
  ASSERT_EQ(Planb({"load", dir_ / "a.xml"}).exit_code, 0);
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_maxdbs(env, 8);
  ASSERT_EQ(mdb_env_open(env, (dir_ / "home/shards/m").c_str(), MDB_RDONLY, 0644), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  MDB_dbi dbi = 0;
  EXPECT_EQ(mdb_dbi_open(txn, "scheme.ids", 0, &dbi), 0);
  EXPECT_EQ(mdb_dbi_open(txn, "scheme.keys", 0, &dbi), 0);
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

TEST_F(PluginTables, MergesResolveEveryKeyAgainInTheShard) {
  // Batch 1 gives a, b, c the ids 1, 2, 3; batch 2 gives c, d, a the ids 1, 2, 3.
  WriteFile(dir_ / "first.xml", Xml({{"a", "a1"}, {"b", "b1"}, {"c", "c1"}}));
  WriteFile(dir_ / "second.xml", Xml({{"c", "c2"}, {"d", "d2"}, {"a", "a2"}}));
  // The second is newer (State keeps the latest effective time).
  ASSERT_EQ(Planb({"load", "--effective-time", "2024-01-01T00:00:00Z", dir_ / "first.xml"}).exit_code, 0);
  ProcessResult merged = Planb({"load", "--effective-time", "2024-01-02T00:00:00Z", dir_ / "second.xml"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const std::pair<const char*, const char*> expected[] = {{"a", "a2\n"}, {"b", "b1\n"}, {"c", "c2\n"}, {"d", "d2\n"}};
  for (const auto& [key, value] : expected) {
    ProcessResult r = Planb({"lookup", "m", key});
    EXPECT_EQ(r.exit_code, 0) << key << ": " << r.err;
    EXPECT_EQ(r.out, value) << key;
  }
  EXPECT_EQ(Planb({"lookup", "m", "e"}).exit_code, 1);
}

}  // namespace
}  // namespace planb
