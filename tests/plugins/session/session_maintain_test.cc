// Maintenance of Session shards (issue 14) with each key scheme: retention by a session's end, condensation of
// overlapping or touching sessions, deleting rows and the scheme's sweep, on real LMDB files through the real
// plugins, checked against models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
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
using ::planb::testing::PutEvents;
using ::planb::testing::RandomInput;
using ::planb::testing::RunMaintain;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::SessionEvent;
using ::planb::testing::TempDir;

using Sessions = std::vector<std::pair<int64_t, int64_t>>;  // [start, end], inclusive
using Rows = std::map<std::string, Sessions>;               // key -> sessions in row order

constexpr int64_t kMax = INT64_MAX;

// The instants covered, as maximal runs: sorted, overlapping and touching sessions joined.
Sessions Union(Sessions sessions) {
  std::sort(sessions.begin(), sessions.end());
  Sessions out;
  for (const auto& s : sessions) {
    if (!out.empty() && (out.back().second == kMax || s.first <= out.back().second + 1)) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

class SessionMaintainTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s =
        CreateMapPlugins(MakeMapConfig("m", "session", GetParam().scheme, GetParam().Options()), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> Shard(const std::vector<SessionEvent>& events) {
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

  static Rows RowsOf(const MapEnv& env) {
    Rows rows;
    for (const FullRow& row : Dump(env)) rows[row.key].emplace_back(row.start_ms, row.end_ms);
    return rows;
  }

  static MaintainResult Maintain(const std::shared_ptr<MapEnv>& env, const MaintainRequest& request) {
    MaintainResult result;
    const Status s = RunMaintain(env, request, &result);
    EXPECT_TRUE(s.ok()) << s.message();
    return result;
  }

  static MaintainRequest Request(bool retain, int64_t retain_from, bool condense, int64_t condense_before) {
    MaintainRequest request;
    request.retain = retain;
    request.retain_from_ms = retain_from;
    request.condense = condense;
    request.condense_before_ms = condense_before;
    return request;
  }

  TempDir dir_;
  int envs_ = 0;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_P(SessionMaintainTest, RetentionGoesByTheEndExactToTheMillisecond) {
  const int64_t cut = 1700000000000;
  auto env = Shard({{"a", cut - 10, 9},
                    {"a", cut - 10, 10},
                    {"a", cut - 5, 100},
                    {"b", cut - 1, std::nullopt},
                    {"c", cut, std::nullopt},
                    {"d", INT64_MIN, std::nullopt}});
  const MaintainResult result = Maintain(env, Request(true, cut, false, 0));
  EXPECT_EQ(result.stats.rows_examined, 6u);
  EXPECT_EQ(result.stats.rows_deleted, 3u);  // a [cut-10, cut-1], b at cut-1, d
  const Rows want = {{"a", {{cut - 10, cut}, {cut - 5, cut + 95}}}, {"c", {{cut, cut}}}};
  EXPECT_EQ(RowsOf(*env), want);
  EXPECT_EQ(LookupAt(*env, "b", cut - 1).code, Code::kNotFound);
  EXPECT_EQ(LookupAt(*env, "a", cut - 10).code, Code::kOk);  // a kept session still starts before the cut
  EXPECT_EQ(SchemeTableProblems(*env), "");
}

TEST_P(SessionMaintainTest, OverlappingAndTouchingSessionsBecomeOneWhenAllEndBeforeTheCut) {
  auto env = Shard({{"a", 0, 10},
                    {"a", 11, 9},  // touch: [0, 10] + [11, 20]
                    {"a", 30, 10},
                    {"a", 35, 15},
                    {"a", 36, 1},  // overlap and nest: [30, 50]
                    {"a", 52, 3},  // 52 > 50 + 1: apart
                    {"a", 60, 10},
                    {"a", 65, 100},  // the second ends after the cut: both stay
                    {"b", 0, 10},
                    {"b", 5, 5}});  // [0, 10] contains [5, 10]: one row
  const MaintainResult result = Maintain(env, Request(false, 0, true, 100));
  EXPECT_EQ(result.stats.rows_condensed, 4u);
  const Rows want = {{"a", {{0, 20}, {30, 50}, {52, 55}, {60, 70}, {65, 165}}}, {"b", {{0, 10}}}};
  EXPECT_EQ(RowsOf(*env), want);
  EXPECT_EQ(SchemeTableProblems(*env), "");
}

TEST_P(SessionMaintainTest, AMergedSessionLongerThanAnyBeforeRaisesTheLongestSession) {
  // [0, 100] and [101, 200] (longest 100) become [0, 200]; a later short session inside it then makes a lookup
  // at 190 walk back past it, which only a longest session of at least 190 allows.
  auto env = Shard({{"k", 0, 100}, {"k", 101, 99}});
  EXPECT_EQ(Maintain(env, Request(false, 0, true, 1000)).stats.rows_condensed, 1u);
  ASSERT_TRUE(PutEvents(env, {{"k", 150, 1}}).ok());
  const Answer answer = LookupAt(*env, "k", 190);
  EXPECT_EQ(answer.code, Code::kOk) << answer.error;
  EXPECT_EQ(answer.start_ms, 0);
  EXPECT_EQ(answer.end_ms, 200);
}

TEST_P(SessionMaintainTest, ExtremeTimesCondenseWithoutOverflow) {
  auto env = Shard({{"k", kMax - 10, 10}, {"k", kMax, std::nullopt}, {"k", INT64_MIN, 5}, {"k", INT64_MIN + 6, 0}});
  MaintainRequest request = Request(false, 0, true, kMax);  // [max-10, max] ends at the cut: stays
  EXPECT_EQ(Maintain(env, request).stats.rows_condensed, 1u);
  const Rows want = {{"k", {{INT64_MIN, INT64_MIN + 6}, {kMax - 10, kMax}, {kMax, kMax}}}};
  EXPECT_EQ(RowsOf(*env), want);
}

// Properties (b), (c), (d): random sessions; after maintenance each key's instants are exactly the union of its
// retained input sessions, every session ending at or after the cut is untouched, lookups hit where the union
// says, and a second run changes nothing.
TEST_P(SessionMaintainTest, RandomSessionsKeepTheirUnionAndTwiceEqualsOnce) {
  RandomInput random(1415);
  const std::vector<std::string> keys = random.DistinctTexts(60, 1, 40);
  for (int round = 0; round < 3; ++round) {
    std::vector<SessionEvent> events;
    for (int i = 0; i < 1500; ++i) {
      events.push_back({keys[random.Index(keys.size())], random.Between(0, 20000),
                        random.Percent(20) ? std::nullopt : std::optional<int64_t>(random.Between(0, 60))});
    }
    auto env = Shard(events);
    const Rows before = RowsOf(*env);
    const bool retain = round != 0;
    const int64_t cut = random.Between(5000, 20100);
    const int64_t retain_from = retain ? random.Between(-10, cut) : INT64_MIN;
    const MaintainRequest request = Request(retain, retain_from, true, cut);

    const MaintainResult first = Maintain(env, request);
    const Rows after = RowsOf(*env);
    EXPECT_GT(first.stats.rows_condensed, 0u);
    size_t before_rows = 0;
    size_t after_rows = 0;
    for (const auto& [key, sessions] : before) before_rows += sessions.size();
    for (const auto& [key, sessions] : after) after_rows += sessions.size();
    EXPECT_EQ(first.stats.rows_examined, before_rows);
    EXPECT_EQ(after_rows, before_rows - first.stats.rows_deleted - first.stats.rows_condensed);

    for (const auto& [key, sessions] : before) {
      Sessions kept;
      Sessions late;  // end at or after the cut: untouched
      for (const auto& s : sessions) {
        if (s.second >= retain_from) kept.push_back(s);
        if (s.second >= retain_from && s.second >= cut) late.push_back(s);
      }
      auto found = after.find(key);
      const Sessions now = found == after.end() ? Sessions() : found->second;
      EXPECT_EQ(Union(now), Union(kept)) << key;
      Sessions now_late;
      for (const auto& s : now) {
        if (s.second >= cut) now_late.push_back(s);
      }
      EXPECT_EQ(now_late, late) << key;
      // Condensed sessions never touch one another.
      Sessions early;
      for (const auto& s : now) {
        if (s.second < cut) early.push_back(s);
      }
      EXPECT_EQ(Union(early).size(), early.size()) << key;
      const Sessions covered = Union(kept);
      for (int probe = 0; probe < 20; ++probe) {
        const int64_t t = random.Between(-5, 20100);
        const bool in =
            std::any_of(covered.begin(), covered.end(), [&](const auto& s) { return s.first <= t && t <= s.second; });
        EXPECT_EQ(LookupAt(*env, key, t).code, in ? Code::kOk : Code::kNotFound) << key << " at " << t;
      }
    }
    EXPECT_EQ(SchemeTableProblems(*env), "");

    const MaintainResult second = Maintain(env, request);
    EXPECT_EQ(second.stats.rows_deleted, 0u);
    EXPECT_EQ(second.stats.rows_condensed, 0u);
    EXPECT_EQ(RowsOf(*env), after);
  }
}

// Property (e) for a type without values: deleting every session of some keys leaves the lookup tables exact.
TEST_P(SessionMaintainTest, DeletingEverySessionOfSomeKeysLeavesTheSchemeTablesExact) {
  RandomInput random(78);
  const std::vector<std::string> keys = random.DistinctTexts(300, 1, 60);
  std::vector<SessionEvent> events;
  for (int i = 0; i < 1200; ++i) events.push_back({keys[random.Index(keys.size())], random.Between(0, 1000), 5});
  auto env = Shard(events);
  const Rows before = RowsOf(*env);
  std::set<std::string> doomed;
  for (const auto& entry : before) {
    if (random.Percent(50)) doomed.insert(entry.first);
  }
  uint64_t deleted = 0;
  const Status s = DeleteRows(
      env, [&](const Row& row) { return doomed.count(std::string(row.key.view())) != 0; }, &deleted);
  ASSERT_TRUE(s.ok()) << s.message();
  uint64_t want_deleted = 0;
  for (const std::string& key : doomed) want_deleted += before.at(key).size();
  EXPECT_EQ(deleted, want_deleted);
  EXPECT_EQ(SchemeTableProblems(*env), "");
  Rows want = before;
  for (const std::string& key : doomed) want.erase(key);
  EXPECT_EQ(RowsOf(*env), want);
  for (const auto& [key, sessions] : before) {
    EXPECT_EQ(LookupAt(*env, key, sessions.front().first).code, doomed.count(key) != 0 ? Code::kNotFound : Code::kOk)
        << key;
  }
}

TEST_P(SessionMaintainTest, ARowEndingBeforeItStartsFailsMaintenanceAndChangesNothing) {
  auto env = Shard({{"a", 10, 5}, {"a", 12, 5}});
  std::string key = Dump(*env)[0].lmdb_key;
  {
    testing::MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    MDB_val k{key.size(), key.data()};
    MDB_val v;
    ASSERT_EQ(mdb_get(txn.table().txn, txn.table().dbi, &k, &v), MDB_SUCCESS);
    const std::string value(static_cast<const char*>(v.mv_data), v.mv_size);
    key.replace(key.size() - 8, 8, std::string("\x80\0\0\0\0\0\0\x01", 8));  // end 1, before start 10
    k = MDB_val{key.size(), key.data()};
    v = MDB_val{value.size(), const_cast<char*>(value.data())};
    ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }
  MaintainResult result;
  const Status s = RunMaintain(env, Request(true, 100, true, 100), &result);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_NE(s.message().find("ends (1) before it starts (10)"), std::string::npos) << s.message();
  testing::MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, false).ok());
  MDB_stat stat;
  ASSERT_EQ(mdb_stat(txn.table().txn, txn.table().dbi, &stat), MDB_SUCCESS);
  EXPECT_EQ(stat.ms_entries, 3u);  // the failed run was not committed
}

INSTANTIATE_TEST_SUITE_P(SessionSchemes, SessionMaintainTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
