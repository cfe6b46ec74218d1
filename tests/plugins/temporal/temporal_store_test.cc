// The Temporal State store type with each key scheme, loaded through the real registry, on real LMDB files.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <csignal>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
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
#include "support/maintain_fixture.h"
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
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::LookupAt;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapSection;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::PutEvents;
using ::planb::testing::RandomInput;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::TempDir;
using ::planb::testing::TemporalEvent;
using ::planb::testing::TemporalXml;
using ::planb::testing::ToRecord;
using ::planb::testing::WriteFile;

using Events = std::vector<TemporalEvent>;
// key -> effective time -> value
using Model = std::map<std::string, std::map<int64_t, std::string>>;

constexpr int64_t kMin = INT64_MIN;
constexpr int64_t kMax = INT64_MAX;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

::testing::AssertionResult Hit(const Answer& answer, std::string_view key, int64_t effective, std::string_view value) {
  if (answer.code != Code::kOk || answer.key != key || answer.effective_time_ms != effective || answer.value != value) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(answer) << ", want '" << value
                                         << "' effective at " << effective;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Miss(const Answer& answer) {
  if (answer.code != Code::kNotFound) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(answer) << ", want a miss";
  }
  return ::testing::AssertionSuccess();
}

// What a lookup must return according to `model`: the value at the latest time <= `time`.
const std::pair<const int64_t, std::string>* Expected(const Model& model, const std::string& key, int64_t time) {
  auto k = model.find(key);
  if (k == model.end()) return nullptr;
  auto after = k->second.upper_bound(time);
  if (after == k->second.begin()) return nullptr;
  return &*std::prev(after);
}

// The decoded (key, time) -> value of rows, checking that none repeats.
Model Contents(const std::vector<FullRow>& rows) {
  Model contents;
  for (const FullRow& row : rows) {
    EXPECT_TRUE(contents[row.key].emplace(row.effective_time_ms, row.value).second)
        << "two rows for " << row.key << " at " << row.effective_time_ms;
  }
  return contents;
}

class TemporalStoreTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s = CreateMapPlugins(MakeMapConfig("m", "temporal", GetParam().scheme, GetParam().Options()), &plugins_);
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

TEST_P(TemporalStoreTest, LooksUpAtAndBetweenEffectiveTimes) {
  // Out of time order on purpose: the layout, not the arrival order, decides.
  auto env = Batch("b", {{"a", 300, "a300"}, {"a", 100, "a100"}, {"b", 150, "b150"}, {"a", 200, "a200"}});
  EXPECT_TRUE(Miss(LookupAt(*env, "a", 99)));                    // before the first effective time
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 100), "a", 100, "a100"));  // the exact instant
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 101), "a", 100, "a100"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 199), "a", 100, "a100"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 200), "a", 200, "a200"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 250), "a", 200, "a200"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 300), "a", 300, "a300"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 301), "a", 300, "a300"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", kMax), "a", 300, "a300"));
  EXPECT_TRUE(Miss(LookupAt(*env, "a", kMin)));
  EXPECT_TRUE(Miss(LookupAt(*env, "b", 149)));
  EXPECT_TRUE(Hit(LookupAt(*env, "b", 150), "b", 150, "b150"));
  EXPECT_TRUE(Hit(LookupAt(*env, "b", 100000), "b", 150, "b150"));
  EXPECT_TRUE(Miss(LookupAt(*env, "c", 200)));
  EXPECT_TRUE(Miss(LookupAt(*env, "A", 200)));  // keys are case-sensitive
}

TEST_P(TemporalStoreTest, AKeyNeverSeesAnotherKeysRows) {
  // Keys whose LMDB prefixes are neighbours (direct: same bytes, other lengths); each key's rows lie in its own
  // time window, so a lookup before a key's window lands, in LMDB order, right after another key's rows.
  const std::vector<std::string> keys = {"k", std::string("k\0", 2), "k0", "k00", "ka", "kb", "l", "j", "kk", "k k"};
  Events events;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t base = 1000 * static_cast<int64_t>(i + 1);
    events.push_back({keys[i], base + 10, "first-" + std::to_string(i)});
    events.push_back({keys[i], base + 20, "last-" + std::to_string(i)});
  }
  auto env = Batch("b", events);
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t base = 1000 * static_cast<int64_t>(i + 1);
    EXPECT_TRUE(Miss(LookupAt(*env, keys[i], base + 9))) << "key #" << i;
    EXPECT_TRUE(Miss(LookupAt(*env, keys[i], kMin))) << "key #" << i;
    EXPECT_TRUE(Hit(LookupAt(*env, keys[i], base + 15), keys[i], base + 10, "first-" + std::to_string(i)));
    EXPECT_TRUE(Hit(LookupAt(*env, keys[i], kMax), keys[i], base + 20, "last-" + std::to_string(i)));
  }
  EXPECT_TRUE(Miss(LookupAt(*env, "k1", kMax)));
  EXPECT_TRUE(Miss(LookupAt(*env, std::string("k\0\0", 3), kMax)));
}

