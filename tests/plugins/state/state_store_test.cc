// The State store type with each key scheme, loaded through the real registry, on real LMDB files.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/keyed_rows.h"
#include "planb/keyed_search.h"
#include "support/clashing_keys.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/scheme_matrix.h"
#include "support/stub_scheme.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::ClashingKeys;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::GetValue;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::PutRows;
using ::planb::testing::ReferenceXml;
using ::planb::testing::TimedReferenceXml;
using ::planb::testing::SchemeTableProblems;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

using Rows = std::vector<std::pair<std::string, std::string>>;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class StateStoreTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    const Status s = CreateMapPlugins(MakeMapConfig("m", "state", GetParam().scheme, GetParam().Options()), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // `first` then `second` merged into a new shard, and `second` then `first` into another.
  void MergeBothOrders(const Rows& first, const Rows& second, std::shared_ptr<MapEnv>* forward,
                       std::shared_ptr<MapEnv>* backward) {
    *forward = NewEnv("forward");
    ASSERT_TRUE(MergeInto(Batch("f1", first), *forward).ok());
    ASSERT_TRUE(MergeInto(Batch("f2", second), *forward).ok());
    *backward = NewEnv("backward");
    ASSERT_TRUE(MergeInto(Batch("b2", second), *backward).ok());
    ASSERT_TRUE(MergeInto(Batch("b1", first), *backward).ok());
  }

  // `shard` holds exactly `want`, and a lookup of each key finds its value.
  void ExpectHolds(const MapEnv& shard, const std::map<std::string, std::string>& want) {
    EXPECT_EQ(Contents(shard), want);
    for (const auto& [key, value] : want) EXPECT_EQ(Get(shard, key), value);
  }

  // A new, empty map LMDB named `name` in the test's directory.
  std::shared_ptr<MapEnv> NewEnv(const std::string& name) {
    std::shared_ptr<MapEnv> env;
    const Status s = CreateMapEnv(dir_ / name, plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const std::string& name, const Rows& rows) {
    std::shared_ptr<MapEnv> env = NewEnv(name);
    const Status s = PutRows(env, rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static std::vector<DumpedRow> Dump(const MapEnv& env) {
    std::vector<DumpedRow> rows;
    const Status s = DumpMap(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  // The decoded (key, value) pairs of `env`, by key.
  static std::map<std::string, std::string> Contents(const MapEnv& env) {
    std::map<std::string, std::string> contents;
    for (const DumpedRow& row : Dump(env)) {
      EXPECT_TRUE(contents.emplace(row.key, row.value).second) << "two rows for key " << row.key;
    }
    return contents;
  }

  static std::string Get(const MapEnv& env, std::string_view key) {
    std::string value;
    const Code code = GetValue(env, key, &value);
    EXPECT_EQ(code, Code::kOk) << "key '" << key << "'";
    return value;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_P(StateStoreTest, PutThenGet) {
  auto env = Batch("b", {{"Paris", "France"}, {"Berlin", "Germany"}});
  EXPECT_EQ(Get(*env, "Paris"), "France");
  EXPECT_EQ(Get(*env, "Berlin"), "Germany");
  std::string value = "unchanged";
  EXPECT_EQ(GetValue(*env, "Rome", &value), Code::kNotFound);
  EXPECT_EQ(GetValue(*env, "paris", &value), Code::kNotFound);  // keys are case-sensitive
  EXPECT_EQ(value, "unchanged");
}

TEST_P(StateStoreTest, KeepsTheValueType) {
  auto env = NewEnv("b");
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    ErrorBuffer error;
    ASSERT_EQ(
        plugins_->store()->Put(txn.table(), StateRecord("x", "<a xmlns=\"n\"/>", ValueType::kXmlFragment), &error),
        Code::kOk);
    ASSERT_EQ(plugins_->store()->Put(txn.table(), StateRecord("s", "<a/>"), &error), Code::kOk);
    ASSERT_TRUE(txn.Commit().ok());
  }
  std::string value;
  ValueType type = ValueType::kString;
  ASSERT_EQ(GetValue(*env, "x", &value, &type), Code::kOk);
  EXPECT_EQ(type, ValueType::kXmlFragment);
  EXPECT_EQ(value, "<a xmlns=\"n\"/>");
  ASSERT_EQ(GetValue(*env, "s", &value, &type), Code::kOk);
  EXPECT_EQ(type, ValueType::kString);
  const std::vector<DumpedRow> rows = Dump(*env);
  ASSERT_EQ(rows.size(), 2u);
  for (const DumpedRow& row : rows) {
    EXPECT_EQ(row.type, row.key == "x" ? ValueType::kXmlFragment : ValueType::kString) << row.key;
  }
}

// A key or value near LMDB's 4 GiB limit on one value would wrap the row's 32-bit size, and the row written
// would overrun the room reserved for it. The writer refuses such rows first, before a scheme hashes or copies a
// byte: the records here claim sizes far beyond their 16-byte buffer, so any read past the check would be caught
// by the sanitizers, and none happens.
TEST_P(StateStoreTest, RowsPastLmdbsValueLimitAreRefusedBeforeAnyByteIsRead) {
  auto env = Batch("b", {{"kept", "value"}});
  const uint8_t small[16] = {};
  const Bytes huge(small, size_t{5} << 30);
  const Bytes just_too_large(small, kMaxLmdbValueSize);  // with any key and the type byte, past the limit
  const Bytes ordinary(small, sizeof(small));
  for (const auto& [key, value] : {std::pair{huge, ordinary}, std::pair{ordinary, huge},
                                   std::pair{ordinary, just_too_large}}) {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    Record record;
    record.has_key = record.has_value = true;
    record.key = key;
    record.value = value;
    ErrorBuffer error;
    EXPECT_EQ(plugins_->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
    EXPECT_TRUE(Contains(error.message, "past LMDB's limit of 4294967295 bytes for one row")) << error.message;
    EXPECT_TRUE(Contains(error.message, std::to_string(key.size) + "-byte key")) << error.message;
    ASSERT_TRUE(txn.Commit().ok());
  }
  EXPECT_EQ(Contents(*env), (std::map<std::string, std::string>{{"kept", "value"}}));
}

TEST_P(StateStoreTest, OverwriteInOneBatchLastWins) {
  auto env = Batch("b", {{"a", "1"}, {"b", "1"}, {"a", "2"}, {"c", "1"}, {"a", "3"}, {"b", "2"}});
  EXPECT_EQ(Contents(*env), (std::map<std::string, std::string>{{"a", "3"}, {"b", "2"}, {"c", "1"}}));
  EXPECT_EQ(Get(*env, "a"), "3");
}

TEST_P(StateStoreTest, MergeIntoAnEmptyShardCopiesTheBatch) {
  auto batch = Batch("b", {{"a", "1"}, {"b", "2"}, {"c", "3"}});
  auto shard = NewEnv("shard");
  MergeStats stats;
  const Status s = MergeInto(batch, shard, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.rows_read, 3u);
  EXPECT_EQ(stats.rows_written, 3u);
  EXPECT_EQ(Contents(*shard), Contents(*batch));
}

TEST_P(StateStoreTest, MergeOfASecondBatchOverwritesAndAdds) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", "1"}, {"b", "1"}, {"c", "1"}}), shard).ok());
  MergeStats stats;
  const Status s = MergeInto(Batch("b2", {{"b", "2"}, {"d", "2"}, {"b", "3"}}), shard, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.rows_read, 2u);  // the batch holds one row per key
  EXPECT_EQ(Contents(*shard), (std::map<std::string, std::string>{{"a", "1"}, {"b", "3"}, {"c", "1"}, {"d", "2"}}));
  EXPECT_EQ(Get(*shard, "b"), "3");
  EXPECT_EQ(Get(*shard, "d"), "2");
}

// Merges commute (issue 39): two batches merged in either order leave the same rows, byte for byte, and the
// value tables' counts exact: the latest effective time wins, and of equal times the higher hash of the value,
// never the batch merged last.
TEST_P(StateStoreTest, MergesCommuteWhateverTheOrder) {
  struct Timed {
    std::string key;
    std::string value;
    int64_t time_ms;
  };
  const auto batch = [this](const std::string& name, const std::vector<Timed>& rows) {
    std::shared_ptr<MapEnv> env = NewEnv(name);
    MapTxn txn;
    EXPECT_TRUE(txn.Begin(env, true).ok());
    for (const Timed& row : rows) {
      Record record = StateRecord(row.key, row.value);
      record.time_ms = row.time_ms;
      ErrorBuffer error;
      EXPECT_EQ(env->plugins().store()->Put(txn.table(), record, &error), Code::kOk) << error.message;
    }
    EXPECT_TRUE(txn.Commit().ok());
    return env;
  };
  // Values over 16 bytes, some shared, so that value_dedup's counts are exercised when a value is dropped.
  const std::string long_a = "a value long enough to be deduplicated";
  const std::string long_b = "b value long enough to be deduplicated";
  std::vector<Timed> a_rows = {{"newer-in-b", long_a, 5}, {"same-time", "x", 5}, {"newer-in-a", long_a, 9},
                               {"only-a", long_a, 1}, {"before-epoch", "a", -5}};
  std::vector<Timed> b_rows = {{"newer-in-b", long_b, 7}, {"same-time", "y", 5}, {"newer-in-a", long_b, 2},
                               {"only-b", long_b, 3}, {"before-epoch", "b", -4}};
  for (int i = 0; i < 200; ++i) {  // enough rows to span pages, half of them contested
    a_rows.push_back({"k" + std::to_string(i), "a" + std::to_string(i) + long_a, 100 + i % 3});
    if (i % 2 == 0) b_rows.push_back({"k" + std::to_string(i), "b" + std::to_string(i) + long_b, 101});
  }
  auto ab = NewEnv("ab");
  ASSERT_TRUE(MergeInto(batch("a1", a_rows), ab).ok());
  ASSERT_TRUE(MergeInto(batch("b1", b_rows), ab).ok());
  auto ba = NewEnv("ba");
  ASSERT_TRUE(MergeInto(batch("b2", b_rows), ba).ok());
  ASSERT_TRUE(MergeInto(batch("a2", a_rows), ba).ok());

  const std::map<std::string, std::string> contents = Contents(*ab);
  EXPECT_EQ(contents, Contents(*ba));
  EXPECT_EQ(contents.at("newer-in-b"), long_b);
  EXPECT_EQ(contents.at("newer-in-a"), long_a);
  EXPECT_EQ(contents.at("before-epoch"), "b");  // -4 is later than -5
  EXPECT_EQ(contents.at("only-a"), long_a);
  EXPECT_EQ(contents.at("only-b"), long_b);
  EXPECT_EQ(contents.at("k0"), "b0" + long_b);  // a's at 100, b's at 101
  EXPECT_EQ(contents.at("k2"), "a2" + long_a);  // a's at 102, b's at 101
  EXPECT_EQ(contents.at("k1"), "a1" + long_a);  // a's alone
  EXPECT_TRUE(contents.at("same-time") == "x" || contents.at("same-time") == "y");
  // Row for row (an id scheme's ids are handed out in arrival order, so only the decoded rows are compared there).
  const auto decoded = [](const std::vector<DumpedRow>& rows) {
    std::vector<std::string> out;
    for (const DumpedRow& row : rows) out.push_back(row.key + "=" + row.value);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(decoded(Dump(*ab)), decoded(Dump(*ba)));
  EXPECT_EQ(SchemeTableProblems(*ab), "");
  EXPECT_EQ(SchemeTableProblems(*ba), "");
}

TEST_P(StateStoreTest, MergingTheSameBatchTwiceLeavesTheSameShard) {
  Rows first;
  Rows second;
  // Values over 16 bytes, and every tenth shared, so that value_dedup's tables and counts are exercised.
  const auto value = [](const char* batch, int i) {
    return std::string(batch) + "-value-" + std::to_string(i % 10 == 0 ? 0 : i) + "-of-some-length";
  };
  for (int i = 0; i < 600; ++i) first.emplace_back("key-" + std::to_string(i), value("first", i));
  for (int i = 300; i < 900; ++i) second.emplace_back("key-" + std::to_string(i), value("second", i));
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", first), shard).ok());
  auto batch = Batch("b2", second);
  ASSERT_TRUE(MergeInto(batch, shard).ok());
  const std::vector<DumpedRow> once = Dump(*shard);
  ASSERT_EQ(once.size(), 900u);
  EXPECT_EQ(SchemeTableProblems(*shard), "");

  MergeStats stats;
  ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
  EXPECT_EQ(stats.rows_read, 600u);
  EXPECT_EQ(Dump(*shard), once);  // every row, LMDB key included
  EXPECT_EQ(SchemeTableProblems(*shard), "");
}

// Clash numbers are local to each file (with hash_bits = 8 these keys share a hash): two streams that met the
// keys in other orders merge, in either order, into shards holding the same keys and values; a key in both
// streams has the same value in both, so the order of the merges cannot decide it.
TEST_P(StateStoreTest, TwoStreamsMergedInEitherOrderGiveTheSameShard) {
  const std::vector<std::string> keys = ClashingKeys(6);
  const Rows first = {{keys[0], "v0"}, {keys[1], "v1"}, {keys[2], "v2"}, {keys[3], "v3"}};
  const Rows second = {{keys[4], "v4"}, {keys[2], "v2"}, {keys[5], "v5"}, {keys[0], "v0"}};
  std::shared_ptr<MapEnv> forward, backward;
  ASSERT_NO_FATAL_FAILURE(MergeBothOrders(first, second, &forward, &backward));
  const std::map<std::string, std::string> want = {{keys[0], "v0"}, {keys[1], "v1"}, {keys[2], "v2"},
                                                   {keys[3], "v3"}, {keys[4], "v4"}, {keys[5], "v5"}};
  ExpectHolds(*forward, want);
  ExpectHolds(*backward, want);
  std::string value;
  EXPECT_EQ(GetValue(*forward, "clash-absent", &value), Code::kNotFound);
  const std::vector<DumpedRow> once = Dump(*forward);
  ASSERT_TRUE(MergeInto(Batch("f3", second), forward).ok());
  ASSERT_TRUE(MergeInto(Batch("f4", first), forward).ok());
  EXPECT_EQ(Dump(*forward), once);  // merging either again changes nothing, LMDB keys included
}

// Keys over LMDB's key limit that share a hash (with hash_bits = 8): the hashed form of hybrid and variable,
// lookup_table's index and hashed all tell them apart, in either merge order.
TEST_P(StateStoreTest, LongKeysThatShareAHashMergeInEitherOrder) {
  if (std::string(GetParam().scheme) == "direct") GTEST_SKIP() << "direct holds no key over 511 bytes";
  const std::vector<std::string> keys = ClashingKeys(5, std::string(600, 'L') + "-");
  const Rows first = {{keys[0], "v0"}, {keys[1], "v1"}, {keys[2], std::string(40, '2')}};
  const Rows second = {{keys[3], "v3"}, {keys[1], "v1"}, {keys[4], std::string(40, '4')}};
  std::shared_ptr<MapEnv> forward, backward;
  ASSERT_NO_FATAL_FAILURE(MergeBothOrders(first, second, &forward, &backward));
  const std::map<std::string, std::string> want = {{keys[0], "v0"},
                                                   {keys[1], "v1"},
                                                   {keys[2], std::string(40, '2')},
                                                   {keys[3], "v3"},
                                                   {keys[4], std::string(40, '4')}};
  ExpectHolds(*forward, want);
  ExpectHolds(*backward, want);
  std::string value;
  EXPECT_EQ(GetValue(*forward, std::string(600, 'L') + "-absent", &value), Code::kNotFound);
}

TEST_P(StateStoreTest, KeysAreArbitraryBytes) {
  const Rows rows = {
      {std::string("nul\0inside", 10), "1"},
      {std::string("\0", 1), "2"},
      {std::string("\0\0", 2), "3"},
      {"\xFF\xFE\xFD", "4"},
      {"\xF0\x9F\x98\x80 emoji", "5"},
      {"Stra\xC3\x9F"
       "e",
       "6"},
      {"\xE4\xB8\xAD\xE6\x96\x87", "7"},
      {"a", "8"},
      {"ab", "9"},
      {"a b", "10"},
      {" a", "11"},
      {"line\nbreak\ttab", "12"},
      {"<xml>&amp;", "13"},
  };
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b", rows), shard).ok());
  for (const auto& [key, value] : rows) EXPECT_EQ(Get(*shard, key), value);
  std::map<std::string, std::string> expected(rows.begin(), rows.end());
  EXPECT_EQ(Contents(*shard), expected);
}

TEST_P(StateStoreTest, StoresLongAndEmptyValues) {
  std::string big(size_t{3} << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  const Rows rows = {{"big", big}, {"empty", ""}, {"one", "1"}};
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b", rows), shard).ok());
  EXPECT_EQ(Get(*shard, "big"), big);
  EXPECT_EQ(Get(*shard, "empty"), "");
  EXPECT_EQ(Get(*shard, "one"), "1");
  // A long value replaced by a short one and back.
  ASSERT_TRUE(MergeInto(Batch("b2", {{"big", "small"}, {"empty", big}}), shard).ok());
  EXPECT_EQ(Get(*shard, "big"), "small");
  EXPECT_EQ(Get(*shard, "empty"), big);
}

// Keys at and past LMDB's 511-byte key limit: direct refuses the longer one (a miss on lookup); every scheme that
// hashes long keys stores, merges and finds both, beside short keys, in either merge order.
TEST_P(StateStoreTest, KeysUpToTheSchemesLimit) {
  const std::string longest(511, 'k');
  const std::string too_long(longest.size() + 1, 'k');
  const std::string far_too_long(5000, 'q');
  const bool direct = std::string(GetParam().scheme) == "direct";
  const Rows first = {{"a", "1"}, {longest, "fits"}};
  const Rows second = {{too_long, "long"}, {far_too_long, "longer"}, {"a", "2"}};
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", first), shard).ok());
  EXPECT_EQ(Get(*shard, longest), "fits");
  auto env = NewEnv("b2");
  const Status s = PutRows(env, second);
  std::string value;
  if (direct) {
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(Contains(s.message(), "too long")) << s.message();
    EXPECT_EQ(GetValue(*shard, too_long, &value), Code::kNotFound);
    return;
  }
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(MergeInto(env, shard).ok());
  const std::map<std::string, std::string> expected = {
      {"a", "2"}, {longest, "fits"}, {too_long, "long"}, {far_too_long, "longer"}};
  EXPECT_EQ(Contents(*shard), expected);
  for (const auto& [key, v] : expected) EXPECT_EQ(Get(*shard, key), v);
  EXPECT_EQ(GetValue(*shard, std::string(5000, 'r'), &value), Code::kNotFound);
  // The other order, and the same batch merged twice, give the same shard.
  auto other = NewEnv("other");
  ASSERT_TRUE(MergeInto(Batch("c2", second), other).ok());
  ASSERT_TRUE(MergeInto(Batch("c1", first), other).ok());
  ASSERT_TRUE(MergeInto(Batch("c3", {{"a", "2"}}), other).ok());
  ASSERT_TRUE(MergeInto(Batch("c4", {{"a", "2"}}), other).ok());
  EXPECT_EQ(Contents(*other), expected);
}

TEST_P(StateStoreTest, RefusesRecordsThatAreNotState) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  auto put_error = [&](const Record& record) {
    ErrorBuffer error;
    EXPECT_EQ(plugins_->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
    return std::string(error.message);
  };
  Record session = StateRecord("k", "v");
  session.kind = RecordKind::kSession;
  EXPECT_TRUE(Contains(put_error(session), "<session>")) << put_error(session);
  Record range = StateRecord("k", "v");
  range.has_range = true;
  EXPECT_TRUE(Contains(put_error(range), "<range>"));
  Record no_key = StateRecord("k", "v");
  no_key.has_key = false;
  EXPECT_TRUE(Contains(put_error(no_key), "no <key>"));
  Record no_value = StateRecord("k", "v");
  no_value.has_value = false;
  EXPECT_TRUE(Contains(put_error(no_value), "no <value>"));
  MDB_val k;
  MDB_val v;
  EXPECT_EQ(mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST), MDB_NOTFOUND);  // nothing written
}

// DecodeTypedValue (keyed_rows.h), which State and Temporal State decode with, refuses a row value too short for
// the stored key a scheme reports and the type byte after it, counting in 64 bits: a size of 2^32 - 1 (a scheme's
// bug) does not wrap round to a read before or past the value.
TEST_P(StateStoreTest, DecodeTypedValueRefusesAStoredKeyPastTheValue) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  const KeyScheme& scheme = *plugins_->scheme();
  const bool as_given = scheme.StoresValuesAsGiven();
  const std::string value = std::string(1, '\x01') + "v";  // a type byte and one byte of value
  for (const uint32_t stored_key_size : {2u, 3u, UINT32_MAX}) {
    Row row;
    ErrorBuffer error;
    EXPECT_EQ(DecodeTypedValue(scheme, as_given, txn.table(), Bytes(value), stored_key_size, "test row", &row, &error),
              Code::kCorruption)
        << stored_key_size;
    EXPECT_TRUE(Contains(error.message, "test row value of 2 bytes has no valid value type")) << error.message;
  }
  if (!as_given) return;  // a value table: "v" is no reference into it
  Row row;
  ErrorBuffer error;
  ASSERT_EQ(DecodeTypedValue(scheme, as_given, txn.table(), Bytes(value), 0, "test row", &row, &error), Code::kOk)
      << error.message;
  EXPECT_EQ(row.value_type, ValueType::kString);
  EXPECT_EQ(row.value.view(), "v");
}

// DeleteKeyedRow (keyed_rows.h) bounds the stored key a scheme reports in 64 bits, for a scheme used without the
// host's guard (which refuses such an answer first): 2^32 - 1 is corruption, not wrapped round to a release of
// the wrong bytes.
class OversizeStoredKeyScheme final : public testing::StubScheme {
 public:
  Code DecodeRow(const Table&, Bytes lmdb_key, Bytes, Bytes* key, uint32_t* prefix_size, uint32_t* stored_key_size,
                 ErrorBuffer*) const override {
    *key = lmdb_key;
    *prefix_size = static_cast<uint32_t>(lmdb_key.size);
    *stored_key_size = UINT32_MAX;
    return Code::kOk;
  }
  Code ReleaseValue(const Table&, Bytes, ErrorBuffer*) const override {
    ADD_FAILURE() << "released a value by a stored key past the row";
    return Code::kOk;
  }
};

TEST(KeyedRows, DeleteKeyedRowRefusesAStoredKeyPastTheValue) {
  OversizeStoredKeyScheme scheme;
  const Table table;  // not reached: the row is refused before anything is released or deleted
  ErrorBuffer error;
  EXPECT_EQ(DeleteKeyedRow(table, scheme, Bytes(std::string_view("key")), Bytes(std::string_view("value")), 1, true,
                           "test row", &error),
            Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "test row value of 5 bytes is shorter than its stored key and head"))
      << error.message;
}

TEST_P(StateStoreTest, AnUnknownValueTypeIsCorruption) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  const KeyScheme& scheme = *plugins_->scheme();
  const std::string key = "k";
  KeyPrefix resolved;
  ErrorBuffer error;
  ASSERT_EQ(ResolveKey(txn.table(), scheme, Bytes(key), 0, Intent::kWrite, &resolved, &error), Code::kOk);
  std::string value(scheme.StoredKeySize(resolved, Bytes(key)), '\0');
  scheme.WriteStoredKey(resolved, Bytes(key), reinterpret_cast<uint8_t*>(value.data()));
  const std::string stored_key = value;
  value += std::string(16, '\0') + "\x09payload";  // a version, then a value type that does not exist
  MDB_val k = resolved.view().mdb();
  MDB_val v{value.size(), value.data()};
  ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);

  LookupKey lookup;
  lookup.key = Bytes(key);
  Row row;
  EXPECT_EQ(plugins_->store()->Get(txn.table(), lookup, &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "no valid value type")) << error.message;
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(k), Bytes(v), &row, &error), Code::kCorruption);

  // A row cut inside its version (the layout of State before version 2: the type right after the stored key).
  const std::string cut = stored_key + "\x01payload";
  MDB_val short_row{cut.size(), const_cast<char*>(cut.data())};
  error = ErrorBuffer();
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(k), Bytes(short_row), &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "shorter than its stored key and head")) << error.message;
}

