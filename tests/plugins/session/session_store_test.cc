// The Session store type with each key scheme, loaded through the real registry, on real LMDB files.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/keyed_search.h"
#include "support/clashing_keys.h"
#include "support/heap_trap.h"
#include "support/map_fixture.h"
#include "support/scheme_matrix.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::Answer;
using ::planb::testing::ClashingKeys;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DumpFullRows;
using ::planb::testing::FullRow;
using ::planb::testing::LookupAt;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapSection;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::PutEvents;
using ::planb::testing::RandomInput;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::SessionEvent;
using ::planb::testing::SessionXml;
using ::planb::testing::TempDir;
using ::planb::testing::ToRecord;
using ::planb::testing::WriteFile;

using Events = std::vector<SessionEvent>;
using Session = std::pair<int64_t, int64_t>;  // start, end
// key -> its sessions
using Model = std::map<std::string, std::set<Session>>;

constexpr int64_t kMin = INT64_MIN;
constexpr int64_t kMax = INT64_MAX;
constexpr std::string_view kMaxDurationKey = "max_duration_ms";  // in the plugin's "stats" table

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

::testing::AssertionResult In(const Answer& answer, std::string_view key, int64_t start, int64_t end) {
  if (answer.code != Code::kOk || answer.key != key || answer.start_ms != start || answer.end_ms != end) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(answer) << ", want [" << start << ", "
                                         << end << "]";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Out(const Answer& answer) {
  if (answer.code != Code::kNotFound) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(answer) << ", want a miss";
  }
  return ::testing::AssertionSuccess();
}

// What a lookup must return according to `model`: of the sessions containing `time`, the one with the latest
// start, then the latest end.
std::optional<Session> Expected(const Model& model, const std::string& key, int64_t time) {
  auto k = model.find(key);
  if (k == model.end()) return std::nullopt;
  std::optional<Session> best;
  for (const Session& session : k->second) {
    if (session.first <= time && time <= session.second) best = session;  // the set is ordered: the last wins
  }
  return best;
}

Model Contents(const std::vector<FullRow>& rows) {
  Model contents;
  for (const FullRow& row : rows) {
    EXPECT_TRUE(row.value.empty()) << row.key;
    EXPECT_TRUE(contents[row.key].emplace(row.start_ms, row.end_ms).second) << "two rows for " << row.key;
  }
  return contents;
}

// The recorded longest session of `env`, or nullopt when none is recorded.
std::optional<uint64_t> MaxDuration(const std::shared_ptr<MapEnv>& env) {
  MapTxn txn;
  EXPECT_TRUE(txn.Begin(env, false).ok());
  EXPECT_NE(txn.table().store_tables, nullptr);
  if (txn.table().store_tables == nullptr) return std::nullopt;
  MDB_val k = Bytes(kMaxDurationKey).mdb();
  MDB_val v;
  if (mdb_get(txn.table().txn, txn.table().store_tables[0], &k, &v) != MDB_SUCCESS) return std::nullopt;
  EXPECT_EQ(v.mv_size, 8u);
  return GetU64(static_cast<const uint8_t*>(v.mv_data));
}

class SessionStoreTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s = CreateMapPlugins(MakeMapConfig("m", "session", GetParam().scheme, GetParam().Options()), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> NewEnv(const std::string& name) {
    std::shared_ptr<MapEnv> env;
    const Status s = CreateMapEnv(dir_ / name, plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const std::string& name, const Events& events) {
    std::shared_ptr<MapEnv> env = NewEnv(name);
    const Status s = PutEvents(env, events);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static std::vector<FullRow> Dump(const MapEnv& env) {
    std::vector<FullRow> rows;
    const Status s = DumpFullRows(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  Code PutOne(const std::shared_ptr<MapEnv>& env, const Record& record, std::string* message) {
    MapTxn txn;
    EXPECT_TRUE(txn.Begin(env, true).ok());
    ErrorBuffer error;
    const Code code = plugins_->store()->Put(txn.table(), record, &error);
    *message = error.message;
    if (code == Code::kOk) {
      EXPECT_TRUE(txn.Commit().ok());
    }
    return code;
  }

  // Replaces (or with nullopt removes) the recorded longest session.
  void SetMaxDuration(const std::shared_ptr<MapEnv>& env, std::optional<uint64_t> duration) {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    MDB_val k = Bytes(kMaxDurationKey).mdb();
    if (duration) {
      uint8_t bytes[8];
      PutU64(bytes, *duration);
      MDB_val v{8, bytes};
      ASSERT_EQ(mdb_put(txn.table().txn, txn.table().store_tables[0], &k, &v, 0), MDB_SUCCESS);
    } else {
      ASSERT_EQ(mdb_del(txn.table().txn, txn.table().store_tables[0], &k, nullptr), MDB_SUCCESS);
    }
    ASSERT_TRUE(txn.Commit().ok());
  }

  // The rows a scan of `range` visits, as the host's query scan walks it (memcmp order, inclusive bounds).
  static std::vector<FullRow> RowsIn(const MapEnv& env, const KeyRange& range) {
    std::vector<FullRow> in;
    for (const FullRow& row : Dump(env)) {
      const std::string_view key = row.lmdb_key;  // char_traits<char> compares as unsigned char, like memcmp
      if (range.has_lower && key < range.lower.view().view()) continue;
      if (range.has_upper && key > range.upper.view().view()) continue;
      in.push_back(row);
    }
    return in;
  }

  Code Scan(const std::shared_ptr<MapEnv>& env, const ScanBounds& bounds, KeyRange* range) {
    MapTxn txn;
    EXPECT_TRUE(txn.Begin(env, false).ok());
    ErrorBuffer error;
    return plugins_->store()->ScanRange(txn.table(), bounds, range, &error);
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_P(SessionStoreTest, BoundariesAreInclusive) {
  auto env = Batch("b", {{"a", 1000, 500}, {"b", 2000, std::nullopt}, {"c", 3000, 0}});
  EXPECT_TRUE(Out(LookupAt(*env, "a", 999)));
  EXPECT_TRUE(In(LookupAt(*env, "a", 1000), "a", 1000, 1500));  // the start
  EXPECT_TRUE(In(LookupAt(*env, "a", 1250), "a", 1000, 1500));
  EXPECT_TRUE(In(LookupAt(*env, "a", 1500), "a", 1000, 1500));  // the end
  EXPECT_TRUE(Out(LookupAt(*env, "a", 1501)));
  // Without a timeout (or with a zero one) a session is the single instant.
  EXPECT_TRUE(Out(LookupAt(*env, "b", 1999)));
  EXPECT_TRUE(In(LookupAt(*env, "b", 2000), "b", 2000, 2000));
  EXPECT_TRUE(Out(LookupAt(*env, "b", 2001)));
  EXPECT_TRUE(Out(LookupAt(*env, "c", 2999)));
  EXPECT_TRUE(In(LookupAt(*env, "c", 3000), "c", 3000, 3000));
  EXPECT_TRUE(Out(LookupAt(*env, "c", 3001)));
  EXPECT_TRUE(Out(LookupAt(*env, "d", 1000)));
  EXPECT_TRUE(Out(LookupAt(*env, "A", 1000)));  // keys are case-sensitive
  EXPECT_TRUE(Out(LookupAt(*env, "a", kMin)));
  EXPECT_TRUE(Out(LookupAt(*env, "a", kMax)));
}

TEST_P(SessionStoreTest, TheContainingSessionWithTheLatestStartWins) {
  Events events = {{"a", 0, 1000}, {"a", 500, 100}, {"a", 2000, 10}, {"a", 2000, 50}, {"a", 2000, 20}};
  // A long session followed by many short ones: the lookup walks back past them to the long one.
  events.push_back({"b", 10000, 1000000});
  for (int64_t i = 1; i <= 500; ++i) events.push_back({"b", 10000 + 1000 * i, 10});
  auto env = Batch("b", events);
  EXPECT_TRUE(In(LookupAt(*env, "a", 550), "a", 500, 600));
  EXPECT_TRUE(In(LookupAt(*env, "a", 700), "a", 0, 1000));  // [500, 600] is later but does not contain 700
  EXPECT_TRUE(In(LookupAt(*env, "a", 1000), "a", 0, 1000));
  EXPECT_TRUE(Out(LookupAt(*env, "a", 1001)));
  EXPECT_TRUE(In(LookupAt(*env, "a", 2005), "a", 2000, 2050));  // the same start: the latest end
  EXPECT_TRUE(In(LookupAt(*env, "a", 2030), "a", 2000, 2050));
  EXPECT_TRUE(Out(LookupAt(*env, "a", 2051)));
  EXPECT_TRUE(In(LookupAt(*env, "b", 10000 + 1000 * 250 + 5), "b", 10000 + 1000 * 250, 10000 + 1000 * 250 + 10));
  EXPECT_TRUE(In(LookupAt(*env, "b", 10000 + 1000 * 250 + 500), "b", 10000, 1010000));
  EXPECT_TRUE(In(LookupAt(*env, "b", 1010000), "b", 10000, 1010000));
  EXPECT_TRUE(Out(LookupAt(*env, "b", 1010001)));
}

TEST_P(SessionStoreTest, ExtremeTimes) {
  auto env = Batch("b", {{"x", kMin, std::nullopt},
                         {"x", kMin, kMax},  // [kMin, -1]: the longest representable session
                         {"y", kMax - 10, 10},
                         {"z", kMax, std::nullopt},
                         {"w", -100, 50}});
  EXPECT_TRUE(In(LookupAt(*env, "x", kMin), "x", kMin, -1));
  EXPECT_TRUE(In(LookupAt(*env, "x", -1), "x", kMin, -1));
  EXPECT_TRUE(Out(LookupAt(*env, "x", 0)));
  EXPECT_TRUE(Out(LookupAt(*env, "y", kMax - 11)));
  EXPECT_TRUE(In(LookupAt(*env, "y", kMax - 10), "y", kMax - 10, kMax));
  EXPECT_TRUE(In(LookupAt(*env, "y", kMax), "y", kMax - 10, kMax));
  EXPECT_TRUE(In(LookupAt(*env, "z", kMax), "z", kMax, kMax));
  EXPECT_TRUE(Out(LookupAt(*env, "z", kMax - 1)));
  EXPECT_TRUE(Out(LookupAt(*env, "w", -101)));
  EXPECT_TRUE(In(LookupAt(*env, "w", -50), "w", -100, -50));
  EXPECT_TRUE(Out(LookupAt(*env, "w", -49)));
  EXPECT_EQ(MaxDuration(env), uint64_t{kMax});
}

TEST_P(SessionStoreTest, RefusesRecordsThatAreNotSessions) {
  auto env = NewEnv("b");
  const SessionEvent event{"k", 1000, 10};
  std::string message;
  Record reference = ToRecord(event);
  reference.kind = RecordKind::kReference;
  EXPECT_EQ(PutOne(env, reference, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "<reference>")) << message;
  Record no_key = ToRecord(event);
  no_key.has_key = false;
  EXPECT_EQ(PutOne(env, no_key, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "no <key>")) << message;
  Record negative = ToRecord(event);
  negative.timeout_ms = -1;
  EXPECT_EQ(PutOne(env, negative, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "negative")) << message;
  EXPECT_EQ(PutOne(env, ToRecord(SessionEvent{"k", kMax - 10, 11}), &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "timeout")) << message;
  EXPECT_TRUE(Contains(message, "latest representable time")) << message;
  EXPECT_EQ(PutOne(env, ToRecord(SessionEvent{"k", 1, kMax}), &message), Code::kInvalidArgument) << "1 + kMax";
  EXPECT_TRUE(Dump(*env).empty());
  EXPECT_EQ(MaxDuration(env), std::nullopt);
}

TEST_P(SessionStoreTest, TheLongestSessionIsKeptAsAMaximum) {
  auto shard = NewEnv("shard");
  auto first = Batch("b1", {{"a", 0, 10}, {"b", 0, 500}, {"a", 100, 20}});
  EXPECT_EQ(MaxDuration(first), 500u);  // Put keeps it: the first batch of a map becomes its shard as it is
  ASSERT_TRUE(MergeInto(first, shard).ok());
  EXPECT_EQ(MaxDuration(shard), 500u);
  ASSERT_TRUE(MergeInto(Batch("b2", {{"c", 0, 30}}), shard).ok());
  EXPECT_EQ(MaxDuration(shard), 500u);  // a shorter batch leaves it
  auto longer = Batch("b3", {{"c", 50, 900}, {"d", 0, std::nullopt}});
  ASSERT_TRUE(MergeInto(longer, shard).ok());
  EXPECT_EQ(MaxDuration(shard), 900u);
  ASSERT_TRUE(MergeInto(longer, shard).ok());
  EXPECT_EQ(MaxDuration(shard), 900u);
  EXPECT_EQ(MaxDuration(Batch("b4", {{"d", 0, std::nullopt}})), 0u);
}

TEST_P(SessionStoreTest, LookupsLookBackOnlyAsFarAsTheLongestSession) {
  auto env = Batch("b", {{"a", 0, 1000}, {"a", 800, 10}, {"a", 5000, 10}});
  EXPECT_TRUE(In(LookupAt(*env, "a", 900), "a", 0, 1000));
  // With a (wrong) bound of 10 the lookup, walking back from [800, 810], stops before reaching the session that
  // starts at 0: proof that it does not walk every earlier session. (The last session starting at or before
  // the time is always checked: the bound only limits the walk.)
  SetMaxDuration(env, 10);
  EXPECT_TRUE(Out(LookupAt(*env, "a", 900)));
  EXPECT_TRUE(In(LookupAt(*env, "a", 5), "a", 0, 1000));
  EXPECT_TRUE(In(LookupAt(*env, "a", 5005), "a", 5000, 5010));
  // Without a recorded bound, every earlier session is considered.
  SetMaxDuration(env, std::nullopt);
  EXPECT_TRUE(In(LookupAt(*env, "a", 900), "a", 0, 1000));
}

// A reader keeps the longest session of its snapshot in the host's memo; a refresh must read it again, or a
// session longer than every earlier one, merged since, would be missed by lookups that walk back to it.
TEST_P(SessionStoreTest, AReaderReadsTheLongestSessionAgainAfterARefresh) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", 0, 10}, {"a", 100, 10}}), shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  EXPECT_TRUE(Out(LookupAt(reader, "a", 50)));  // a gap: walks back with the bound 10, now remembered
  ASSERT_TRUE(MergeInto(Batch("b2", {{"a", 20, 1000}, {"a", 30, 5}}), shard).ok());
  EXPECT_TRUE(Out(LookupAt(reader, "a", 50))) << "the reader's snapshot predates b2";
  ASSERT_TRUE(reader.Refresh().ok());
  // From [30, 35] the walk back must reach [20, 1020], which the old bound of 10 would stop short of.
  EXPECT_TRUE(In(LookupAt(reader, "a", 50), "a", 20, 1020));
  EXPECT_TRUE(In(LookupAt(reader, "a", 105), "a", 100, 110));
  SetMaxDuration(shard, 10);  // a wrong bound, read by the next snapshot alone
  EXPECT_TRUE(In(LookupAt(reader, "a", 50), "a", 20, 1020));
  ASSERT_TRUE(reader.Refresh().ok());
  EXPECT_TRUE(Out(LookupAt(reader, "a", 50)));
}

TEST_P(SessionStoreTest, DecodeRowFillsEveryFieldInKeyThenStartThenEndOrder) {
  auto env = Batch("b", {{"k1", 5, 5}, {"k2", -7, 3}, {"k1", -3, std::nullopt}, {"k1", 5, 1}, {"k2", 9, 0}});
  const std::vector<FullRow> rows = Dump(*env);
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, std::vector<Session>> sessions;
  std::string previous_key;
  std::set<std::string> finished;
  for (const FullRow& row : rows) {
    if (row.key != previous_key) {
      EXPECT_TRUE(finished.insert(row.key).second) << "rows of " << row.key << " are not contiguous";
      previous_key = row.key;
    }
    sessions[row.key].emplace_back(row.start_ms, row.end_ms);
    EXPECT_EQ(row.value, "");
  }
  EXPECT_EQ(sessions["k1"], (std::vector<Session>{{-3, -3}, {5, 6}, {5, 10}}));
  EXPECT_EQ(sessions["k2"], (std::vector<Session>{{-7, -4}, {9, 9}}));
}

TEST_P(SessionStoreTest, MergeOfASecondBatchAddsSessions) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", 100, 50}, {"b", 100, std::nullopt}}), shard).ok());
  MergeStats stats;
  const Status s =
      MergeInto(Batch("b2", {{"a", 100, 50}, {"a", 300, 50}, {"c", 0, 10}, {"a", 300, 50}}), shard, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.rows_read, 3u);  // the batch holds each session once
  EXPECT_EQ(Contents(Dump(*shard)), (Model{{"a", {{100, 150}, {300, 350}}}, {"b", {{100, 100}}}, {"c", {{0, 10}}}}));
  EXPECT_TRUE(In(LookupAt(*shard, "a", 150), "a", 100, 150));
  EXPECT_TRUE(Out(LookupAt(*shard, "a", 200)));
  EXPECT_TRUE(In(LookupAt(*shard, "a", 300), "a", 300, 350));
  EXPECT_TRUE(In(LookupAt(*shard, "b", 100), "b", 100, 100));
  EXPECT_TRUE(In(LookupAt(*shard, "c", 10), "c", 0, 10));
}

TEST_P(SessionStoreTest, MergingTheSameBatchTwiceLeavesTheSameShard) {
  Events first;
  Events second;
  for (int i = 0; i < 400; ++i) {
    for (int64_t t : {-100, 0, 100}) first.push_back({"key-" + std::to_string(i), t, 10});
  }
  for (int i = 200; i < 600; ++i) {
    for (int64_t t : {0, 50, 100}) second.push_back({"key-" + std::to_string(i), t, i % 3 == 0 ? 10 : 40});
  }
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", first), shard).ok());
  auto batch = Batch("b2", second);
  ASSERT_TRUE(MergeInto(batch, shard).ok());
  const std::vector<FullRow> once = Dump(*shard);
  const std::optional<uint64_t> max_once = MaxDuration(shard);
  EXPECT_EQ(max_once, 40u);
  EXPECT_GT(once.size(), first.size());

  MergeStats stats;
  ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
  EXPECT_EQ(stats.rows_read, second.size());
  EXPECT_EQ(Dump(*shard), once);  // every row, LMDB key included
  EXPECT_EQ(MaxDuration(shard), max_once);
}

Model ModelOf(const std::vector<Events>& batches) {
  Model model;
  for (const Events& events : batches) {
    for (const SessionEvent& e : events) model[e.key].emplace(e.time_ms, e.time_ms + e.timeout_ms.value_or(0));
  }
  return model;
}

// Every lookup of `keys` (and of one absent key) at times around each session's ends, in `env`, against `model`.
void ExpectLookupsMatch(const MapEnv& env, const std::vector<std::string>& keys, const Model& model) {
  std::vector<std::string> asked = keys;
  asked.push_back("clash-absent");
  std::vector<int64_t> times{INT64_MIN, INT64_MAX};
  for (const auto& [key, sessions] : model) {
    for (const Session& session : sessions) {
      times.insert(times.end(), {session.first - 1, session.first, session.second, session.second + 1});
    }
  }
  for (const std::string& key : asked) {
    for (int64_t time : times) {
      const std::optional<Session> want = Expected(model, key, time);
      const Answer answer = LookupAt(env, key, time);
      if (want) {
        EXPECT_TRUE(In(answer, key, want->first, want->second)) << key << " at " << time;
      } else {
        EXPECT_TRUE(Out(answer)) << key << " at " << time;
      }
    }
  }
}

// With hash_bits = 8 these keys share a hash (clash numbers in arrival order); their sessions interleave in
// time, so a lookup of one key lands beside another key's sessions under the same hash.
TEST_P(SessionStoreTest, ClashingKeysAreEachFoundAtEveryTime) {
  const std::vector<std::string> keys = ClashingKeys(3);
  const Events events = {{keys[0], 100, 50}, {keys[1], 120, 100}, {keys[0], 300, std::nullopt},
                         {keys[2], 50, 500}, {keys[1], 400, 10},  {keys[2], 1000, 0}};
  const Model model = ModelOf({events});
  auto batch = Batch("b", events);
  ExpectLookupsMatch(*batch, keys, model);
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(batch, shard).ok());
  ExpectLookupsMatch(*shard, keys, model);
  EXPECT_EQ(Contents(Dump(*shard)), model);
  if (GetParam().hash_bits != nullptr) {  // the keys did clash: three prefixes under one hash
    std::set<std::string> prefixes;
    const std::string scheme = GetParam().scheme;  // hybrid: a tag byte first; lookup_table: 4-byte ids
    const size_t size = scheme == "lookup_table" || scheme == "hybrid" ? 4 : scheme == "variable" ? 5 : 3;
    for (const FullRow& row : Dump(*shard)) prefixes.insert(row.lmdb_key.substr(0, size));
    EXPECT_EQ(prefixes.size(), 3u);
  }
}

// Clash numbers are local to each file: two streams merged in either order give the same sessions.
TEST_P(SessionStoreTest, TwoStreamsMergedInEitherOrderGiveTheSameShard) {
  const std::vector<std::string> keys = ClashingKeys(4);
  const Events first = {{keys[0], 10, 5}, {keys[1], 20, 30}, {keys[2], 30, std::nullopt}, {keys[0], 40, 1}};
  const Events second = {{keys[3], 15, 5}, {keys[2], 25, 10}, {keys[1], 35, 0}, {keys[0], 10, 5}};
  const Model model = ModelOf({first, second});
  auto forward = NewEnv("forward");
  ASSERT_TRUE(MergeInto(Batch("f1", first), forward).ok());
  ASSERT_TRUE(MergeInto(Batch("f2", second), forward).ok());
  auto backward = NewEnv("backward");
  ASSERT_TRUE(MergeInto(Batch("b2", second), backward).ok());
  ASSERT_TRUE(MergeInto(Batch("b1", first), backward).ok());
  EXPECT_EQ(Contents(Dump(*forward)), model);
  EXPECT_EQ(Contents(Dump(*backward)), model);
  ExpectLookupsMatch(*forward, keys, model);
  ExpectLookupsMatch(*backward, keys, model);
  const std::vector<FullRow> once = Dump(*forward);
  ASSERT_TRUE(MergeInto(Batch("f3", first), forward).ok());
  ASSERT_TRUE(MergeInto(Batch("f4", second), forward).ok());
  EXPECT_EQ(Dump(*forward), once);
}

TEST_P(SessionStoreTest, KeysUpToTheSchemesLimit) {
  // The direct scheme fits the key, its 2-byte length and the 16-byte bounds in LMDB's 511 bytes.
  const std::string longest(511 - 2 - 16, 'k');
  const std::string too_long(longest.size() + 1, 'k');
  auto env = Batch("b", {{longest, 7, 3}});
  EXPECT_TRUE(In(LookupAt(*env, longest, 8), longest, 7, 10));
  std::string message;
  const Code code = PutOne(env, ToRecord(SessionEvent{too_long, 7, 3}), &message);
  if (std::string(GetParam().scheme) == "direct") {
    EXPECT_EQ(code, Code::kInvalidArgument);
    EXPECT_TRUE(Contains(message, "too long")) << message;
    EXPECT_TRUE(Out(LookupAt(*env, too_long, 8)));
  } else {
    EXPECT_EQ(code, Code::kOk) << message;
    EXPECT_TRUE(In(LookupAt(*env, too_long, 8), too_long, 7, 10));
  }
}

TEST_P(SessionStoreTest, ScanRangeNarrowsToTheKeyAndItsStarts) {
  Events events;
  for (const char* key : {"a", "b", "c", "bb"}) {
    for (int64_t t : std::initializer_list<int64_t>{kMin, -5, 0, 10, 20, kMax}) events.push_back({key, t, 0});
    events.push_back({key, 10, 100});  // a second session starting at 10
  }
  auto env = Batch("b", events);
  const size_t all = Dump(*env).size();
  ASSERT_EQ(all, events.size());

  ScanBounds bounds;
  KeyRange range;
  ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
  EXPECT_FALSE(range.has_lower || range.has_upper);

  bounds.has_key = true;
  bounds.key = Bytes(std::string_view("b"));
  ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
  ASSERT_TRUE(range.has_lower && range.has_upper);
  std::vector<FullRow> rows = RowsIn(*env, range);
  ASSERT_EQ(rows.size(), 7u);
  for (const FullRow& row : rows) EXPECT_EQ(row.key, "b");

  bounds.has_time_bounds = true;  // bounds on Start
  const std::tuple<int64_t, int64_t, std::vector<Session>> cases[] = {
      {0, 10, {{0, 0}, {10, 10}, {10, 110}}}, {10, 10, {{10, 10}, {10, 110}}}, {11, 19, {}},
      {kMin, kMin, {{kMin, kMin}}},           {kMax, kMax, {{kMax, kMax}}},    {21, kMax, {{kMax, kMax}}},
  };
  for (const auto& [min, max, expected] : cases) {
    bounds.time_min = min;
    bounds.time_max = max;
    ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
    std::vector<Session> seen;
    for (const FullRow& row : RowsIn(*env, range)) {
      EXPECT_EQ(row.key, "b");
      seen.emplace_back(row.start_ms, row.end_ms);
    }
    EXPECT_EQ(seen, expected) << "starts " << min << " to " << max;
  }
  bounds.time_min = 20;
  bounds.time_max = 10;
  EXPECT_EQ(Scan(env, bounds, &range), Code::kNotFound);
  // An absent key: no range (hashed knows), or one that holds no row (direct cannot know without reading).
  bounds.has_time_bounds = false;
  bounds.key = Bytes(std::string_view("absent"));
  const Code code = Scan(env, bounds, &range);
  if (code == Code::kOk) {
    EXPECT_TRUE(RowsIn(*env, range).empty());
  } else {
    EXPECT_EQ(code, Code::kNotFound);
  }
}

TEST_P(SessionStoreTest, ARowEndingBeforeItStartsIsCorruption) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  const KeyScheme& scheme = *plugins_->scheme();
  const std::string key = "k";
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(txn.table(), scheme, Bytes(key), 16, Intent::kWrite, &resolved, &error), Code::kOk);
  std::string lmdb_key(reinterpret_cast<const char*>(resolved.bytes), resolved.size);
  lmdb_key.resize(lmdb_key.size() + 16);
  PutOrderedI64(reinterpret_cast<uint8_t*>(lmdb_key.data()) + resolved.size, 10);
  PutOrderedI64(reinterpret_cast<uint8_t*>(lmdb_key.data()) + resolved.size + 8, 9);
  std::string value(scheme.StoredKeySize(resolved, Bytes(key)), '\0');
  scheme.WriteStoredKey(resolved, Bytes(key), reinterpret_cast<uint8_t*>(value.data()));
  Row row;
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(lmdb_key), Bytes(value), &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "ends")) << error.message;
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), resolved.view(), Bytes(value), &row, &error),
            Code::kCorruption);
}

