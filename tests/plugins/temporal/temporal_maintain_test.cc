// Maintenance of Temporal State shards (issue 14) with each key scheme: retention, condensation, deleting rows,
// and the scheme's sweep, on real LMDB files through the real plugins, checked against models.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/scheme_matrix.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::Answer;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DeleteRows;
using ::planb::testing::DumpFullRows;
using ::planb::testing::FullRow;
using ::planb::testing::LookupAt;
using ::planb::testing::MaintainResult;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::PutEvents;
using ::planb::testing::RandomInput;
using ::planb::testing::RunMaintain;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::TempDir;
using ::planb::testing::TemporalEvent;

using Events = std::vector<TemporalEvent>;
// key -> effective time -> (type, value)
using Model = std::map<std::string, std::map<int64_t, std::pair<ValueType, std::string>>>;

constexpr int64_t kMin = INT64_MIN;
constexpr int64_t kMax = INT64_MAX;

// The answer `model` gives at `time`, counting only rows at or after `from` (what retention keeps).
const std::pair<ValueType, std::string>* Expected(const Model& model, const std::string& key, int64_t time,
                                                  int64_t from = kMin) {
  auto k = model.find(key);
  if (k == model.end()) return nullptr;
  auto after = k->second.upper_bound(time);
  if (after == k->second.begin()) return nullptr;
  --after;
  return after->first >= from ? &after->second : nullptr;
}

class TemporalMaintainTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s =
        CreateMapPlugins(MakeMapConfig("m", "temporal", GetParam().scheme, GetParam().Options()), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> Shard(const Events& events) {
    std::shared_ptr<MapEnv> env;
    Status s = CreateMapEnv(dir_ / ("s" + std::to_string(envs_++)), plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    s = PutEvents(env, events);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static std::vector<FullRow> Dump(const MapEnv& env) {
    std::vector<FullRow> rows;
    const Status s = DumpFullRows(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  static MaintainResult Maintain(const std::shared_ptr<MapEnv>& env, const MaintainRequest& request) {
    MaintainResult result;
    const Status s = RunMaintain(env, request, &result);
    EXPECT_TRUE(s.ok()) << s.message();
    return result;
  }

  static MaintainRequest Retain(int64_t from) {
    MaintainRequest request;
    request.retain = true;
    request.retain_from_ms = from;
    return request;
  }
  static MaintainRequest Condense(int64_t before) {
    MaintainRequest request;
    request.condense = true;
    request.condense_before_ms = before;
    return request;
  }

  // (key, time) of every row.
  static std::set<std::pair<std::string, int64_t>> Times(const MapEnv& env) {
    std::set<std::pair<std::string, int64_t>> times;
    for (const FullRow& row : Dump(env)) times.emplace(row.key, row.effective_time_ms);
    return times;
  }

  TempDir dir_;
  int envs_ = 0;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_P(TemporalMaintainTest, RetentionIsExactToTheMillisecond) {
  const int64_t cut = 1700000000000;
  auto env = Shard({{"a", cut - 1, "old"},
                    {"a", cut, "at"},
                    {"a", cut + 1, "new"},
                    {"b", kMin, "min"},
                    {"b", cut - 1000, "b-old"},
                    {"c", kMax, "max"},
                    {"d", cut - 1, "gone"}});
  const MaintainResult result = Maintain(env, Retain(cut));
  EXPECT_EQ(result.stats.rows_examined, 7u);
  EXPECT_EQ(result.stats.rows_deleted, 4u);
  EXPECT_EQ(result.stats.rows_condensed, 0u);
  const std::set<std::pair<std::string, int64_t>> want = {{"a", cut}, {"a", cut + 1}, {"c", kMax}};
  EXPECT_EQ(Times(*env), want);
  EXPECT_EQ(LookupAt(*env, "a", cut).value, "at");
  EXPECT_EQ(LookupAt(*env, "a", cut - 1).code, Code::kNotFound);
  EXPECT_EQ(LookupAt(*env, "b", kMax).code, Code::kNotFound);
  EXPECT_EQ(LookupAt(*env, "d", kMax).code, Code::kNotFound);
  EXPECT_EQ(SchemeTableProblems(*env), "");
  // Retaining from the earliest instant keeps everything.
  EXPECT_EQ(Maintain(env, Retain(kMin)).stats.rows_deleted, 0u);
  EXPECT_EQ(Times(*env), want);
}

TEST_P(TemporalMaintainTest, CondensationKeepsTheEarliestOfEachRunOfEqualValues) {
  Events events = {{"a", 100, "x"}, {"a", 200, "x"},
                   {"a", 300, "y"}, {"a", 400, "y"},
                   {"a", 500, "x"}, {"a", 600, "x"},
                   {"a", 700, "x"},                                            // 700 is at the cut: it stays
                   {"b", 100, "x"}, {"b", 200, "x", ValueType::kXmlFragment},  // another value type is another value
                   {"c", 100, "x"}};                                           // another key's equal value stays
  auto env = Shard(events);
  const MaintainResult result = Maintain(env, Condense(700));
  EXPECT_EQ(result.stats.rows_condensed, 3u);  // a@200, a@400, a@600
  EXPECT_EQ(result.stats.rows_deleted, 0u);
  const std::set<std::pair<std::string, int64_t>> want = {{"a", 100}, {"a", 300}, {"a", 500}, {"a", 700},
                                                          {"b", 100}, {"b", 200}, {"c", 100}};
  EXPECT_EQ(Times(*env), want);
  EXPECT_EQ(LookupAt(*env, "a", 250).value, "x");
  EXPECT_EQ(LookupAt(*env, "a", 450).value, "y");
  EXPECT_EQ(LookupAt(*env, "a", 650).effective_time_ms, 500);
  EXPECT_EQ(LookupAt(*env, "b", 250).type, ValueType::kXmlFragment);
  EXPECT_EQ(SchemeTableProblems(*env), "");
}

// Property (a), (c), (d): random keys with few distinct values, so that repeats are common; retention and
// condensation at random cuts; every lookup equals the model's answer counting only retained rows, and a
// second run removes nothing.
TEST_P(TemporalMaintainTest, RandomDataLooksUpTheSameAfterMaintenanceAndTwiceEqualsOnce) {
  RandomInput random(1414);
  const std::vector<std::string> keys = random.DistinctTexts(120, 1, 40);
  const std::vector<std::string> values = {"a", "b", std::string(40, 'L'), std::string(41, 'L')};
  for (int round = 0; round < 3; ++round) {
    Model model;
    Events events;
    for (int i = 0; i < 2000; ++i) {
      TemporalEvent event{keys[random.Index(keys.size())], random.Between(0, 5000), values[random.Index(4)],
                          random.Percent(10) ? ValueType::kXmlFragment : ValueType::kString};
      model[event.key][*event.time_ms] = {event.type, event.value};
      events.push_back(event);
    }
    auto env = Shard(events);
    MaintainRequest request;
    request.condense = true;
    request.condense_before_ms = random.Between(1000, 5010);
    request.retain = round != 0;
    request.retain_from_ms = request.retain ? random.Between(-10, request.condense_before_ms) : 0;
    const int64_t kept_from = request.retain ? request.retain_from_ms : kMin;
    const size_t rows_before = Dump(*env).size();

    const MaintainResult first = Maintain(env, request);
    const std::vector<FullRow> after = Dump(*env);
    EXPECT_EQ(first.stats.rows_examined, rows_before);
    EXPECT_EQ(after.size(), rows_before - first.stats.rows_deleted - first.stats.rows_condensed);
    EXPECT_GT(first.stats.rows_condensed, 0u);
    for (const FullRow& row : after) EXPECT_GE(row.effective_time_ms, kept_from);

    size_t wrong = 0;
    for (int i = 0; i < 4000 && wrong < 10; ++i) {
      const std::string& key = keys[random.Index(keys.size())];
      const int64_t time = random.Percent(2) ? (random.Percent(50) ? kMin : kMax) : random.Between(-5, 5010);
      const Answer answer = LookupAt(*env, key, time);
      const auto* want = Expected(model, key, time, kept_from);
      const bool ok = want == nullptr
                          ? answer.code == Code::kNotFound
                          : answer.code == Code::kOk && answer.type == want->first && answer.value == want->second;
      if (!ok) {
        ++wrong;
        ADD_FAILURE() << "key '" << key << "' at " << time << " (condense before " << request.condense_before_ms
                      << ", retain from " << kept_from << "): " << ::testing::PrintToString(answer);
      }
    }
    EXPECT_EQ(SchemeTableProblems(*env), "");

    const MaintainResult second = Maintain(env, request);
    EXPECT_EQ(second.stats.rows_deleted, 0u);
    EXPECT_EQ(second.stats.rows_condensed, 0u);
    EXPECT_EQ(second.keys_swept, 0u);
    EXPECT_EQ(Dump(*env), after);
  }
}

// Property (e): deleting every row of some keys through DeleteRow leaves the scheme's tables exact (ids, index
// with dense clash numbers, value counts), the other keys look up as before, and a deleted key comes back.
TEST_P(TemporalMaintainTest, DeletingEveryRowOfSomeKeysLeavesTheSchemeTablesExact) {
  RandomInput random(77);
  std::vector<std::string> keys = random.DistinctTexts(300, 1, 60);
  if (std::string(GetParam().scheme) == "variable") keys.push_back(std::string(600, 'h'));  // its hashed form
  Model model;
  Events events;
  for (int i = 0; i < 1500; ++i) {
    TemporalEvent event{keys[random.Index(keys.size())], random.Between(0, 100),
                        "value-" + std::to_string(random.Between(0, 20)) + std::string(20, 'v')};
    model[event.key][*event.time_ms] = {event.type, event.value};
    events.push_back(event);
  }
  auto env = Shard(events);
  std::set<std::string> doomed;
  for (const auto& entry : model) {
    if (random.Percent(40)) doomed.insert(entry.first);
  }
  uint64_t deleted = 0;
  uint64_t swept = 0;
  const Status s = DeleteRows(
      env, [&](const Row& row) { return doomed.count(std::string(row.key.view())) != 0; }, &deleted, &swept);
  ASSERT_TRUE(s.ok()) << s.message();
  uint64_t doomed_rows = 0;
  for (const std::string& key : doomed) doomed_rows += model[key].size();
  EXPECT_EQ(deleted, doomed_rows);
  const std::string scheme = GetParam().scheme;
  if (scheme == "lookup_table") {
    EXPECT_EQ(swept, doomed.size());
  }
  if (scheme == "hashed" || scheme == "direct" || scheme == "hybrid") {
    EXPECT_EQ(swept, 0u);
  }
  EXPECT_EQ(SchemeTableProblems(*env), "");

  for (const auto& [key, times] : model) {
    const Answer answer = LookupAt(*env, key, kMax);
    if (doomed.count(key) != 0) {
      EXPECT_EQ(answer.code, Code::kNotFound) << key;
    } else {
      EXPECT_EQ(answer.code, Code::kOk) << key;
      EXPECT_EQ(answer.value, times.rbegin()->second.second) << key;
      EXPECT_EQ(LookupAt(*env, key, times.begin()->first).value, times.begin()->second.second) << key;
    }
  }
  // Deleted keys come back (under new ids: the counter only grows) and everything stays exact.
  Events again;
  for (const std::string& key : doomed) again.push_back({key, 50, "back"});
  ASSERT_TRUE(PutEvents(env, again).ok());
  for (const std::string& key : doomed) EXPECT_EQ(LookupAt(*env, key, 60).value, "back") << key;
  EXPECT_EQ(SchemeTableProblems(*env), "");
  MaintainResult nothing;
  ASSERT_TRUE(RunMaintain(env, MaintainRequest{}, &nothing).ok());
  EXPECT_EQ(nothing.keys_swept, 0u);
}

TEST_P(TemporalMaintainTest, ACorruptRowFailsMaintenanceAndChangesNothing) {
  auto env = Shard({{"a", 1, "x"}, {"a", 2, "x"}});
  const std::vector<FullRow> before = Dump(*env);
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    // The first row's key without its last byte: a prefix but a short time.
    std::string key = before[0].lmdb_key.substr(0, before[0].lmdb_key.size() - 1);
    MDB_val k{key.size(), key.data()};
    MDB_val v{0, nullptr};
    ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }
  MaintainResult result;
  const Status s = RunMaintain(env, Condense(kMax), &result);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), Code::kNotSupported) << s.message();
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, false).ok());
  MDB_stat stat;
  ASSERT_EQ(mdb_stat(txn.table().txn, txn.table().dbi, &stat), MDB_SUCCESS);
  EXPECT_EQ(stat.ms_entries, 3u);  // the failed run's transaction was not committed
}

INSTANTIATE_TEST_SUITE_P(TemporalSchemes, TemporalMaintainTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