TEST_P(TemporalStoreTest, ExtremeAndNegativeTimes) {
  auto env = Batch("b", {{"a", kMax, "max"},
                         {"a", 0, "zero"},
                         {"a", -1, "minus one"},
                         {"a", kMin, "min"},
                         {"b", kMax, "b max"},
                         {"c", kMin, "c min"},
                         {"d", -5000, "d -5000"}});
  EXPECT_TRUE(Hit(LookupAt(*env, "a", kMin), "a", kMin, "min"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", kMin + 1), "a", kMin, "min"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", -2), "a", kMin, "min"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", -1), "a", -1, "minus one"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 0), "a", 0, "zero"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", 1), "a", 0, "zero"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", kMax - 1), "a", 0, "zero"));
  EXPECT_TRUE(Hit(LookupAt(*env, "a", kMax), "a", kMax, "max"));
  EXPECT_TRUE(Miss(LookupAt(*env, "b", kMax - 1)));
  EXPECT_TRUE(Hit(LookupAt(*env, "b", kMax), "b", kMax, "b max"));
  EXPECT_TRUE(Hit(LookupAt(*env, "c", kMin), "c", kMin, "c min"));
  EXPECT_TRUE(Hit(LookupAt(*env, "c", kMax), "c", kMin, "c min"));
  EXPECT_TRUE(Miss(LookupAt(*env, "d", -5001)));
  EXPECT_TRUE(Hit(LookupAt(*env, "d", -4999), "d", -5000, "d -5000"));
}

TEST_P(TemporalStoreTest, TheSameKeyAndTimeAgainOverwrites) {
  auto env = Batch("b", {{"a", 100, "first"},
                         {"a", 200, "later"},
                         {"a", 100, "<x xmlns=\"n\"/>", ValueType::kXmlFragment},
                         {"b", 100, "other"}});
  const Answer answer = LookupAt(*env, "a", 150);
  EXPECT_TRUE(Hit(answer, "a", 100, "<x xmlns=\"n\"/>"));
  EXPECT_EQ(answer.type, ValueType::kXmlFragment);
  EXPECT_EQ(LookupAt(*env, "a", 200).type, ValueType::kString);
  EXPECT_EQ(Contents(Dump(*env)), (Model{{"a", {{100, "<x xmlns=\"n\"/>"}, {200, "later"}}}, {"b", {{100, "other"}}}}));
}

TEST_P(TemporalStoreTest, DecodeRowFillsEveryFieldInKeyThenTimeOrder) {
  auto env = Batch("b", {{"k1", 5, "v5"},
                         {"k2", -7, "w-7", ValueType::kXmlFragment},
                         {"k1", -3, "v-3"},
                         {"k2", 9, "w9"},
                         {"k1", kMax, "vmax"}});
  const std::vector<FullRow> rows = Dump(*env);
  ASSERT_EQ(rows.size(), 5u);
  // One key's rows are contiguous and in time order (negative times first).
  std::map<std::string, std::vector<int64_t>> times;
  std::string previous_key;
  std::set<std::string> finished;
  for (const FullRow& row : rows) {
    if (row.key != previous_key) {
      EXPECT_TRUE(finished.insert(row.key).second) << "rows of " << row.key << " are not contiguous";
      previous_key = row.key;
    }
    times[row.key].push_back(row.effective_time_ms);
    EXPECT_EQ(row.type, row.value == "w-7" ? ValueType::kXmlFragment : ValueType::kString) << row.value;
    EXPECT_EQ(row.lmdb_key.size() >= 8
                  ? GetOrderedI64(reinterpret_cast<const uint8_t*>(row.lmdb_key.data()) + row.lmdb_key.size() - 8)
                  : 0,
              row.effective_time_ms)
        << "the effective time is the last 8 bytes of the LMDB key";
  }
  EXPECT_EQ(times["k1"], (std::vector<int64_t>{-3, 5, kMax}));
  EXPECT_EQ(times["k2"], (std::vector<int64_t>{-7, 9}));
  EXPECT_EQ(Contents(rows),
            (Model{{"k1", {{-3, "v-3"}, {5, "v5"}, {kMax, "vmax"}}}, {"k2", {{-7, "w-7"}, {9, "w9"}}}}));
}