INSTANTIATE_TEST_SUITE_P(SessionSchemes, SessionStoreTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

// --- The whole path (XML -> stream -> staging -> merge) with RunLoad, against an in-memory model ---

class SessionStoreLoadTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_.path(), MapSection("m", "session", GetParam().scheme, GetParam().ConfigLines()), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  Status Load(const std::vector<std::string>& files) {
    LoadOptions options;
    options.effective_time_ms = 0;  // sessions always carry their <time>
    LoadReport report;
    return RunLoad(*runtime_, files, options, &report);
  }

  std::string WriteXml(const std::string& name, const std::string& xml) {
    const std::string path = dir_ / name;
    WriteFile(path, xml);
    return path;
  }

  std::shared_ptr<MapEnv> Shard() {
    std::shared_ptr<MapEnv> shard;
    const Status s = runtime_->OpenShard("m", &shard);
    EXPECT_TRUE(s.ok()) << s.message();
    return shard;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_P(SessionStoreLoadTest, RandomSessionsMatchAModel) {
  RandomInput random(20240602);
  const std::vector<std::string> keys = random.DistinctTexts(300, 1, 24);
  const int64_t base = 1704067200000;  // 2024-01-01T00:00:00Z
  Model model;
  uint64_t longest = 0;
  int file_number = 0;
  std::vector<std::string> last_load;
  for (int load = 0; load < 2; ++load) {
    std::vector<std::string> files;
    for (int f = 0; f < 2; ++f, ++file_number) {
      Events events;
      for (int i = 0; i < 1500; ++i) {
        SessionEvent event{keys[random.Index(keys.size())],
                           base + random.Between(0, 2000) * 1000 + (random.Percent(30) ? random.Between(1, 999) : 0),
                           std::nullopt};
        const int kind = static_cast<int>(random.Between(0, 9));
        if (kind == 0) {
          event.timeout_ms = 0;
        } else if (kind < 7) {
          event.timeout_ms = random.Between(1, 60000);
        } else if (kind < 9) {
          event.timeout_ms = random.Between(60000, 600000);
        }  // else no <timeout>
        const int64_t end = event.time_ms + event.timeout_ms.value_or(0);
        model[event.key].emplace(event.time_ms, end);
        longest = std::max<uint64_t>(longest, static_cast<uint64_t>(end - event.time_ms));
        events.push_back(std::move(event));
      }
      files.push_back(WriteXml("f" + std::to_string(file_number) + ".xml", SessionXml("m", events)));
    }
    const Status s = Load(files);
    ASSERT_TRUE(s.ok()) << s.message();
    last_load = files;
  }

  std::shared_ptr<MapEnv> shard = Shard();
  ASSERT_NE(shard, nullptr);
  std::vector<FullRow> rows;
  ASSERT_TRUE(DumpFullRows(*shard, &rows).ok());
  EXPECT_TRUE(Contents(rows) == model);
  EXPECT_EQ(MaxDuration(shard), longest);

  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  size_t wrong = 0;
  size_t hits = 0;
  for (int i = 0; i < 6000 && wrong < 10; ++i) {
    const std::string key = random.Percent(90) ? keys[random.Index(keys.size())] : "absent-" + random.Text(0, 8);
    int64_t time;
    auto sessions = model.find(key);
    const int choice = static_cast<int>(random.Between(0, 9));
    if (choice < 4 && sessions != model.end()) {
      // A session's start or end and either side of it.
      const Session& session =
          *std::next(sessions->second.begin(), static_cast<long>(random.Index(sessions->second.size())));
      time = (random.Percent(50) ? session.first : session.second) + random.Between(-1, 1);
    } else if (choice < 9) {
      time = base + random.Between(-10000, 2700000);
    } else {
      const int64_t extremes[] = {kMin, kMax, base, base - 1};
      time = extremes[random.Index(4)];
    }
    const Answer answer = LookupAt(reader, key, time);
    const std::optional<Session> expected = Expected(model, key, time);
    const bool ok = expected ? In(answer, key, expected->first, expected->second) : Out(answer);
    if (!ok) {
      ++wrong;
      ADD_FAILURE() << "key '" << key << "' at " << time << ": " << ::testing::PrintToString(answer);
    }
    hits += expected ? 1 : 0;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(hits, 1500u);  // the lookups test both outcomes
  EXPECT_LT(hits, 5000u);

  // Loading the last files again changes nothing.
  ASSERT_TRUE(Load(last_load).ok());
  std::vector<FullRow> again;
  ASSERT_TRUE(DumpFullRows(*Shard(), &again).ok());
  EXPECT_EQ(again, rows);
  EXPECT_EQ(MaxDuration(Shard()), longest);
}

TEST_P(SessionStoreLoadTest, BadInputFailsTheLoadAndWritesNothing) {
  const std::string good =
      "<session><map>m</map><key>k</key><time>2024-01-01T00:00:00Z</time><timeout>15m</timeout></session>\n";
  const std::pair<const char*, std::vector<const char*>> cases[] = {
      {"<reference><map>m</map><key>k</key><value>v</value></reference>", {"<reference>", "<session>"}},
      {"<session><map>m</map><key>k</key><time>2024-01-01T00:00:00Z</time>"
       "<timeout>9223372036854775000ms</timeout></session>",
       {"timeout", "latest representable time"}},
      {"<session><map>m</map><key>k</key><time>2024-01-01T00:00:00Z</time><timeout>soon</timeout></session>",
       {"<timeout>", "soon"}},
  };
  int n = 0;
  for (const auto& [bad, mentions] : cases) {
    const std::string file =
        WriteXml("bad" + std::to_string(n++) + ".xml",
                 "<referenceData xmlns=\"reference-data:2\">\n" + good + bad + "\n</referenceData>\n");
    const Status s = Load({file});
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    for (const char* part : mentions) EXPECT_TRUE(Contains(s.message(), part)) << s.message();
    EXPECT_TRUE(Contains(s.message(), file + ":3:")) << s.message();  // the input and the element's line
    std::shared_ptr<MapEnv> shard;
    EXPECT_EQ(runtime_->OpenShard("m", &shard).code(), Code::kNotFound) << "nothing merged for " << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(SessionSchemes, SessionStoreLoadTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

// --- Warm lookups allocate nothing (STYLE.md, "Lookup path") ---

TEST(SessionStoreAlloc, TheHeapTrapCatchesAnAllocation) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  // A positive control, so that the clean runs below mean something.
  const auto result = RunWithoutHeap([] {
    std::string* volatile text = new std::string(100, 'x');
    return text->size() == 100 ? 0 : 3;
  });
  ASSERT_TRUE(result.forked);
  EXPECT_TRUE(result.armed);
  EXPECT_EQ(result.signal, SIGABRT) << "exit code " << result.exit_code;  // bad_alloc, uncaught
}

class SessionStoreAllocTest : public SessionStoreLoadTest {};

TEST_P(SessionStoreAllocTest, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  Events events;
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) {
    keys.push_back("key-" + std::to_string(i) + std::string(i % 7 * 10, 'k'));
    for (int64_t t : {100000, 200000, 300000}) events.push_back({keys.back(), t, 1000 * (i % 5)});
  }
  ASSERT_TRUE(Load({WriteXml("a.xml", SessionXml("m", events))}).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(Shard()).ok());

  // Hits at a session's start, inside and at its end; misses before, between, after, and of absent keys.
  // Answers computed (and the reader warmed) before the trap.
  struct Probe {
    std::string key;
    int64_t time;
    Answer expected;
  };
  std::vector<Probe> probes;
  for (int i = 0; i < 500; ++i) {
    const int64_t timeout = 1000 * (i % 5);
    for (int64_t t :
         {int64_t{99999}, int64_t{200000}, 200000 + timeout / 2, 200000 + timeout, 200000 + timeout + 1, kMax}) {
      probes.push_back({keys[i], t, LookupAt(reader, keys[i], t)});
    }
    probes.push_back(
        {"missing-" + std::to_string(i), 200000, LookupAt(reader, "missing-" + std::to_string(i), 200000)});
  }
  size_t expected_hits = 0;
  for (const Probe& probe : probes) expected_hits += probe.expected.code == Code::kOk ? 1 : 0;
  ASSERT_EQ(expected_hits, 500u * 3);

  const auto result = RunWithoutHeap([&] {
    LookupKey lookup;
    Row row;
    ErrorBuffer error;
    for (int round = 0; round < 4; ++round) {
      for (const Probe& probe : probes) {
        lookup.key = Bytes(probe.key);
        lookup.time_ms = probe.time;
        const Code code = reader.Lookup(lookup, &row, &error);
        if (code != probe.expected.code) return 2;
        if (code == Code::kOk && (row.session_start_ms != probe.expected.start_ms ||
                                  row.session_end_ms != probe.expected.end_ms || row.key.view() != probe.key)) {
          return 3;
        }
      }
    }
    return 0;
  });
  ASSERT_TRUE(result.forked);
  ASSERT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0) << "a lookup allocated (operator new threw)";
  EXPECT_EQ(result.exit_code, 0) << "2: a lookup failed (malloc returned null?), 3: a wrong answer";
}

INSTANTIATE_TEST_SUITE_P(SessionSchemes, SessionStoreAllocTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