// The batch verifier decodes every row of a received batch: whatever decodes must also merge, or a batch that
// passed verification would block the node's merge queue for ever.
TEST_P(StateStoreTest, ARowWithBytesAfterItsKeyDecodesOnlyIfItMerges) {
  auto batch = NewEnv("b");
  const KeyScheme& scheme = *plugins_->scheme();
  const std::string key = "k";
  std::string lmdb_key;
  std::string value;
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(batch, true).ok());
    KeyPrefix resolved;
    ErrorBuffer error;
    ASSERT_EQ(ResolveKey(txn.table(), scheme, Bytes(key), 0, Intent::kWrite, &resolved, &error), Code::kOk);
    value.assign(scheme.StoredKeySize(resolved, Bytes(key)), '\0');
    scheme.WriteStoredKey(resolved, Bytes(key), reinterpret_cast<uint8_t*>(value.data()));
    value += "\x01payload";
    lmdb_key.assign(reinterpret_cast<const char*>(resolved.view().data), resolved.view().size);
    lmdb_key += "xx";  // no scheme writes this
    MDB_val k{lmdb_key.size(), lmdb_key.data()};
    MDB_val v{value.size(), value.data()};
    ASSERT_EQ(mdb_put(txn.table().txn, txn.table().dbi, &k, &v, 0), MDB_SUCCESS);
    ASSERT_TRUE(txn.Commit().ok());
  }
  Code decoded = Code::kOk;
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(batch, false).ok());
    Row row;
    ErrorBuffer error;
    decoded = plugins_->store()->DecodeRow(txn.table(), Bytes(lmdb_key), Bytes(value), &row, &error);
  }
  const Status merged = MergeInto(batch, NewEnv("s"));
  EXPECT_EQ(decoded == Code::kOk, merged.ok()) << merged.message();
}