TEST_P(TemporalStoreTest, MergeIntoAnEmptyShardCopiesTheBatch) {
  auto batch = Batch("b", {{"a", 1, "1"}, {"a", 2, "2"}, {"b", 1, "3"}});
  auto shard = NewEnv("shard");
  MergeStats stats;
  const Status s = MergeInto(batch, shard, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.rows_read, 3u);
  EXPECT_EQ(stats.rows_written, 3u);
  EXPECT_EQ(Contents(Dump(*shard)), Contents(Dump(*batch)));
}

TEST_P(TemporalStoreTest, MergeOfASecondBatchOverwritesAndAdds) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", 100, "a1"}, {"a", 200, "a1"}, {"b", 100, "b1"}}), shard).ok());
  MergeStats stats;
  const Status s =
      MergeInto(Batch("b2", {{"a", 200, "a2"}, {"a", 300, "a2"}, {"c", 50, "c2"}, {"b", 50, "b2"}, {"a", 300, "a2'"}}),
                shard, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.rows_read, 4u);  // the batch holds one row per key and time
  EXPECT_EQ(
      Contents(Dump(*shard)),
      (Model{{"a", {{100, "a1"}, {200, "a2"}, {300, "a2'"}}}, {"b", {{50, "b2"}, {100, "b1"}}}, {"c", {{50, "c2"}}}}));
  EXPECT_TRUE(Hit(LookupAt(*shard, "a", 150), "a", 100, "a1"));
  EXPECT_TRUE(Hit(LookupAt(*shard, "a", 250), "a", 200, "a2"));
  EXPECT_TRUE(Hit(LookupAt(*shard, "a", kMax), "a", 300, "a2'"));
  EXPECT_TRUE(Hit(LookupAt(*shard, "b", 75), "b", 50, "b2"));
  EXPECT_TRUE(Hit(LookupAt(*shard, "b", 100), "b", 100, "b1"));
  EXPECT_TRUE(Miss(LookupAt(*shard, "c", 49)));
  EXPECT_TRUE(Hit(LookupAt(*shard, "c", 50), "c", 50, "c2"));
}

TEST_P(TemporalStoreTest, MergingTheSameBatchTwiceLeavesTheSameShard) {
  Events first;
  Events second;
  for (int i = 0; i < 400; ++i) {
    for (int64_t t : {-100, 0, 100}) first.push_back({"key-" + std::to_string(i), t, "first"});
  }
  for (int i = 200; i < 600; ++i) {
    for (int64_t t : {0, 50, 100}) second.push_back({"key-" + std::to_string(i), t, "second"});
  }
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", first), shard).ok());
  auto batch = Batch("b2", second);
  ASSERT_TRUE(MergeInto(batch, shard).ok());
  const std::vector<FullRow> once = Dump(*shard);
  ASSERT_EQ(once.size(), 200u * 3 + 200u * 4 + 200u * 3);

  MergeStats stats;
  ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
  EXPECT_EQ(stats.rows_read, second.size());
  EXPECT_EQ(Dump(*shard), once);  // every row, LMDB key included
}

// Every lookup of `keys` (and of one absent key) at times around each row, in `env`, against `model`.
void ExpectLookupsMatch(const MapEnv& env, const std::vector<std::string>& keys, const Model& model) {
  std::vector<std::string> asked = keys;
  asked.push_back("clash-absent");
  for (const std::string& key : asked) {
    std::vector<int64_t> times{kMin, kMax};
    for (const auto& [k, rows] : model) {
      for (const auto& row : rows) times.insert(times.end(), {row.first - 1, row.first, row.first + 1});
    }
    for (int64_t time : times) {
      const auto* want = Expected(model, key, time);
      const Answer answer = LookupAt(env, key, time);
      if (want == nullptr) {
        EXPECT_TRUE(Miss(answer)) << key << " at " << time;
      } else {
        EXPECT_TRUE(Hit(answer, key, want->first, want->second)) << key << " at " << time;
      }
    }
  }
}

