// KeyScheme::PlanValues of value_dedup (plugins/schemes/value_merge_plan.h): a batch whose values are placed all
// at once, in the value tables' order, leaves those tables exactly as putting the same rows one by one does (the
// same entries, the same counts, unused values removed), whatever the batch's own counts say. A value that clashes
// in the shard takes the next clash number, and an entry kept with count 0 for a greater number goes when that
// number goes. Malformed batch value tables are refused whole, naming what is wrong.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/plugin_host/map_plugins.h"
#include "support/clashing_keys.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::DumpPluginTable;
using ::planb::testing::ExpectedHash;
using ::planb::testing::GetValue;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::PutRows;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::TableEntries;
using ::planb::testing::TempDir;

using Rows = std::vector<std::pair<std::string, std::string>>;
using Entries = std::map<std::string, std::string>;

struct DedupScheme {
  const char* test_name;
  const char* scheme;
  uint32_t values_table;  // index of "values" among the scheme's tables; "value_refs" next
};

void PrintTo(const DedupScheme& param, std::ostream* os) { *os << param.test_name; }

const DedupScheme kDedupSchemes[] = {
    {"Hashed", "hashed", 0},
    {"Direct", "direct", 0},
    {"LookupTable", "lookup_table", 2},
};

// A value long enough to go to the value table (over 16 bytes).
std::string Long(const std::string& name) { return name + std::string(24, '.'); }

std::string Count(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, n >>= 8) out[i] = static_cast<char>(n & 0xFF);
  return out;
}

std::string Ref(const std::string& value, uint16_t clash) {
  return ExpectedHash(value, 64) + std::string{static_cast<char>(clash >> 8), static_cast<char>(clash & 0xFF)};
}

