// KeyScheme::SweepUnusedKeys of the id schemes (lookup_table, variable) and the id_table test fixture, after
// rows were deleted through Store::DeleteRow: ids without rows leave both tables, clash numbers under one hash
// stay dense (keys forced to share an 8-bit hash), the other keys still look up, and ids are never reused.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "host/plugin_host/plugin_registry.h"
#include "support/clashing_keys.h"
#include "support/id_scheme_fixture.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClashingKeys;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DeleteRows;
using ::planb::testing::DumpPluginTable;
using ::planb::testing::GetValue;
using ::planb::testing::IdSchemeName;
using ::planb::testing::IdSchemeTest;
using ::planb::testing::kIdSchemes;
using ::planb::testing::LoadBuiltInPlugins;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::PutRows;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::TableEntries;
using ::planb::testing::TempDir;

class IdSweepTest : public IdSchemeTest {};

TEST_P(IdSweepTest, ClashingKeysLoseTheirIdsAndTheIndexStaysDense) {
  std::vector<std::string> keys;
  for (const std::string& key : ClashingKeys(7, "sweep-" + GetParam().key_suffix)) keys.push_back(key);
  std::vector<std::pair<std::string, std::string>> rows;
  for (const std::string& key : keys) rows.emplace_back(key, "value of " + key);
  ASSERT_TRUE(PutRows(env_, rows).ok());
  ASSERT_EQ(Ids().size(), keys.size());
  TableEntries index;
  ASSERT_TRUE(DumpPluginTable(*env_, 0, false, &index).ok());
  ASSERT_EQ(index.size(), keys.size());  // one hash, clash numbers 0..6

  // The first, a middle and the last clash number go: the last entries move into the freed numbers.
  const std::set<std::string> doomed = {keys[0], keys[3], keys[6]};
  uint64_t deleted = 0;
  uint64_t swept = 0;
  const Status s = DeleteRows(
      env_, [&](const Row& row) { return doomed.count(std::string(row.key.view())) != 0; }, &deleted, &swept);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(deleted, 3u);
  EXPECT_EQ(swept, 3u);
  EXPECT_EQ(SchemeTableProblems(*env_), "");
  EXPECT_EQ(Ids().size(), 4u);
  for (const std::string& key : keys) {
    std::string value;
    EXPECT_EQ(GetValue(*env_, key, &value), doomed.count(key) != 0 ? Code::kNotFound : Code::kOk) << key;
    if (doomed.count(key) == 0) {
      EXPECT_EQ(value, "value of " + key);
    }
  }

  // A deleted key comes back under an id greater than any ever given: ids are not reused.
  std::set<std::pair<std::string, std::string>> before = Ids();
  ASSERT_TRUE(PutRows(env_, {{keys[3], "back"}}).ok());
  std::set<std::pair<std::string, std::string>> after = Ids();
  ASSERT_EQ(after.size(), before.size() + 1);
  std::string new_id;
  for (const auto& entry : after) {
    if (before.count(entry) == 0) new_id = entry.first;
  }
  EXPECT_GE(new_id, std::string("\0\0\0\x07", 4));  // ids 0..6 were handed out first
  std::string value;
  EXPECT_EQ(GetValue(*env_, keys[3], &value), Code::kOk);
  EXPECT_EQ(value, "back");
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

TEST_P(IdSweepTest, ASweepWithNothingDeletedForgetsNothing) {
  ASSERT_TRUE(PutRows(env_, {{"a" + GetParam().key_suffix, "1"}, {"b" + GetParam().key_suffix, "2"}}).ok());
  uint64_t deleted = 0;
  uint64_t swept = 0;
  ASSERT_TRUE(DeleteRows(
                  env_, [](const Row&) { return false; }, &deleted, &swept)
                  .ok());
  EXPECT_EQ(swept, 0u);
  EXPECT_EQ(Ids().size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(IdSchemes, IdSweepTest, ::testing::ValuesIn(kIdSchemes), IdSchemeName);

// Adding a key to the lookup table at its limits: every clash number of its hash taken, or every id handed out.
// The tables are filled directly (65,536 entries would take 16M keys through the store). A new key is refused
// naming the limit; a key the table already holds still writes, and nothing is half-written.
class IdLimitsTest : public IdSchemeTest {};

TEST_P(IdLimitsTest, AKeyWhoseHashHasEveryClashNumberTakenIsRefused) {
  const std::string present = Key("present");
  ASSERT_TRUE(PutRows(env_, {{present, "1"}}).ok());
  const std::string key = Key("crowded");
  FillHashOf(key);
  const auto ids_before = Ids();

  ExpectHashFull(PutRows(env_, {{present, "2"}, {key, "v"}}));
  EXPECT_EQ(Ids(), ids_before);  // the transaction was not committed: no id given, the earlier row unchanged
  std::string value;
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "1");
  EXPECT_EQ(GetValue(*env_, key, &value), Code::kNotFound);

  ASSERT_TRUE(PutRows(env_, {{present, "3"}}).ok());  // a key the table holds still writes
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "3");
}

TEST_P(IdLimitsTest, ANewKeyIsRefusedOnceEveryIdWasHandedOut) {
  const std::string present = Key("present");
  ASSERT_TRUE(PutRows(env_, {{present, "1"}}).ok());
  const uint64_t ids = uint64_t{1} << 32;
  std::string counter(8, '\0');
  for (int i = 0; i < 8; ++i) counter[i] = static_cast<char>(ids >> (56 - 8 * i));
  WriteSchemeTable(1, {{"n", counter}});

  std::string value;
  Status s = PutRows(env_, {{Key("newcomer"), "v"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kFull);
  EXPECT_NE(s.message().find("the lookup table is full (4294967296 ids)"), std::string::npos) << s.message();
  EXPECT_EQ(GetValue(*env_, Key("newcomer"), &value), Code::kNotFound);

  s = PutRows(env_, {{present, "2"}});  // its id exists: nothing to hand out
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "2");
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

INSTANTIATE_TEST_SUITE_P(IdSchemes, IdLimitsTest, ::testing::ValuesIn(kIdSchemes), IdSchemeName);

// The id_table test fixture (another plugin's tables) sweeps too.
TEST(IdTableFixtureSweep, ForgetsIdsWithoutRowsBothWays) {
  PluginRegistry registry;
  ASSERT_TRUE(LoadBuiltInPlugins(&registry).ok());
  ASSERT_TRUE(registry.LoadDirectories({std::string(PLANB_FIXTURE_DIR) + "/id_table"}).ok());
  std::unique_ptr<MapPlugins> made;
  Status s = MapPlugins::Create(MakeMapConfig("m", "temporal", "id_table"), registry, &made);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<const MapPlugins> plugins = std::move(made);
  TempDir dir;
  std::shared_ptr<MapEnv> env;
  ASSERT_TRUE(CreateMapEnv(dir / "shard", plugins, &env).ok());
  std::vector<Record> records;
  const std::vector<std::string> keys = {"a", "b", "c"};
  {
    testing::MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    for (const std::string& key : keys) {
      for (int64_t t : {1, 2}) {
        Record record = testing::StateRecord(key, "v");
        record.time_ms = t;
        ErrorBuffer error;
        ASSERT_EQ(plugins->store()->Put(txn.table(), record, &error), Code::kOk) << error.message;
      }
    }
    ASSERT_TRUE(txn.Commit().ok());
  }
  uint64_t deleted = 0;
  uint64_t swept = 0;
  s = DeleteRows(
      env, [](const Row& row) { return row.key.view() == "b"; }, &deleted, &swept);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(deleted, 2u);
  EXPECT_EQ(swept, 1u);
  TableEntries ids;
  TableEntries id_keys;
  ASSERT_TRUE(DumpPluginTable(*env, 0, false, &ids).ok());
  ASSERT_TRUE(DumpPluginTable(*env, 1, false, &id_keys).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].first, "a");
  EXPECT_EQ(ids[1].first, "c");
  EXPECT_EQ(id_keys.size(), 3u);  // a, c and the counter
  // Only a row at time 2 left for "a": the id still has a row and stays.
  s = DeleteRows(
      env, [](const Row& row) { return row.key.view() == "a" && row.effective_time_ms == 1; }, &deleted, &swept);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(swept, 0u);
  ASSERT_TRUE(DumpPluginTable(*env, 0, false, &ids).ok());
  EXPECT_EQ(ids.size(), 2u);
}

}  // namespace
}  // namespace planb