Model ModelOf(const std::vector<Events>& batches) {
  Model model;
  for (const Events& events : batches) {
    for (const TemporalEvent& e : events) model[e.key][*e.time_ms] = e.value;
  }
  return model;
}

// With hash_bits = 8 these keys share a hash (clash numbers in arrival order); each key's rows lie between the
// others' in time, so a seek for one key at a time lands beside another key's rows under the same hash.
TEST_P(TemporalStoreTest, ClashingKeysAreEachFoundAtEveryTime) {
  const std::vector<std::string> keys = ClashingKeys(3);
  const Events events = {{keys[0], 100, "a100"}, {keys[1], 200, "b200"}, {keys[0], 300, "a300"},
                         {keys[2], 50, "c50"},   {keys[1], 400, "b400"}, {keys[2], 500, "c500"}};
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
    EXPECT_EQ(std::set<char>({prefixes.begin()->front(), prefixes.rbegin()->front()}).size(), 1u);
  }
}

// Clash numbers are local to each file: two streams that met the clashing keys in other orders merge, in either
// order, into shards with the same rows (clash numbers aside) answering every lookup alike.
TEST_P(TemporalStoreTest, TwoStreamsMergedInEitherOrderGiveTheSameShard) {
  const std::vector<std::string> keys = ClashingKeys(4);
  const Events first = {{keys[0], 10, "a10"}, {keys[1], 20, "b20"}, {keys[2], 30, "c30"}, {keys[0], 40, "a40"}};
  const Events second = {{keys[3], 15, "d15"}, {keys[2], 25, "c25"}, {keys[1], 35, "b35"}, {keys[0], 10, "a10"}};
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
  // Merging either batch again changes nothing, LMDB keys included.
  const std::vector<FullRow> once = Dump(*forward);
  ASSERT_TRUE(MergeInto(Batch("f3", first), forward).ok());
  ASSERT_TRUE(MergeInto(Batch("f4", second), forward).ok());
  EXPECT_EQ(Dump(*forward), once);
}

TEST_P(TemporalStoreTest, RefusesRecordsThatAreNotTemporalState) {
  auto env = NewEnv("b");
  const TemporalEvent event{"k", 1, "v"};
  std::string message;
  Record session = ToRecord(event);
  session.kind = RecordKind::kSession;
  EXPECT_EQ(PutOne(env, session, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "<session>")) << message;
  Record range = ToRecord(event);
  range.has_range = true;
  EXPECT_EQ(PutOne(env, range, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "<range>")) << message;
  Record no_key = ToRecord(event);
  no_key.has_key = false;
  EXPECT_EQ(PutOne(env, no_key, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "no <key>")) << message;
  Record no_value = ToRecord(event);
  no_value.has_value = false;
  EXPECT_EQ(PutOne(env, no_value, &message), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(message, "no <value>")) << message;
  EXPECT_TRUE(Dump(*env).empty());
}

TEST_P(TemporalStoreTest, KeysUpToTheSchemesLimit) {
  // The direct scheme fits the key, its 2-byte length and the 8-byte time in LMDB's 511 bytes.
  const std::string longest(511 - 2 - 8, 'k');
  const std::string too_long(longest.size() + 1, 'k');
  auto env = Batch("b", {{longest, 7, "fits"}});
  EXPECT_TRUE(Hit(LookupAt(*env, longest, 8), longest, 7, "fits"));
  std::string message;
  const Code code = PutOne(env, ToRecord(TemporalEvent{too_long, 7, "v"}), &message);
  if (std::string(GetParam().scheme) == "direct") {
    EXPECT_EQ(code, Code::kInvalidArgument);
    EXPECT_TRUE(Contains(message, "too long")) << message;
    EXPECT_TRUE(Miss(LookupAt(*env, too_long, 8)));
  } else {
    EXPECT_EQ(code, Code::kOk) << message;
    EXPECT_TRUE(Hit(LookupAt(*env, too_long, 8), too_long, 7, "v"));
  }
}