// --- value_dedup: values in the scheme's value table ("values": ref -> bytes, "value_refs": ref -> count) ---

struct ValueTableCounts {
  uint64_t entries = 0;     // distinct values stored
  uint64_t references = 0;  // the sum of their counts
};

// Read by the tables' names in the file, as another tool would see them.
ValueTableCounts CountValueTable(const MapEnv& env) {
  ValueTableCounts counts;
  MDB_txn* txn = nullptr;
  EXPECT_EQ(mdb_txn_begin(env.env(), nullptr, MDB_RDONLY, &txn), MDB_SUCCESS);
  MDB_dbi values = 0, refs = 0;
  EXPECT_EQ(mdb_dbi_open(txn, "scheme.values", 0, &values), MDB_SUCCESS);
  EXPECT_EQ(mdb_dbi_open(txn, "scheme.value_refs", 0, &refs), MDB_SUCCESS);
  MDB_stat stat;
  EXPECT_EQ(mdb_stat(txn, values, &stat), MDB_SUCCESS);
  counts.entries = stat.ms_entries;
  MDB_cursor* cursor = nullptr;
  EXPECT_EQ(mdb_cursor_open(txn, refs, &cursor), MDB_SUCCESS);
  MDB_val k, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    EXPECT_EQ(v.mv_size, 8u);
    counts.references += GetU64(static_cast<const uint8_t*>(v.mv_data));
  }
  mdb_cursor_close(cursor);
  mdb_txn_abort(txn);
  return counts;
}

