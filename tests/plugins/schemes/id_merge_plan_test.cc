// KeyScheme::PlanMerge of the id schemes (plugins/schemes/id_merge_plan.h): a batch whose keys are placed all at
// once, in the index's order, leaves the lookup table exactly as putting the same keys one by one does (the same
// ids, the same clash numbers under a forced 8-bit hash, the same rows). Malformed batches: one key listed under
// two ids merges under one; a key listed without a row gets nothing. At the table's limits a merge is refused
// whole, naming the limit.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "planb/encoding.h"
#include "support/clashing_keys.h"
#include "support/id_scheme_fixture.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::ClashingKeys;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::DumpPluginTable;
using ::planb::testing::GetValue;
using ::planb::testing::IdSchemeName;
using ::planb::testing::IdSchemeTest;
using ::planb::testing::kIdSchemes;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::PutRows;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::TableEntries;

using Rows = std::vector<std::pair<std::string, std::string>>;

class IdMergePlanTest : public IdSchemeTest {
 protected:
  // Everything in `env`'s tables: the index, the ids and the rows, decoded.
  struct Contents {
    TableEntries index;
    TableEntries ids;
    std::vector<DumpedRow> rows;
  };
  Contents Read(const MapEnv& env) {
    Contents c;
    EXPECT_TRUE(DumpPluginTable(env, 0, false, &c.index).ok());
    EXPECT_TRUE(DumpPluginTable(env, 1, false, &c.ids).ok());
    EXPECT_TRUE(DumpMap(env, &c.rows).ok());
    return c;
  }

  void ExpectSame(const MapEnv& merged, const MapEnv& one_by_one) {
    const Contents a = Read(merged);
    const Contents b = Read(one_by_one);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.ids, b.ids);
    EXPECT_EQ(a.rows, b.rows);
  }
};

TEST_P(IdMergePlanTest, MergedBatchesLeaveTheTablesAsPutsOneByOneDo) {
  // Six keys of one 8-bit hash (under hash_bits = 8: clash numbers 0-5) and keys of their own hash.
  const std::vector<std::string> clashing = ClashingKeys(6, "plan-" + GetParam().key_suffix);
  const Rows first = {{clashing[3], "1"}, {Key("solo-1"), "2"}, {clashing[0], "3"}, {clashing[1], "4"}};
  // Known keys and new ones interleaved; new keys of the crowded hash come after the shard's.
  const Rows second = {{clashing[5], "5"}, {clashing[0], "6"}, {Key("solo-2"), "7"}, {clashing[4], "8"},
                       {Key("solo-1"), "9"}, {clashing[2], "10"}};

  ASSERT_TRUE(MergeInto(Batch(first), env_).ok());
  Status s = MergeInto(Batch(second), env_);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<MapEnv> one_by_one;
  ASSERT_TRUE(CreateMapEnv(dir_ / "one-by-one", plugins_, &one_by_one).ok());
  ASSERT_TRUE(PutRows(one_by_one, first).ok());
  ASSERT_TRUE(PutRows(one_by_one, second).ok());

  ExpectSame(*env_, *one_by_one);
  EXPECT_EQ(Ids().size(), 8u);
  EXPECT_EQ(SchemeTableProblems(*env_), "");
  std::string value;
  for (const auto& [key, expected] : Rows{{clashing[0], "6"}, {clashing[1], "4"}, {clashing[3], "1"},
                                          {clashing[5], "5"}, {Key("solo-1"), "9"}, {Key("solo-2"), "7"}}) {
    EXPECT_EQ(GetValue(*env_, key, &value), Code::kOk) << key;
    EXPECT_EQ(value, expected) << key;
  }

  // The same batch again: every key is known, nothing changes.
  const Contents before = Read(*env_);
  ASSERT_TRUE(MergeInto(Batch(second), env_).ok());
  const Contents after = Read(*env_);
  EXPECT_EQ(after.index, before.index);
  EXPECT_EQ(after.ids, before.ids);
  EXPECT_EQ(after.rows, before.rows);
}

TEST_P(IdMergePlanTest, ABatchListingOneKeyUnderTwoIdsMergesItUnderOne) {
  const std::string key = Key("twice");
  std::shared_ptr<MapEnv> batch = Batch({{key, "first"}});
  const auto batch_ids = Ids(batch);
  ASSERT_EQ(batch_ids.size(), 1u);
  // A second id for the same key, and a row under it (the first row's key with the id replaced).
  const std::string second_id("\0\0\0\x09", 4);
  WriteSchemeTable(1, {{second_id, key}}, batch);
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(batch, true).ok());
    MDB_val k;
    MDB_val v;
    ASSERT_EQ(mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST), MDB_SUCCESS);
    std::string row_key(static_cast<const char*>(k.mv_data), k.mv_size);
    ASSERT_GE(row_key.size(), 4u);
    row_key.replace(row_key.size() - 4, 4, second_id);  // the prefix is [tag] + id (State: no suffix)
    // State's head (a 16-byte version and the type byte), then the value; a millisecond later than the first.
    std::string row_value(static_cast<const char*>(v.mv_data), 17);
    uint64_t time = GetU64(reinterpret_cast<const uint8_t*>(row_value.data()));
    PutU64(reinterpret_cast<uint8_t*>(row_value.data()), time + 1);
    row_value += "second";
    MDB_val nk{row_key.size(), row_key.data()};
    MDB_val nv{row_value.size(), row_value.data()};
    ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &nk, &nv, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }

  const Status s = MergeInto(batch, env_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Ids().size(), 1u);
  TableEntries index;
  ASSERT_TRUE(DumpPluginTable(*env_, 0, false, &index).ok());
  EXPECT_EQ(index.size(), 1u);
  std::string value;
  EXPECT_EQ(GetValue(*env_, key, &value), Code::kOk);
  EXPECT_EQ(value, "second");  // the later id's row is the newer
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