TEST_P(TemporalStoreTest, AnUnknownValueTypeIsCorruption) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  const KeyScheme& scheme = *plugins_->scheme();
  const std::string key = "k";
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(txn.table(), scheme, Bytes(key), 8, Intent::kWrite, &resolved, &error), Code::kOk);
  std::string lmdb_key(reinterpret_cast<const char*>(resolved.bytes), resolved.size);
  lmdb_key.resize(lmdb_key.size() + 8);
  PutOrderedI64(reinterpret_cast<uint8_t*>(lmdb_key.data()) + resolved.size, 10);
  std::string value(scheme.StoredKeySize(resolved, Bytes(key)), '\0');
  scheme.WriteStoredKey(resolved, Bytes(key), reinterpret_cast<uint8_t*>(value.data()));
  const std::string stored_key = value;
  value += std::string(8, '\0') + "\x09payload";  // a hash, then a value type that does not exist
  MDB_val k{lmdb_key.size(), lmdb_key.data()};
  MDB_val v{value.size(), value.data()};
  ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);

  LookupKey lookup;
  lookup.key = Bytes(key);
  lookup.time_ms = 10;
  Row row;
  EXPECT_EQ(plugins_->store()->Get(txn.table(), lookup, &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "no valid value type")) << error.message;
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(k), Bytes(v), &row, &error), Code::kCorruption);
  // A value cut inside its head (the layout before version 2: the type right after the stored key).
  const std::string cut = stored_key + "\x01payload";
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(k), Bytes(cut), &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "shorter than its stored key and head")) << error.message;
  // A row key without its 8-byte time is not a Temporal State row.
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(resolved.view()), Bytes(v), &row, &error),
            Code::kCorruption);
}

TEST_P(TemporalStoreTest, ScanRangeNarrowsToTheKeyAndItsTimes) {
  Events events;
  for (const char* key : {"a", "b", "c", "bb"}) {
    for (int64_t t : std::initializer_list<int64_t>{kMin, -5, 0, 10, 20, 30, kMax})
      events.push_back({key, t, std::string(key) + std::to_string(t)});
  }
  auto env = Batch("b", events);
  const size_t all = Dump(*env).size();
  ASSERT_EQ(all, events.size());

  ScanBounds bounds;
  KeyRange range;
  ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
  EXPECT_FALSE(range.has_lower);
  EXPECT_FALSE(range.has_upper);
  bounds.has_time_bounds = true;  // a time alone cannot narrow hashed or length-ordered keys
  bounds.time_min = 0;
  bounds.time_max = 10;
  ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
  EXPECT_EQ(RowsIn(*env, range).size(), all);

  bounds = ScanBounds();
  bounds.has_key = true;
  bounds.key = Bytes(std::string_view("b"));
  ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
  ASSERT_TRUE(range.has_lower && range.has_upper);
  std::vector<FullRow> rows = RowsIn(*env, range);
  ASSERT_EQ(rows.size(), 7u);
  for (const FullRow& row : rows) EXPECT_EQ(row.key, "b");

  bounds.has_time_bounds = true;
  const std::tuple<int64_t, int64_t, std::vector<int64_t>> cases[] = {
      {0, 20, {0, 10, 20}}, {-5, -5, {-5}},       {11, 19, {}},
      {kMin, kMin, {kMin}}, {kMax, kMax, {kMax}}, {kMin, kMax, {kMin, -5, 0, 10, 20, 30, kMax}},
      {31, kMax, {kMax}},
  };
  for (const auto& [min, max, times] : cases) {
    bounds.time_min = min;
    bounds.time_max = max;
    ASSERT_EQ(Scan(env, bounds, &range), Code::kOk);
    std::vector<int64_t> seen;
    for (const FullRow& row : RowsIn(*env, range)) {
      EXPECT_EQ(row.key, "b");
      seen.push_back(row.effective_time_ms);
    }
    EXPECT_EQ(seen, times) << "times " << min << " to " << max;
  }
  bounds.time_min = 20;
  bounds.time_max = 10;
  EXPECT_EQ(Scan(env, bounds, &range), Code::kNotFound);
  // An absent key: no range (hashed knows), or one that holds no row (direct cannot know without reading).
  bounds.has_time_bounds = false;
  bounds.key = Bytes(std::string_view("absent"));
  const Code code = Scan(env, bounds, &range);
  if (code == Code::kOk) {
    EXPECT_TRUE(range.has_lower && range.has_upper);
    EXPECT_TRUE(RowsIn(*env, range).empty());
  } else {
    EXPECT_EQ(code, Code::kNotFound);
  }
}