// Two streams holding the same long values merge, in either order, into shards storing each value once; short
// values stay inline and never reach the table.
class StateStoreDedupTest : public StateStoreTest {};

TEST_P(StateStoreDedupTest, StoresEachValueOnceAcrossStreams) {
  const std::string long_a(100, 'a');
  const std::string long_b(200, 'b');
  const Rows first = {{"k1", long_a}, {"k2", long_b}, {"k3", long_a}, {"k4", "short"}};
  const Rows second = {{"k5", long_b}, {"k6", long_a}, {"k7", "short"}};
  std::shared_ptr<MapEnv> forward, backward;
  ASSERT_NO_FATAL_FAILURE(MergeBothOrders(first, second, &forward, &backward));
  for (const auto* shard : {forward.get(), backward.get()}) {
    const ValueTableCounts counts = CountValueTable(*shard);
    EXPECT_EQ(counts.entries, 2u);     // long_a and long_b
    EXPECT_EQ(counts.references, 5u);  // k1 k2 k3 k5 k6
    EXPECT_EQ(Get(*shard, "k2"), long_b);
    EXPECT_EQ(Get(*shard, "k6"), long_a);
    EXPECT_EQ(Get(*shard, "k7"), "short");
  }
  EXPECT_EQ(Contents(*forward), Contents(*backward));
}

