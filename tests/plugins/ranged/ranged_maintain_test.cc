// Maintenance of the ranged store types (issue 14): Temporal Ranged State's retention and condensation per range,
// and deleting rows of both types, after which each index must be the one a shard of the remaining rows would
// have (rebuilt from the data table) and every lookup must match a brute-force model. Real plugins, real LMDB.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/ranged_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DeleteRows;
using ::planb::testing::DumpRanged;
using ::planb::testing::DumpStoreTable;
using ::planb::testing::LookupRange;
using ::planb::testing::MaintainResult;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::PutRanges;
using ::planb::testing::RangedHit;
using ::planb::testing::RangedRow;
using ::planb::testing::RangeInput;
using ::planb::testing::RangeModel;
using ::planb::testing::RunMaintain;
using ::planb::testing::Span;
using ::planb::testing::TempDir;

using Inputs = std::vector<RangeInput>;
using RawRows = std::vector<std::pair<std::string, std::string>>;
// (from, to, time) -> value
using Versions = std::map<std::tuple<int64_t, int64_t, int64_t>, std::string>;

class RangedMaintainTest : public ::testing::Test {
 protected:
  void Use(const char* type) {
    const Status s = CreateMapPlugins(MakeMapConfig("m", type, ""), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> Shard(const Versions& versions) {
    std::shared_ptr<MapEnv> env;
    Status s = CreateMapEnv(dir_ / ("s" + std::to_string(envs_++)), plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    Inputs inputs;
    for (const auto& [at, value] : versions)
      inputs.push_back(Span(std::get<0>(at), std::get<1>(at), value, std::get<2>(at)));
    s = PutRanges(env, inputs);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static Versions Data(const MapEnv& env, bool temporal) {
    std::vector<RangedRow> rows;
    const Status s = DumpRanged(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    Versions out;
    for (const RangedRow& row : rows) out[{row.from, row.to, temporal ? row.time_ms : 0}] = row.value;
    return out;
  }

  static RawRows Index(const MapEnv& env) {
    RawRows rows;
    const Status s = DumpStoreTable(env, 0, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  // Every lookup at numbers around the ranges' edges (and at times around the versions') against a brute-force
  // model of `versions`; the index must also be byte for byte the one a fresh shard of `versions` gets.
  void ExpectMatches(const MapEnv& env, const Versions& versions, bool temporal, std::mt19937_64* random) {
    EXPECT_EQ(Index(env), Index(*Shard(versions))) << "the index is not the one of the remaining rows";
    RangeModel model;
    for (const auto& [at, value] : versions) model.Add(std::get<0>(at), std::get<1>(at), std::get<2>(at), value);
    auto pick = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(*random); };
    size_t wrong = 0;
    for (int i = 0; i < 3000 && wrong < 10; ++i) {
      const int64_t number = pick(-50, 1100);
      const int64_t time = temporal ? pick(-5, 1005) : 0;
      const RangedHit want = model.Lookup(number, time);
      const RangedHit got = LookupRange(env, number, time);
      if (got.code != want.code || got.value != want.value || got.from != want.from || got.to != want.to ||
          got.time_ms != want.time_ms) {
        ++wrong;
        ADD_FAILURE() << "lookup " << number << " at " << time << ": got " << ::testing::PrintToString(got) << ", want "
                      << ::testing::PrintToString(want);
      }
    }
  }

  // Random versions of random ranges (nesting and overlapping), with few distinct values so that repeats occur.
  static Versions RandomVersions(std::mt19937_64* random, size_t ranges, size_t versions, bool disjoint) {
    auto pick = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(*random); };
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t i = 0; i < ranges; ++i) {
      if (disjoint) {
        spans.emplace_back(static_cast<int64_t>(i) * 10, static_cast<int64_t>(i) * 10 + pick(0, 9));
      } else {
        const int64_t from = pick(0, 1000);
        spans.emplace_back(from, from + (pick(0, 3) == 0 ? pick(0, 500) : pick(0, 20)));
      }
    }
    Versions out;
    for (size_t i = 0; i < versions; ++i) {
      const auto [from, to] = spans[static_cast<size_t>(pick(0, static_cast<int64_t>(spans.size()) - 1))];
      out[{from, to, pick(0, 1000)}] = "v" + std::to_string(pick(0, 2));
    }
    return out;
  }

  static MaintainResult Maintain(const std::shared_ptr<MapEnv>& env, const MaintainRequest& request) {
    MaintainResult result;
    const Status s = RunMaintain(env, request, &result);
    EXPECT_TRUE(s.ok()) << s.message();
    return result;
  }

  TempDir dir_;
  int envs_ = 0;
  std::shared_ptr<const MapPlugins> plugins_;
};

// What maintenance must leave, worked out independently: per range in time order, rows before `retain_from` go,
// and a row before `cut` whose value equals the range's previous kept row's goes, unless another range overlaps
// the range (then condensing could change answers: it is left alone).
Versions Expected(const Versions& versions, const MaintainRequest& request) {
  std::set<std::pair<int64_t, int64_t>> ranges;
  for (const auto& [at, value] : versions) ranges.insert({std::get<0>(at), std::get<1>(at)});
  std::set<std::pair<int64_t, int64_t>> overlapping;
  for (const auto& a : ranges) {
    for (const auto& b : ranges) {
      if (a != b && a.first <= b.second && b.first <= a.second) overlapping.insert(a);
    }
  }
  Versions out;
  std::pair<int64_t, int64_t> range{0, 0};
  const std::string* previous = nullptr;
  for (const auto& [at, value] : versions) {
    const auto [from, to, time] = at;
    if (previous == nullptr || range != std::make_pair(from, to)) previous = nullptr;
    range = {from, to};
    if (request.retain && time < request.retain_from_ms) continue;
    if (request.condense && time < request.condense_before_ms && previous != nullptr && *previous == value &&
        overlapping.count(range) == 0) {
      continue;
    }
    out[at] = value;
    previous = &value;
  }
  return out;
}

TEST_F(RangedMaintainTest, TemporalRangedRetainsAndCondensesPerRange) {
  Use("temporal_ranged");
  auto env = Shard({{{0, 10, 100}, "x"},
                    {{0, 10, 200}, "x"},
                    {{0, 10, 300}, "y"},
                    {{0, 10, 400}, "x"},
                    {{11, 16, 50}, "x"},
                    {{11, 16, 150}, "x"},  // another range: its first row stays
                    {{20, 30, 99}, "gone"},
                    {{20, 30, 100}, "at"},
                    {{40, 40, 10}, "all gone"}});
  MaintainRequest request;
  request.retain = true;
  request.retain_from_ms = 100;
  request.condense = true;
  request.condense_before_ms = 400;  // 0..10 at 400 is at the cut: it stays
  const MaintainResult result = Maintain(env, request);
  EXPECT_EQ(result.stats.rows_examined, 9u);
  EXPECT_EQ(result.stats.rows_deleted, 3u);    // 11..16 at 50, 20..30 at 99, 40..40
  EXPECT_EQ(result.stats.rows_condensed, 1u);  // 0..10 at 200
  const Versions want = {
      {{0, 10, 100}, "x"}, {{0, 10, 300}, "y"}, {{0, 10, 400}, "x"}, {{11, 16, 150}, "x"}, {{20, 30, 100}, "at"}};
  EXPECT_EQ(Data(*env, true), want);
  EXPECT_EQ(LookupRange(*env, 40, 1000).code, Code::kNotFound);  // the index no longer lists 40..40
  EXPECT_EQ(Index(*env), Index(*Shard(want)));
}

// Property (f), (c), (d) for temporal ranged: random overlapping versions, random retention and condensation; the
// rows left are exactly the independent expectation, the index is rebuilt, every lookup matches a model of the
// rows left, and a second run changes nothing.
TEST_F(RangedMaintainTest, TemporalRangedRandomMaintenanceMatchesAModel) {
  Use("temporal_ranged");
  std::mt19937_64 random(1416);
  for (int round = 0; round < 4; ++round) {
    Versions versions = RandomVersions(&random, 150, 1500, false);
    for (int i = 0; i < 30; ++i) {  // ranges whose every version is early: retention takes them whole
      const int64_t from = std::uniform_int_distribution<int64_t>(0, 1000)(random);
      versions[{from, from + i, std::uniform_int_distribution<int64_t>(0, 200)(random)}] = "early";
    }
    auto env = Shard(versions);
    MaintainRequest request;
    request.condense = round != 1;
    request.condense_before_ms = std::uniform_int_distribution<int64_t>(300, 1001)(random);
    request.retain = round != 0;
    request.retain_from_ms = std::uniform_int_distribution<int64_t>(201, 600)(random);
    const MaintainResult first = Maintain(env, request);
    const Versions want = Expected(versions, request);
    EXPECT_EQ(first.stats.rows_examined, versions.size());
    EXPECT_EQ(versions.size() - want.size(), first.stats.rows_deleted + first.stats.rows_condensed);
    const Versions after = Data(*env, true);
    EXPECT_EQ(after, want);
    ExpectMatches(*env, want, true, &random);
    const RawRows index = Index(*env);
    const MaintainResult second = Maintain(env, request);
    EXPECT_EQ(second.stats.rows_deleted + second.stats.rows_condensed, 0u);
    EXPECT_EQ(Data(*env, true), after);
    EXPECT_EQ(Index(*env), index);
  }
}

// Property (a): every lookup gives the same value after condensation as before, with disjoint ranges (all
// condensed) and with nesting, overlapping ones (ranges another overlaps are left alone: condensing them could
// change which range wins).
class RangedCondensationAnswers : public RangedMaintainTest, public ::testing::WithParamInterface<bool> {};

TEST_P(RangedCondensationAnswers, EveryLookupAnswersTheSame) {
  Use("temporal_ranged");
  std::mt19937_64 random(1417);
  Versions versions = RandomVersions(&random, 100, 2000, GetParam());
  if (!GetParam()) {  // beside the overlapping ranges, disjoint ones from 5000 on, which condense
    for (const auto& [at, value] : RandomVersions(&random, 50, 1000, true)) {
      versions[{std::get<0>(at) + 5000, std::get<1>(at) + 5000, std::get<2>(at)}] = value;
    }
  }
  auto env = Shard(versions);
  std::vector<std::tuple<int64_t, int64_t, RangedHit>> before;
  auto pick = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  for (int i = 0; i < 3000; ++i) {
    const int64_t number = pick(-5, 1005) + (pick(0, 1) == 0 ? 0 : 5000);
    const int64_t time = pick(-5, 1005);
    before.emplace_back(number, time, LookupRange(*env, number, time));
  }
  MaintainRequest request;
  request.condense = true;
  request.condense_before_ms = 700;
  const MaintainResult result = Maintain(env, request);
  EXPECT_GT(result.stats.rows_condensed, 100u);
  EXPECT_EQ(Data(*env, true), Expected(versions, request));
  for (const auto& [number, time, hit] : before) {
    const RangedHit now = LookupRange(*env, number, time);
    EXPECT_EQ(now.code, hit.code) << number << " at " << time;
    EXPECT_EQ(now.value, hit.value) << number << " at " << time;
  }
}

INSTANTIATE_TEST_SUITE_P(DisjointOrOverlapping, RangedCondensationAnswers, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Disjoint" : "Overlapping";
                         });

TEST_F(RangedMaintainTest, TemporalRangedDeletesRebuildTheIndexOnlyWhenARangeWent) {
  Use("temporal_ranged");
  std::mt19937_64 random(1418);
  const Versions versions = RandomVersions(&random, 200, 1200, false);
  auto env = Shard(versions);
  // Some versions of every range go; all versions of some ranges.
  const RawRows index_before = Index(*env);
  uint64_t deleted = 0;
  ASSERT_TRUE(
      DeleteRows(
          env, [](const Row& row) { return row.effective_time_ms % 3 == 0 && row.range_from % 2 == 0; }, &deleted)
          .ok());
  Versions want = versions;
  for (auto it = want.begin(); it != want.end();) {
    it = std::get<2>(it->first) % 3 == 0 && std::get<0>(it->first) % 2 == 0 ? want.erase(it) : std::next(it);
  }
  EXPECT_EQ(deleted, versions.size() - want.size());
  EXPECT_EQ(Data(*env, true), want);
  ExpectMatches(*env, want, true, &random);

  ASSERT_TRUE(DeleteRows(
                  env, [](const Row& row) { return row.range_from % 5 == 0; }, &deleted)
                  .ok());
  for (auto it = want.begin(); it != want.end();) it = std::get<0>(it->first) % 5 == 0 ? want.erase(it) : std::next(it);
  EXPECT_EQ(Data(*env, true), want);
  ExpectMatches(*env, want, true, &random);
  EXPECT_NE(Index(*env), index_before);

  // Deleting nothing leaves the index as it is.
  const RawRows index = Index(*env);
  ASSERT_TRUE(DeleteRows(
                  env, [](const Row&) { return false; }, &deleted)
                  .ok());
  EXPECT_EQ(deleted, 0u);
  EXPECT_EQ(Index(*env), index);
}

TEST_F(RangedMaintainTest, RangedDeletesRebuildTheSegmentIndex) {
  Use("ranged");
  std::mt19937_64 random(1419);
  for (int round = 0; round < 3; ++round) {
    Versions versions;
    for (const auto& [at, value] : RandomVersions(&random, 400, 400, false)) {
      versions[{std::get<0>(at), std::get<1>(at), 0}] = value;
    }
    auto env = Shard(versions);
    const int modulo = 2 + round;
    uint64_t deleted = 0;
    ASSERT_TRUE(DeleteRows(
                    env, [&](const Row& row) { return (row.range_from + row.range_to) % modulo == 0; }, &deleted)
                    .ok());
    Versions want;
    for (const auto& [at, value] : versions) {
      if ((std::get<0>(at) + std::get<1>(at)) % modulo != 0) want[at] = value;
    }
    EXPECT_EQ(deleted, versions.size() - want.size());
    EXPECT_EQ(Data(*env, false), want);
    ExpectMatches(*env, want, false, &random);
  }
}

TEST_F(RangedMaintainTest, RangedMaintainIsANoOp) {
  Use("ranged");
  auto env = Shard({{{0, 10, 0}, "x"}, {{5, 6, 0}, "x"}});
  MaintainRequest request;  // the host never asks; asked anyway, nothing happens
  request.retain = true;
  request.retain_from_ms = INT64_MAX;
  request.condense = true;
  request.condense_before_ms = INT64_MAX;
  const Versions before = Data(*env, false);
  const RawRows index = Index(*env);
  const MaintainResult result = Maintain(env, request);
  EXPECT_EQ(result.stats.rows_deleted + result.stats.rows_condensed, 0u);
  EXPECT_EQ(Data(*env, false), before);
  EXPECT_EQ(Index(*env), index);
}

TEST_F(RangedMaintainTest, TemporalRangedRefusesACorruptRowAndChangesNothing) {
  Use("temporal_ranged");
  auto env = Shard({{{0, 10, 1}, "x"}, {{0, 10, 2}, "x"}});
  {
    testing::MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    std::string key(16, '\xff');  // from + to without a time
    MDB_val k{key.size(), key.data()};
    MDB_val v{1, const_cast<char*>("\x01")};
    ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }
  MaintainRequest request;
  request.condense = true;
  request.condense_before_ms = INT64_MAX;
  MaintainResult result;
  const Status s = RunMaintain(env, request, &result);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.message();
  EXPECT_NE(s.message().find("row key is 16 bytes, not 24"), std::string::npos) << s.message();
  testing::MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, false).ok());
  MDB_stat stat;
  ASSERT_EQ(mdb_stat(txn.table().txn, txn.table().dbi, &stat), MDB_SUCCESS);
  EXPECT_EQ(stat.ms_entries, 3u);  // the failed run was not committed
}

}  // namespace
}  // namespace planb