TEST_P(IdMergePlanTest, AKeyTheBatchListsWithoutARowGetsNothingInTheShard) {
  std::shared_ptr<MapEnv> batch = Batch({{Key("with-row"), "1"}});
  WriteSchemeTable(1, {{std::string("\0\0\0\x07", 4), Key("without-row")}}, batch);
  ASSERT_EQ(Ids(batch).size(), 2u);

  const Status s = MergeInto(batch, env_);
  ASSERT_TRUE(s.ok()) << s.message();
  const auto ids = Ids();
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.begin()->second, Key("with-row"));
  TableEntries index;
  ASSERT_TRUE(DumpPluginTable(*env_, 0, false, &index).ok());
  EXPECT_EQ(index.size(), 1u);
  std::string value;
  EXPECT_EQ(GetValue(*env_, Key("without-row"), &value), Code::kNotFound);
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

// Ids without rows before, between and after those with rows: the plan walks the batch's rows forward beside its
// ids, and a row-less id must neither take a later id's row nor hide it.
TEST_P(IdMergePlanTest, KeysListedWithoutRowsAmongThoseWithRowsGetNothing) {
  Rows rows;
  for (int i = 0; i < 8; ++i) rows.emplace_back(Key("k" + std::to_string(i)), "v" + std::to_string(i));
  std::shared_ptr<MapEnv> batch = Batch(rows);
  ASSERT_EQ(Ids(batch).size(), 8u);
  {
    // The rows of ids 0, 2, 3, 5 and 7 go (a row key ends with its 4-byte id: State appends nothing).
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(batch, true).ok());
    MDB_cursor* cursor = txn.table().cursor;
    MDB_val k;
    MDB_val v;
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
    int deleted = 0;
    while (rc == MDB_SUCCESS) {
      const uint8_t last = static_cast<const uint8_t*>(k.mv_data)[k.mv_size - 1];
      if (last == 0 || last == 2 || last == 3 || last == 5 || last == 7) {
        ASSERT_EQ(mdb_cursor_del(cursor, 0), MDB_SUCCESS);
        ++deleted;
      }
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);  // after a delete: the row that followed it
    }
    ASSERT_EQ(deleted, 5);
    ASSERT_TRUE(txn.Commit().ok());
  }
  WriteSchemeTable(1, {{std::string("\0\0\0\x09", 4), Key("past-the-rows")}}, batch);

  const Status s = MergeInto(batch, env_);
  ASSERT_TRUE(s.ok()) << s.message();
  std::set<std::string> kept;
  for (const auto& [id, key] : Ids()) kept.insert(key);
  EXPECT_EQ(kept, (std::set<std::string>{Key("k1"), Key("k4"), Key("k6")}));
  std::string value;
  for (int i = 0; i < 8; ++i) {
    const bool has_row = i == 1 || i == 4 || i == 6;
    EXPECT_EQ(GetValue(*env_, Key("k" + std::to_string(i)), &value), has_row ? Code::kOk : Code::kNotFound) << i;
    if (has_row) {
      EXPECT_EQ(value, "v" + std::to_string(i));
    }
  }
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

TEST_P(IdMergePlanTest, AMergeWithAKeyWhoseHashHasEveryClashNumberTakenIsRefusedWhole) {
  const std::string present = Key("present");
  ASSERT_TRUE(MergeInto(Batch({{present, "1"}}), env_).ok());
  const std::string crowded = Key("crowded");
  FillHashOf(crowded);
  const auto ids_before = Ids();

  ExpectHashFull(MergeInto(Batch({{present, "2"}, {crowded, "v"}}), env_));
  EXPECT_EQ(Ids(), ids_before);
  std::string value;
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "1");

  const Status s = MergeInto(Batch({{present, "3"}}), env_);  // a batch of known keys still merges
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "3");
}

TEST_P(IdMergePlanTest, TheLastIdGoesToOneNewKeyAndTwoAreRefused) {
  const std::string present = Key("present");
  ASSERT_TRUE(MergeInto(Batch({{present, "1"}}), env_).ok());
  const uint64_t last = (uint64_t{1} << 32) - 1;
  std::string counter(8, '\0');
  for (int i = 0; i < 8; ++i) counter[i] = static_cast<char>(last >> (56 - 8 * i));
  WriteSchemeTable(1, {{"n", counter}});

  Status s = MergeInto(Batch({{Key("new-1"), "a"}, {present, "2"}, {Key("new-2"), "b"}}), env_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kFull);
  EXPECT_NE(s.message().find("the lookup table is full (4294967296 ids)"), std::string::npos) << s.message();
  std::string value;
  EXPECT_EQ(GetValue(*env_, Key("new-1"), &value), Code::kNotFound);
  EXPECT_EQ(GetValue(*env_, present, &value), Code::kOk);
  EXPECT_EQ(value, "1");

  s = MergeInto(Batch({{Key("new-1"), "a"}, {present, "2"}}), env_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(GetValue(*env_, Key("new-1"), &value), Code::kOk);
  EXPECT_EQ(value, "a");
  EXPECT_EQ(Ids().count({std::string("\xff\xff\xff\xff", 4), Key("new-1")}), 1u);
  EXPECT_EQ(SchemeTableProblems(*env_), "");
}

INSTANTIATE_TEST_SUITE_P(IdSchemes, IdMergePlanTest, ::testing::ValuesIn(kIdSchemes), IdSchemeName);

}  // namespace
}  // namespace planb