// Overwriting a key releases its old value: counts stay exact and a value nobody holds leaves the table.
TEST_P(StateStoreDedupTest, OverwriteKeepsCountsExact) {
  const std::string one(64, '1');
  const std::string two(64, '2');
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", one}, {"b", one}}), shard).ok());
  EXPECT_EQ(CountValueTable(*shard).entries, 1u);
  EXPECT_EQ(CountValueTable(*shard).references, 2u);
  ASSERT_TRUE(MergeInto(Batch("b2", {{"a", two}}), shard).ok());
  EXPECT_EQ(CountValueTable(*shard).entries, 2u);
  EXPECT_EQ(CountValueTable(*shard).references, 2u);
  ASSERT_TRUE(MergeInto(Batch("b3", {{"b", two}, {"a", two}}), shard).ok());  // same value again: no change
  EXPECT_EQ(CountValueTable(*shard).entries, 1u);
  EXPECT_EQ(CountValueTable(*shard).references, 2u);
  ASSERT_TRUE(MergeInto(Batch("b4", {{"a", "tiny"}}), shard).ok());  // long -> inline
  EXPECT_EQ(CountValueTable(*shard).references, 1u);
  EXPECT_EQ(Get(*shard, "a"), "tiny");
  EXPECT_EQ(Get(*shard, "b"), two);
}