INSTANTIATE_TEST_SUITE_P(TemporalSchemes, TemporalStoreTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

// --- The whole path (XML -> stream -> staging -> merge) with RunLoad, against an in-memory model ---

class TemporalStoreLoadTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s = OpenTestRuntime(
        dir_.path(), MapSection("m", "temporal", GetParam().scheme, GetParam().ConfigLines()), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  Status Load(const std::vector<std::string>& files, int64_t effective_time_ms) {
    LoadOptions options;
    options.effective_time_ms = effective_time_ms;
    LoadReport report;
    return RunLoad(*runtime_, files, options, &report);
  }

  std::string WriteXml(const std::string& name, const std::string& xml) {
    const std::string path = dir_ / name;
    WriteFile(path, xml);
    return path;
  }

  std::vector<FullRow> DumpShard() {
    std::shared_ptr<MapEnv> shard;
    const Status s = runtime_->OpenShard("m", &shard);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<FullRow> rows;
    if (shard != nullptr) {
      EXPECT_TRUE(DumpFullRows(*shard, &rows).ok());
    }
    return rows;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_P(TemporalStoreLoadTest, RandomBatchesMatchAModel) {
  RandomInput random(20240601);
  const std::vector<std::string> keys = random.DistinctTexts(300, 1, 24);
  const int64_t base = 1704067200000;  // 2024-01-01T00:00:00Z
  // Few distinct instants, so that keys get the same time again within a file and across files.
  auto random_time = [&] {
    return base + random.Between(0, 400) * 1000 + (random.Percent(20) ? random.Between(1, 999) : 0);
  };

  Model model;
  int file_number = 0;
  std::vector<std::string> last_load;
  int64_t last_effective = 0;
  for (int load = 0; load < 3; ++load) {
    const int64_t effective = base + 100000 * (load + 1);  // for records without <time>
    std::vector<std::string> files;
    for (int f = 0; f < 2; ++f, ++file_number) {
      Events events;
      Model file;  // in one file (one batch) the later record of a key and time wins
      for (int i = 0; i < 1500; ++i) {
        TemporalEvent event{keys[random.Index(keys.size())], std::nullopt,
                            "f" + std::to_string(file_number) + ":" + random.Text(0, 30)};
        if (!random.Percent(15)) event.time_ms = random_time();
        file[event.key][event.time_ms.value_or(effective)] = event.value;
        events.push_back(std::move(event));
      }
      // Between batches the value with the higher hash wins (plugins/temporal: merges commute).
      const auto hash = [](const std::string& value) {
        return XXH3_64bits_withSeed(value.data(), value.size(), static_cast<uint8_t>(ValueType::kString));
      };
      for (const auto& [key, versions] : file) {
        for (const auto& [time, value] : versions) {
          auto [it, inserted] = model[key].emplace(time, value);
          if (!inserted && hash(value) > hash(it->second)) it->second = value;
        }
      }
      files.push_back(WriteXml("f" + std::to_string(file_number) + ".xml", TemporalXml("m", events)));
    }
    const Status s = Load(files, effective);
    ASSERT_TRUE(s.ok()) << s.message();
    last_load = files;
    last_effective = effective;
  }

  std::vector<FullRow> rows = DumpShard();
  size_t model_rows = 0;
  for (const auto& entry : model) model_rows += entry.second.size();
  EXPECT_EQ(rows.size(), model_rows);
  EXPECT_TRUE(Contents(rows) == model);

  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("m", &shard).ok());
  EXPECT_EQ(SchemeTableProblems(*shard), "");  // ids and value counts exact after six merges of overwrites
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  size_t wrong = 0;
  size_t hits = 0;
  for (int i = 0; i < 6000 && wrong < 10; ++i) {
    const std::string key = random.Percent(90) ? keys[random.Index(keys.size())] : "absent-" + random.Text(0, 8);
    int64_t time;
    auto times = model.find(key);
    const int choice = static_cast<int>(random.Between(0, 9));
    if (choice < 4 && times != model.end()) {
      auto at = std::next(times->second.begin(), static_cast<long>(random.Index(times->second.size())));
      time = at->first + random.Between(-1, 1);  // the exact instant and either side of it
    } else if (choice < 9) {
      time = base + random.Between(-10000, 800000);
    } else {
      const int64_t extremes[] = {kMin, kMax, base, base - 1, last_effective};
      time = extremes[random.Index(5)];
    }
    const Answer answer = LookupAt(reader, key, time);
    const auto* expected = Expected(model, key, time);
    const bool ok = expected == nullptr ? Miss(answer) : Hit(answer, key, expected->first, expected->second);
    if (!ok) {
      ++wrong;
      ADD_FAILURE() << "key '" << key << "' at " << time << ": " << ::testing::PrintToString(answer);
    }
    hits += expected != nullptr ? 1 : 0;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(hits, 3000u);  // the lookups test both outcomes
  EXPECT_LT(hits, 5900u);

  // Loading the last files again changes nothing.
  ASSERT_TRUE(Load(last_load, last_effective).ok());
  EXPECT_EQ(DumpShard(), rows);
}

TEST_P(TemporalStoreLoadTest, RecordsWithoutTimeTakeTheStreamsEffectiveTime) {
  const std::string file =
      WriteXml("a.xml", TemporalXml("m", {{"k", std::nullopt, "implicit"}, {"k", 500, "explicit"}}));
  ASSERT_TRUE(Load({file}, 1000).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("m", &shard).ok());
  EXPECT_TRUE(Miss(LookupAt(*shard, "k", 499)));
  EXPECT_TRUE(Hit(LookupAt(*shard, "k", 999), "k", 500, "explicit"));
  EXPECT_TRUE(Hit(LookupAt(*shard, "k", 1000), "k", 1000, "implicit"));
}

TEST_P(TemporalStoreLoadTest, BadInputFailsTheLoadAndWritesNothing) {
  const std::string good =
      "<reference><map>m</map><time>2024-01-01T00:00:00Z</time><key>k</key><value>v</value>"
      "</reference>\n";
  const std::pair<const char*, const char*> cases[] = {
      {"<session><map>m</map><key>k</key><time>2024-01-01T00:00:00Z</time><timeout>5m</timeout></session>",
       "<session>"},
      {"<reference><map>m</map><range><from>1</from><to>5</to></range><value>v</value></reference>", "<range>"},
      {"<reference><map>m</map><from>1</from><to>5</to><value>v</value></reference>", "<range>"},
  };
  int n = 0;
  for (const auto& [bad, mentions] : cases) {
    const std::string file =
        WriteXml("bad" + std::to_string(n++) + ".xml",
                 "<referenceData xmlns=\"reference-data:2\">\n" + good + bad + "\n</referenceData>\n");
    const Status s = Load({file}, 0);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_TRUE(Contains(s.message(), mentions)) << s.message();
    EXPECT_TRUE(Contains(s.message(), file + ":3:")) << s.message();  // the input and the element's line
    EXPECT_TRUE(Contains(s.message(), "map m")) << s.message();
    std::shared_ptr<MapEnv> shard;
    EXPECT_EQ(runtime_->OpenShard("m", &shard).code(), Code::kNotFound) << "nothing merged for " << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(TemporalSchemes, TemporalStoreLoadTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

// --- Warm lookups allocate nothing (STYLE.md, "Lookup path") ---

TEST(TemporalStoreAlloc, TheHeapTrapCatchesAnAllocation) {
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

class TemporalStoreAllocTest : public TemporalStoreLoadTest {};

TEST_P(TemporalStoreAllocTest, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  Events events;
  for (int i = 0; i < 500; ++i) {
    for (int64_t t : {100, 200, 300}) {
      events.push_back({"key-" + std::to_string(i) + std::string(i % 7 * 10, 'k'), t, "value-" + std::to_string(t)});
    }
  }
  ASSERT_TRUE(Load({WriteXml("a.xml", TemporalXml("m", events))}, 0).ok());
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime_->OpenShard("m", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());

  // Hits at and between times, misses before the first time and of absent keys; answers computed (and the
  // reader warmed) before the trap.
  struct Probe {
    std::string key;
    int64_t time;
    Answer expected;
  };
  std::vector<Probe> probes;
  for (int i = 0; i < 500; ++i) {
    const std::string& key = events[static_cast<size_t>(i) * 3].key;
    for (int64_t t : std::initializer_list<int64_t>{99, 100, 250, kMax})
      probes.push_back({key, t, LookupAt(reader, key, t)});
    probes.push_back({"missing-" + std::to_string(i), 200, LookupAt(reader, "missing-" + std::to_string(i), 200)});
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
        if (code == Code::kOk && (row.effective_time_ms != probe.expected.effective_time_ms ||
                                  row.value.view() != probe.expected.value || row.key.view() != probe.key)) {
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

INSTANTIATE_TEST_SUITE_P(TemporalSchemes, TemporalStoreAllocTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