class ValueMergePlanTest : public ::testing::TestWithParam<DedupScheme> {
 protected:
  void SetUp() override {
    Status s = CreateMapPlugins(MakeMapConfig("m", "state", GetParam().scheme, {{"value_dedup", "true"}}), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
    shard_ = NewEnv("shard");
  }

  std::shared_ptr<MapEnv> NewEnv(const std::string& name) {
    std::shared_ptr<MapEnv> env;
    Status s = CreateMapEnv(dir_ / name, plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const Rows& rows) {
    std::shared_ptr<MapEnv> batch = NewEnv("batch-" + std::to_string(++batches_));
    Status s = PutRows(batch, rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return batch;
  }

  // The "values" (offset 0) or "value_refs" (offset 1) entries of `env`.
  TableEntries Table(const MapEnv& env, uint32_t offset) {
    TableEntries entries;
    EXPECT_TRUE(DumpPluginTable(env, GetParam().values_table + offset, false, &entries).ok());
    return entries;
  }

  // Puts (or, with `remove`, deletes) `entries` in value table `offset` of `env`, straight through LMDB.
  void Write(const std::shared_ptr<MapEnv>& env, uint32_t offset, const TableEntries& entries, bool remove = false) {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    const MDB_dbi dbi = txn.table().scheme_tables[GetParam().values_table + offset];
    for (const auto& [key, value] : entries) {
      MDB_val k{key.size(), const_cast<char*>(key.data())};
      MDB_val v{value.size(), const_cast<char*>(value.data())};
      ASSERT_EQ(remove ? mdb_del(txn.table().txn, dbi, &k, nullptr) : mdb_put(txn.table().txn, dbi, &k, &v, 0),
                MDB_SUCCESS);
    }
    ASSERT_TRUE(txn.Commit().ok());
  }

  void ExpectValues(const Rows& expected) {
    std::string value;
    for (const auto& [key, want] : expected) {
      EXPECT_EQ(GetValue(*shard_, key, &value), Code::kOk) << key;
      EXPECT_EQ(value, want) << key;
    }
  }

  // Faults in a batch's value table: a value's bytes changed (no longer under its hash), a value removed that a
  // row refers to, an entry whose key is not a reference.
  void Rewrite(const std::shared_ptr<MapEnv>& batch) { Write(batch, 0, {{Ref(Long("new"), 0), Long("not new")}}); }
  void DropValue(const std::shared_ptr<MapEnv>& batch) {
    Write(batch, 0, {{Ref(Long("new"), 0), ""}}, /*remove=*/true);
  }
  void AddShortKey(const std::shared_ptr<MapEnv>& batch) { Write(batch, 0, {{"abc", Long("odd")}}); }
  void AddShortValue(const std::shared_ptr<MapEnv>& batch) { Write(batch, 0, {{Ref("short", 0), "short"}}); }
  // The row of "new" holds its 40-byte value inline instead of its reference.
  void Inline(const std::shared_ptr<MapEnv>& batch) {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(batch, true).ok());
    MDB_val k;
    MDB_val v;
    bool rewritten = false;
    for (int rc = mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS && !rewritten;
         rc = mdb_cursor_get(txn.table().cursor, &k, &v, MDB_NEXT)) {
      std::string row(static_cast<const char*>(v.mv_data), v.mv_size);
      if (row.size() < 12 || row.compare(row.size() - 11, 1, "\x01") != 0 ||
          row.compare(row.size() - 10, 10, Ref(Long("new"), 0)) != 0) {
        continue;
      }
      row.replace(row.size() - 11, 11, std::string(1, '\0') + std::string(40, 'i'));
      MDB_val nv{row.size(), row.data()};
      ASSERT_EQ(mdb_cursor_put(txn.table().cursor, &k, &nv, MDB_CURRENT), MDB_SUCCESS);
      rewritten = true;
    }
    ASSERT_TRUE(rewritten);
    ASSERT_TRUE(txn.Commit().ok());
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  std::shared_ptr<MapEnv> shard_;
  int batches_ = 0;
};

TEST_P(ValueMergePlanTest, MergedBatchesLeaveTheValueTablesAsPutsOneByOneDo) {
  const Rows first = {{"a", Long("one")}, {"b", Long("one")}, {"c", Long("two")}, {"d", "short"}, {"e", Long("three")}};
  // a unchanged; b moves to a value the shard holds; c to a new one; e's value loses its last row; f and g new.
  const Rows second = {{"a", Long("one")}, {"b", Long("two")},  {"c", Long("four")},
                       {"e", "short too"}, {"f", Long("four")}, {"g", Long("one")}};
  ASSERT_TRUE(MergeInto(Batch(first), shard_).ok());
  Status s = MergeInto(Batch(second), shard_);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<MapEnv> one_by_one = NewEnv("one-by-one");
  ASSERT_TRUE(PutRows(one_by_one, first).ok());
  ASSERT_TRUE(PutRows(one_by_one, second).ok());

  EXPECT_EQ(Table(*shard_, 0), Table(*one_by_one, 0));
  EXPECT_EQ(Table(*shard_, 1), Table(*one_by_one, 1));
  EXPECT_EQ(SchemeTableProblems(*shard_), "");
  const TableEntries counts = Table(*shard_, 1);
  const Entries expected = {
      {Ref(Long("one"), 0), Count(2)}, {Ref(Long("two"), 0), Count(1)}, {Ref(Long("four"), 0), Count(2)}};
  EXPECT_EQ(Entries(counts.begin(), counts.end()), expected);  // "three" went with its row
  ExpectValues({{"a", Long("one")},
                {"b", Long("two")},
                {"c", Long("four")},
                {"d", "short"},
                {"e", "short too"},
                {"f", Long("four")},
                {"g", Long("one")}});

  // The same batch again: every row is unchanged, so are the tables.
  const TableEntries values = Table(*shard_, 0);
  std::vector<DumpedRow> rows;
  ASSERT_TRUE(DumpMap(*shard_, &rows).ok());
  ASSERT_TRUE(MergeInto(Batch(second), shard_).ok());
  std::vector<DumpedRow> again;
  ASSERT_TRUE(DumpMap(*shard_, &again).ok());
  EXPECT_EQ(again, rows);
  EXPECT_EQ(Table(*shard_, 0), values);
  EXPECT_EQ(Table(*shard_, 1), counts);
}

TEST_P(ValueMergePlanTest, CountsComeFromTheRowsMergedNotFromTheBatch) {
  std::shared_ptr<MapEnv> batch = Batch({{"a", Long("one")}, {"b", Long("one")}, {"c", Long("two")}});
  TableEntries inflated = Table(*batch, 1);
  ASSERT_EQ(inflated.size(), 2u);
  for (auto& entry : inflated) entry.second = Count(1000);
  Write(batch, 1, inflated);
  ASSERT_TRUE(MergeInto(batch, shard_).ok());
  EXPECT_EQ(SchemeTableProblems(*shard_), "");
  const TableEntries counts = Table(*shard_, 1);
  const Entries expected = {{Ref(Long("one"), 0), Count(2)}, {Ref(Long("two"), 0), Count(1)}};
  EXPECT_EQ(Entries(counts.begin(), counts.end()), expected);
}

TEST_P(ValueMergePlanTest, AValueWhoseHashIsTakenInTheShardGetsTheNextClashNumber) {
  // Another value under Long("one")'s hash at clash 0, as a 64-bit hash clash would leave it: kept with count 0
  // because clash 1 will live.
  const std::string other = "another value under the same hash";
  Write(shard_, 0, {{Ref(Long("one"), 0), other}});
  Write(shard_, 1, {{Ref(Long("one"), 0), Count(0)}});

  ASSERT_TRUE(MergeInto(Batch({{"a", Long("one")}}), shard_).ok());
  ASSERT_TRUE(MergeInto(Batch({{"b", Long("one")}}), shard_).ok());
  EXPECT_EQ(Table(*shard_, 0), (TableEntries{{Ref(Long("one"), 0), other}, {Ref(Long("one"), 1), Long("one")}}));
  EXPECT_EQ(Table(*shard_, 1), (TableEntries{{Ref(Long("one"), 0), Count(0)}, {Ref(Long("one"), 1), Count(2)}}));
  EXPECT_EQ(SchemeTableProblems(*shard_), "");
  ExpectValues({{"a", Long("one")}, {"b", Long("one")}});

  // Both rows move to short values: clash 1 loses its last reference and goes, and clash 0, kept only for it,
  // goes with it.
  ASSERT_TRUE(MergeInto(Batch({{"a", "x"}, {"b", "y"}}), shard_).ok());
  EXPECT_EQ(Table(*shard_, 0), TableEntries{});
  EXPECT_EQ(Table(*shard_, 1), TableEntries{});
  ExpectValues({{"a", "x"}, {"b", "y"}});
}

TEST_P(ValueMergePlanTest, MalformedBatchValueTablesAreRefusedWholeNamingTheFault) {
  ASSERT_TRUE(MergeInto(Batch({{"kept", Long("kept")}}), shard_).ok());
  struct Fault {
    const char* what;
    std::function<void(const std::shared_ptr<MapEnv>&)> damage;
  };
  const Fault faults[] = {
      {"a value of the batch's value table is not under its hash",
       [this](const std::shared_ptr<MapEnv>& b) { Rewrite(b); }},
      {"a batch row refers to a value its value table lacks",
       [this](const std::shared_ptr<MapEnv>& b) { DropValue(b); }},
      {"the batch's value table holds a 3-byte key", [this](const std::shared_ptr<MapEnv>& b) { AddShortKey(b); }},
      {"the batch's value table holds a 5-byte value", [this](const std::shared_ptr<MapEnv>& b) { AddShortValue(b); }},
      {"a batch row holds 40 bytes inline (at most 16)", [this](const std::shared_ptr<MapEnv>& b) { Inline(b); }},
  };
  for (const Fault& fault : faults) {
    SCOPED_TRACE(fault.what);
    std::shared_ptr<MapEnv> batch = Batch({{"kept", Long("changed")}, {"new", Long("new")}});
    fault.damage(batch);
    std::vector<DumpedRow> before;
    ASSERT_TRUE(DumpMap(*shard_, &before).ok());
    const TableEntries values = Table(*shard_, 0);
    const TableEntries counts = Table(*shard_, 1);

    Status s = MergeInto(batch, shard_);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Code::kCorruption);
    EXPECT_NE(s.message().find(fault.what), std::string::npos) << s.message();
    std::vector<DumpedRow> after;
    ASSERT_TRUE(DumpMap(*shard_, &after).ok());
    EXPECT_EQ(after, before);
    EXPECT_EQ(Table(*shard_, 0), values);
    EXPECT_EQ(Table(*shard_, 1), counts);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, ValueMergePlanTest, ::testing::ValuesIn(kDedupSchemes),
                         [](const ::testing::TestParamInfo<DedupScheme>& info) { return info.param.test_name; });

}  // namespace
}  // namespace planb