// A value whose 64-bit hash another value already holds (planted: XXH3 clashes cannot be found by search) goes
// under the next clash number; both read back, and releasing it leaves the other alone.
TEST_P(StateStoreDedupTest, AValueWhoseHashIsTakenGoesUnderTheNextClashNumber) {
  const std::string value(64, 'v');
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b0", {{"z", std::string(40, 'z')}}), shard).ok());  // the value tables exist
  uint8_t ref[10];
  PutU64(ref, XXH3_64bits(value.data(), value.size()));
  PutU16(ref + 8, 0);
  {
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(shard->env(), nullptr, 0, &txn), MDB_SUCCESS);
    MDB_dbi values = 0, refs = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "scheme.values", 0, &values), MDB_SUCCESS);
    ASSERT_EQ(mdb_dbi_open(txn, "scheme.value_refs", 0, &refs), MDB_SUCCESS);
    const std::string other(64, 'o');
    uint8_t one[8];
    PutU64(one, 1);
    MDB_val k{sizeof(ref), ref};
    MDB_val v{other.size(), const_cast<char*>(other.data())};
    MDB_val count{sizeof(one), one};
    ASSERT_EQ(mdb_put(txn, values, &k, &v, 0), MDB_SUCCESS);
    ASSERT_EQ(mdb_put(txn, refs, &k, &count, 0), MDB_SUCCESS);
    ASSERT_EQ(mdb_txn_commit(txn), MDB_SUCCESS);
  }
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", value}, {"b", value}}), shard).ok());
  EXPECT_EQ(Get(*shard, "a"), value);
  EXPECT_EQ(Get(*shard, "b"), value);
  EXPECT_EQ(CountValueTable(*shard).entries, 3u);     // z's, the planted one, and the value at clash 1
  EXPECT_EQ(CountValueTable(*shard).references, 4u);  // z, planted, a, b

  ASSERT_TRUE(MergeInto(Batch("b2", {{"a", "tiny"}, {"b", "tiny"}}), shard).ok());
  EXPECT_EQ(CountValueTable(*shard).entries, 2u);  // clash 1 went; the planted entry under clash 0 stays
  EXPECT_EQ(CountValueTable(*shard).references, 2u);
  EXPECT_EQ(Get(*shard, "z"), std::string(40, 'z'));
}

// Without the option a shard holds no value tables (so shards written before they existed open alike).
TEST_P(StateStoreTest, ValueTablesExistOnlyWithValueDedup) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {{"a", std::string(64, 'x')}}), shard).ok());
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(shard->env(), nullptr, MDB_RDONLY, &txn), MDB_SUCCESS);
  MDB_dbi dbi = 0;
  for (const char* name : {"scheme.values", "scheme.value_refs"}) {
    EXPECT_EQ(mdb_dbi_open(txn, name, 0, &dbi), GetParam().value_dedup ? MDB_SUCCESS : MDB_NOTFOUND) << name;
  }
  mdb_txn_abort(txn);
}

TEST(StateStoreValueDedup, BadOptionValuesNameTheMapAndTheOption) {
  for (const char* scheme : {"hashed", "direct", "hybrid", "lookup_table", "variable"}) {
    for (const char* bad : {"yes", "1", "TRUE", ""}) {
      std::shared_ptr<const MapPlugins> plugins;
      const Status s = CreateMapPlugins(MakeMapConfig("cities", "state", scheme, {{"value_dedup", bad}}), &plugins);
      EXPECT_FALSE(s.ok()) << scheme << " accepted value_dedup = '" << bad << "'";
      EXPECT_TRUE(Contains(s.message(), "[map.cities]")) << s.message();
      EXPECT_TRUE(Contains(s.message(), "value_dedup: '" + std::string(bad) + "' is not true or false")) << s.message();
    }
  }
}

// The layout records the option: a shard written one way refuses the other.
TEST(StateStoreValueDedup, TheLayoutRecordsTheOption) {
  for (const char* scheme : {"hashed", "direct", "hybrid", "lookup_table", "variable"}) {
    std::shared_ptr<const MapPlugins> on, off;
    ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("m", "state", scheme, {{"value_dedup", "true"}}), &on).ok());
    ASSERT_TRUE(CreateMapPlugins(MakeMapConfig("m", "state", scheme, {{"value_dedup", "false"}}), &off).ok());
    EXPECT_NE(on->scheme()->Layout().view(), off->scheme()->Layout().view()) << scheme;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, StateStoreTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);
INSTANTIATE_TEST_SUITE_P(Schemes, StateStoreDedupTest, ::testing::ValuesIn(DedupSchemes()), SchemeName);

// --- Loading many keys through the whole path (XML -> batch -> staging -> merge) against a model ---

// Random keys (with characters XML must escape, and UTF-8) and values; deterministic.
class KeyMaker {
 public:
  explicit KeyMaker(uint32_t seed) : random_(seed) {}
  std::string Text(size_t min_size, size_t max_size) {
    static const std::vector<std::string> kPieces = {
        "a", "b", "Z", "0", "7", " ", "-", "&", "<", ">", "\"", "\xC3\xA9", "\xE2\x82\xAC", "_", "q", "x"};
    std::uniform_int_distribution<size_t> size(min_size, max_size);
    std::uniform_int_distribution<size_t> piece(0, kPieces.size() - 1);
    std::string text;
    for (size_t n = size(random_); text.size() < n;) text += kPieces[piece(random_)];
    return text;
  }
  size_t Index(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

 private:
  std::mt19937 random_;
};

// Loads `batches` files of random overwrites of `key_count` keys into map "m" of `runtime` with RunLoad, in
// two loads (so that later batches merge into a shard that exists and is open), updating `model` in order.
void LoadRandomBatches(Runtime& runtime, const TempDir& dir, size_t key_count, int batches,
                       std::map<std::string, std::string>* model, std::vector<std::string>* keys) {
  KeyMaker maker(20240601);
  std::set<std::string> seen;
  while (keys->size() < key_count) {
    std::string key = maker.Text(1, 24);
    if (seen.insert(key).second) keys->push_back(key);
  }
  std::vector<std::string> files;
  int64_t next_time_ms = 1700000000000;  // every row a millisecond after the one before: it wins over them
  for (int b = 0; b < batches; ++b) {
    Rows rows;
    // Each batch writes ~60% of the keys, a quarter of those twice (overwrites inside the batch).
    for (size_t i = 0; i < key_count * 3 / 5; ++i) {
      const std::string& key = (*keys)[maker.Index(key_count)];
      rows.emplace_back(key, "b" + std::to_string(b) + ":" + maker.Text(0, 40));
      if (i % 4 == 0) rows.emplace_back(key, "b" + std::to_string(b) + "-again:" + maker.Text(0, 10));
    }
    if (b == 0) {
      for (const std::string& key : *keys) rows.emplace_back(key, "first:" + key);  // every key exists
    }
    for (const auto& [key, value] : rows) (*model)[key] = value;
    files.push_back(dir / ("batch-" + std::to_string(b) + ".xml"));
    WriteFile(files.back(), TimedReferenceXml("m", rows, &next_time_ms));
  }
  LoadOptions options;
  const size_t split = files.size() / 2;
  for (auto [begin, end] : {std::pair{size_t{0}, split}, std::pair{split, files.size()}}) {
    LoadReport report;
    const Status s =
        RunLoad(runtime, std::vector<std::string>(files.begin() + begin, files.begin() + end), options, &report);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(report.merge.batches, end - begin);
  }
}

// Every key of `model` looked up through a MapReader on the shard returns its latest value.
void ExpectShardMatchesModel(Runtime& runtime, const std::map<std::string, std::string>& model) {
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenShard("m", &shard);
  ASSERT_TRUE(s.ok()) << s.message();
  MapReader reader;
  s = reader.Open(shard);
  ASSERT_TRUE(s.ok()) << s.message();
  size_t wrong = 0;
  for (const auto& [key, value] : model) {
    LookupKey lookup;
    lookup.key = Bytes(key);
    Row row;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookup, &row, &error);
    if (code != Code::kOk || row.value.view() != value) {
      ADD_FAILURE() << "key '" << key << "': code " << CodeName(code) << ", value '" << row.value.view() << "', want '"
                    << value << "'";
      if (++wrong == 10) break;
    }
  }
  for (const char* absent : {"absent", "", "a&b<c>d-not-there"}) {
    LookupKey lookup;
    lookup.key = Bytes(std::string_view(absent));
    Row row;
    ErrorBuffer error;
    EXPECT_EQ(reader.Lookup(lookup, &row, &error), Code::kNotFound) << "'" << absent << "'";
  }
  // The shard holds exactly the model: one row per key, each with its latest value.
  std::vector<DumpedRow> rows;
  s = DumpMap(*shard, &rows);
  ASSERT_TRUE(s.ok()) << s.message();
  std::map<std::string, std::string> contents;
  for (const DumpedRow& row : rows) EXPECT_TRUE(contents.emplace(row.key, row.value).second) << row.key;
  EXPECT_EQ(contents.size(), model.size());
  EXPECT_TRUE(contents == model);
}

TEST(StateStore, ThousandsOfClashingKeysEachReturnTheirLatestValue) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("m", "hashed", "hash_bits = 8\n"), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  std::map<std::string, std::string> model;
  std::vector<std::string> keys;
  LoadRandomBatches(*runtime, dir, 5000, 4, &model, &keys);
  ASSERT_EQ(model.size(), 5000u);
  ExpectShardMatchesModel(*runtime, model);

  // The clashes really happened: 5000 keys in 256 hashes, so most rows have a clash number above 0, and each
  // row sits under its own key's hash.
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("m", &shard).ok());
  std::vector<DumpedRow> rows;
  ASSERT_TRUE(DumpMap(*shard, &rows).ok());
  size_t clashing = 0;
  uint32_t max_clash = 0;
  for (const DumpedRow& row : rows) {
    ASSERT_EQ(row.lmdb_key.size(), 3u);  // 1 hash byte + 2 clash bytes
    const uint8_t hash = static_cast<uint8_t>(XXH3_64bits(row.key.data(), row.key.size()) >> 56);
    EXPECT_EQ(static_cast<uint8_t>(row.lmdb_key[0]), hash) << row.key;
    const uint32_t clash = GetU16(reinterpret_cast<const uint8_t*>(row.lmdb_key.data()) + 1);
    clashing += clash > 0 ? 1 : 0;
    max_clash = std::max(max_clash, clash);
  }
  EXPECT_GE(clashing, model.size() - 256);
  EXPECT_GE(max_clash, 10u);
}

class StateStoreLoadTest : public ::testing::TestWithParam<SchemeParam> {};

TEST_P(StateStoreLoadTest, LoadedBatchesMatchAModel) {
  TempDir dir;
  const std::string extra = GetParam().ConfigLines();
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), StateMapSection("m", GetParam().scheme, extra), &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  std::map<std::string, std::string> model;
  std::vector<std::string> keys;
  LoadRandomBatches(*runtime, dir, 2000, 3, &model, &keys);
  ExpectShardMatchesModel(*runtime, model);
}

INSTANTIATE_TEST_SUITE_P(Schemes, StateStoreLoadTest, ::testing::ValuesIn(kSchemeMatrix),
                         SchemeName);

}  // namespace
}  // namespace planb
