// The histogram store type with each key scheme, loaded through the real registry, on real LMDB files.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "plugins/counters/bucket_fixture.h"
#include "support/heap_trap.h"
#include "support/maintain_fixture.h"
#include "support/map_fixture.h"
#include "support/scheme_matrix.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::Bucket;
using ::planb::testing::CountEvent;
using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DumpBuckets;
using ::planb::testing::GetBucket;
using ::planb::testing::HostMerge;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::PutCounts;
using ::planb::testing::RandomInput;
using ::planb::testing::TempDir;

using Events = std::vector<CountEvent>;
using Model = std::map<std::pair<std::string, int64_t>, int64_t>;  // (key, bucket start) -> count

constexpr int64_t kMinute = 60000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kMin = INT64_MIN;
constexpr int64_t kMax = INT64_MAX;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

::testing::AssertionResult Count(const Bucket& b, std::string_view key, int64_t start, int64_t count) {
  if (b.code != Code::kOk || b.key != key || b.start != start || b.count != count) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(b) << ", want count " << count
                                         << " in the bucket starting " << start;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Miss(const Bucket& b) {
  if (b.code != Code::kNotFound) return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(b);
  return ::testing::AssertionSuccess();
}

class HistogramStoreTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  std::shared_ptr<const MapPlugins> Plugins(const std::string& bucket) {
    auto options = GetParam().Options();
    if (!bucket.empty()) options.emplace_back("bucket", bucket);
    std::shared_ptr<const MapPlugins> plugins;
    const Status s = CreateMapPlugins(MakeMapConfig("m", "histogram", GetParam().scheme, options), &plugins);
    EXPECT_TRUE(s.ok()) << s.message();
    return plugins;
  }

  std::shared_ptr<MapEnv> NewEnv(const std::shared_ptr<const MapPlugins>& plugins) {
    std::shared_ptr<MapEnv> env;
    const Status s = CreateMapEnv(dir_ / ("e" + std::to_string(envs_++)), plugins, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const std::shared_ptr<const MapPlugins>& plugins, const Events& events) {
    std::shared_ptr<MapEnv> env = NewEnv(plugins);
    const Status s = PutCounts(env, events);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static std::vector<Bucket> Dump(const MapEnv& env) {
    std::vector<Bucket> rows;
    const Status s = DumpBuckets(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  TempDir dir_;
  int envs_ = 0;
};

TEST_P(HistogramStoreTest, BucketsAlignToTheEpochIncludingNegativeTimes) {
  auto plugins = Plugins("1h");
  const int64_t day = 1704067200000;  // 2024-01-01T00:00:00Z
  auto env = Batch(plugins, {{"a", day, {}},
                             {"a", day + kHour - 1, {}},
                             {"a", day + kHour, {}},
                             {"a", day + 90 * kMinute, "5"},
                             {"a", -1, {}},
                             {"a", -kHour, {}},
                             {"a", -kHour - 1, {}},
                             {"a", 0, {}}});
  EXPECT_TRUE(Count(GetBucket(*env, "a", day), "a", day, 2));
  EXPECT_TRUE(Count(GetBucket(*env, "a", day + 30 * kMinute), "a", day, 2));
  EXPECT_TRUE(Count(GetBucket(*env, "a", day + kHour - 1), "a", day, 2));
  EXPECT_TRUE(Count(GetBucket(*env, "a", day + kHour), "a", day + kHour, 6));  // 1 + 5 on the next hour
  EXPECT_TRUE(Miss(GetBucket(*env, "a", day + 2 * kHour)));
  EXPECT_TRUE(Miss(GetBucket(*env, "a", day - 1)));
  // Before the epoch: -1 and -1h fall in [-1h, 0); -1h-1 in [-2h, -1h); 0 starts [0, 1h).
  EXPECT_TRUE(Count(GetBucket(*env, "a", -1), "a", -kHour, 2));
  EXPECT_TRUE(Count(GetBucket(*env, "a", -kHour), "a", -kHour, 2));
  EXPECT_TRUE(Count(GetBucket(*env, "a", -kHour - 1), "a", -2 * kHour, 1));
  EXPECT_TRUE(Count(GetBucket(*env, "a", 0), "a", 0, 1));
  EXPECT_TRUE(Count(GetBucket(*env, "a", kHour - 1), "a", 0, 1));
  EXPECT_TRUE(Miss(GetBucket(*env, "a", kHour)));
  EXPECT_TRUE(Miss(GetBucket(*env, "a", kMin)));
  EXPECT_TRUE(Miss(GetBucket(*env, "a", kMax)));
  EXPECT_TRUE(Miss(GetBucket(*env, "b", day)));
  EXPECT_TRUE(Miss(GetBucket(*env, "A", day)));  // keys are case-sensitive
  EXPECT_EQ(Dump(*env).size(), 5u);              // one row per (key, bucket): the batch aggregates
}

TEST_P(HistogramStoreTest, ExtremeTimesHaveBucketsOrAClearError) {
  auto plugins = Plugins("1d");
  auto env = Batch(plugins, {{"a", kMax, {}}, {"a", kMin + 86400000 * 2, {}}});
  const int64_t top = kMax - kMax % 86400000;
  EXPECT_TRUE(Count(GetBucket(*env, "a", kMax), "a", top, 1));
  EXPECT_TRUE(Count(GetBucket(*env, "a", top), "a", top, 1));
  // INT64_MIN's bucket would start before INT64_MIN.
  const Status s = PutCounts(env, {{"a", kMin, {}}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "no bucket")) << s.message();
}

TEST_P(HistogramStoreTest, ValuesAreWholeNumbersDefaultingToOne) {
  auto plugins = Plugins("");  // default 1m
  auto env = Batch(plugins, {{"a", 10, {}},
                             {"a", 20, "41"},
                             {"a", 30, " \n\t7\r\n"},
                             {"a", 40, "-9"},
                             {"b", kMinute, "0"},
                             {"c", 5, "9223372036854775807"}});
  EXPECT_TRUE(Count(GetBucket(*env, "a", 0), "a", 0, 40));
  EXPECT_TRUE(Count(GetBucket(*env, "a", kMinute - 1), "a", 0, 40));
  EXPECT_TRUE(Miss(GetBucket(*env, "a", kMinute)));  // the default bucket is 1m
  EXPECT_TRUE(Count(GetBucket(*env, "b", kMinute), "b", kMinute, 0));
  EXPECT_TRUE(Count(GetBucket(*env, "c", 0), "c", 0, kMax));
}

TEST_P(HistogramStoreTest, MalformedValuesAreRefusedAndWriteNothing) {
  auto plugins = Plugins("1m");
  auto env = Batch(plugins, {{"a", 0, "3"}});
  const std::vector<std::pair<std::string, std::string>> bad = {{"abc", "not a whole number"},
                                                                {"1.5", "not a whole number"},
                                                                {"", "not a whole number"},
                                                                {"  ", "not a whole number"},
                                                                {"+1", "not a whole number"},
                                                                {"0x10", "not a whole number"},
                                                                {"1 2", "not a whole number"},
                                                                {"1e3", "not a whole number"},
                                                                {"--1", "not a whole number"},
                                                                {"9223372036854775808", "out of range"},
                                                                {"-9223372036854775809", "out of range"},
                                                                {std::string("1\0", 2), "not a whole number"}};
  for (const auto& [value, why] : bad) {
    const Status s = PutCounts(env, {{"a", 0, "5"}, {"b", 0, value}});  // the whole transaction fails
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << "'" << value << "'";
    EXPECT_TRUE(Contains(s.message(), why)) << s.message();
    EXPECT_TRUE(Contains(s.message(), "<value>")) << s.message();
  }
  EXPECT_TRUE(Count(GetBucket(*env, "a", 0), "a", 0, 3));
  EXPECT_TRUE(Miss(GetBucket(*env, "b", 0)));
  // An XML value and a <range> are refused too.
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  CountEvent event{"a", 0, "<x/>"};
  Record record = ::planb::testing::ToRecord(event);
  record.value_type = ValueType::kXmlFragment;
  ErrorBuffer error;
  EXPECT_EQ(plugins->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(error.message, "not XML")) << error.message;
  record = ::planb::testing::ToRecord(event);
  record.has_range = true;
  EXPECT_EQ(plugins->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
  record.has_range = false;
  record.kind = RecordKind::kSession;
  EXPECT_EQ(plugins->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
}

TEST_P(HistogramStoreTest, AnOverflowingSumIsRefusedNamingKeyAndBucket) {
  auto plugins = Plugins("1h");
  auto shard = Batch(plugins, {{"big", kHour + 5, "9223372036854775807"}});
  Status s = PutCounts(shard, {{"big", kHour, "1"}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'big'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "1970-01-01T01:00:00.000Z")) << s.message();
  auto batch = Batch(plugins, {{"big", kHour + 7, "1"}});
  s = MergeInto(batch, shard);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Count(GetBucket(*shard, "big", kHour), "big", kHour, kMax));  // unchanged: the merge aborted
  // Negative values can bring a sum back: only the range of a sum is checked, never a direction.
  auto minus = Batch(plugins, {{"big", kHour, "-1"}});
  ASSERT_TRUE(MergeInto(minus, shard).ok());
  EXPECT_TRUE(Count(GetBucket(*shard, "big", kHour), "big", kHour, kMax - 1));
}

// A property test: random batches merged one after another equal a model, through every lookup and every row.
TEST_P(HistogramStoreTest, RandomBatchesMergeLikeAModel) {
  RandomInput random(1515);
  auto plugins = Plugins("10s");
  const int64_t width = 10000;
  const std::vector<std::string> keys = random.DistinctTexts(60, 1, 20);
  auto shard = NewEnv(plugins);
  Model model;
  for (int b = 0; b < 6; ++b) {
    Events events;
    for (int i = 0; i < 400; ++i) {
      CountEvent event{keys[random.Index(keys.size())], random.Between(-200000, 200000), std::nullopt};
      if (random.Percent(70)) event.value = std::to_string(random.Between(-5, 1000));
      const int64_t start = event.time_ms - ((event.time_ms % width) + width) % width;
      model[{event.key, start}] += event.value ? std::stoll(*event.value) : 1;
      events.push_back(std::move(event));
    }
    auto batch = Batch(plugins, events);
    MergeStats stats;
    ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
    EXPECT_EQ(stats.rows_read, Dump(*batch).size());
  }
  std::vector<Bucket> rows = Dump(*shard);
  ASSERT_EQ(rows.size(), model.size());
  Model seen;
  for (const Bucket& row : rows) {
    EXPECT_TRUE(seen.emplace(std::make_pair(row.key, row.start), row.count).second) << "two rows: " << row.key;
  }
  EXPECT_EQ(seen, model);
  for (const auto& [where, count] : model) {
    const auto& [key, start] = where;
    EXPECT_TRUE(Count(GetBucket(*shard, key, start), key, start, count));
    EXPECT_TRUE(Count(GetBucket(*shard, key, start + width - 1), key, start, count));
    EXPECT_TRUE(Count(GetBucket(*shard, key, start + random.Between(0, width - 1)), key, start, count));
    if (model.count({key, start - width}) == 0) {
      EXPECT_TRUE(Miss(GetBucket(*shard, key, start - 1)));
    }
    if (model.count({key, start + width}) == 0) {
      EXPECT_TRUE(Miss(GetBucket(*shard, key, start + width)));
    }
  }
  EXPECT_TRUE(Miss(GetBucket(*shard, "no such key", 0)));
}

TEST_P(HistogramStoreTest, TheSameBatchMergedTwiceByTheHostCountsOnce) {
  auto plugins = Plugins("1m");
  auto batch = Batch(plugins, {{"a", 0, {}}, {"a", 1, "2"}, {"b", kMinute, "4"}});
  auto shard = NewEnv(plugins);
  MapMergeResult first;
  ASSERT_TRUE(HostMerge(*batch, *shard, "test/batch-1", &first).ok());
  EXPECT_FALSE(first.already_merged);
  MapMergeResult again;
  ASSERT_TRUE(HostMerge(*batch, *shard, "test/batch-1", &again).ok());
  EXPECT_TRUE(again.already_merged);
  EXPECT_TRUE(Count(GetBucket(*shard, "a", 0), "a", 0, 3));
  EXPECT_TRUE(Count(GetBucket(*shard, "b", kMinute), "b", kMinute, 4));
  // The same rows under another batch id (a file loaded again) count again.
  MapMergeResult other;
  ASSERT_TRUE(HostMerge(*batch, *shard, "test/batch-2", &other).ok());
  EXPECT_FALSE(other.already_merged);
  EXPECT_TRUE(Count(GetBucket(*shard, "a", 0), "a", 0, 6));
  EXPECT_TRUE(Count(GetBucket(*shard, "b", kMinute), "b", kMinute, 8));
}

TEST_P(HistogramStoreTest, RetentionDropsExactlyTheBucketsThatEndByTheCut) {
  auto plugins = Plugins("1m");
  auto shard = Batch(plugins, {{"a", 0, {}}, {"a", kMinute, {}}, {"a", 2 * kMinute + 5, {}}, {"b", -kMinute, {}}});
  ::planb::testing::MaintainResult result;
  MaintainRequest request;
  request.retain = true;
  request.retain_from_ms = 2 * kMinute;  // [0,1m) and [1m,2m) end by it; [2m,3m) starts there
  ASSERT_TRUE(::planb::testing::RunMaintain(shard, request, &result).ok());
  EXPECT_EQ(result.stats.rows_deleted, 3u);
  EXPECT_TRUE(Miss(GetBucket(*shard, "a", 0)));
  EXPECT_TRUE(Miss(GetBucket(*shard, "a", kMinute)));
  EXPECT_TRUE(Miss(GetBucket(*shard, "b", -1)));
  EXPECT_TRUE(Count(GetBucket(*shard, "a", 2 * kMinute), "a", 2 * kMinute, 1));
  // A cut inside a bucket keeps it whole; the same request again removes nothing.
  request.retain_from_ms = 3 * kMinute - 1;
  ASSERT_TRUE(::planb::testing::RunMaintain(shard, request, &result).ok());
  EXPECT_EQ(result.stats.rows_deleted, 0u);
  request.retain_from_ms = 3 * kMinute;
  ASSERT_TRUE(::planb::testing::RunMaintain(shard, request, &result).ok());
  EXPECT_EQ(result.stats.rows_deleted, 1u);
  EXPECT_TRUE(Dump(*shard).empty());
  EXPECT_EQ(::planb::testing::SchemeTableProblems(*shard), "");
}

TEST_P(HistogramStoreTest, ScanRangeHoldsEveryRowOfTheKeyWithinTheTimeBounds) {
  auto plugins = Plugins("1m");
  Events events;
  for (int64_t i = -5; i < 5; ++i) {
    events.push_back({"a", i * kMinute, {}});
    events.push_back({"b", i * kMinute, {}});
  }
  auto env = Batch(plugins, events);
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, false).ok());
  ScanBounds bounds;
  bounds.has_key = true;
  bounds.key = Bytes(std::string_view("a"));
  bounds.has_time_bounds = true;
  bounds.time_min = -2 * kMinute;
  bounds.time_max = 1 * kMinute;
  KeyRange range;
  ErrorBuffer error;
  ASSERT_EQ(plugins->store()->ScanRange(txn.table(), bounds, &range, &error), Code::kOk) << error.message;
  ASSERT_TRUE(range.has_lower && range.has_upper);
  std::vector<int64_t> starts;
  Bytes k;
  Bytes v;
  Cursor walk;
  ASSERT_TRUE(walk.Open(txn.table().txn, txn.table().dbi).ok());
  for (bool more = walk.Get(MDB_FIRST, &k, &v); more; more = walk.Get(MDB_NEXT, &k, &v)) {
    if (k.view() < range.lower.view().view() || k.view() > range.upper.view().view()) continue;
    FieldValue own[8] = {};
    Row row;
    row.own_fields = own;
    row.own_field_count = 3;
    ASSERT_EQ(plugins->store()->DecodeRow(txn.table(), k, v, &row, &error), Code::kOk);
    EXPECT_EQ(row.key.view(), "a");
    starts.push_back(row.effective_time_ms);
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{-2 * kMinute, -kMinute, 0, kMinute}));
  // An absent key: no range (or, for schemes whose prefix is the key itself, a range holding no row).
  bounds.key = Bytes(std::string_view("zz"));
  const Code code = plugins->store()->ScanRange(txn.table(), bounds, &range, &error);
  ASSERT_TRUE(code == Code::kNotFound || code == Code::kOk) << error.message;
  if (code == Code::kOk) {
    ASSERT_TRUE(range.has_lower && range.has_upper);
    for (bool more = walk.Get(MDB_FIRST, &k, &v); more; more = walk.Get(MDB_NEXT, &k, &v)) {
      EXPECT_TRUE(k.view() < range.lower.view().view() || k.view() > range.upper.view().view());
    }
  }
}

TEST_P(HistogramStoreTest, RowsOfAnotherWidthAddIntoAWiderBucketOrAreRefused) {
  auto minutes = Plugins("1m");
  auto hours = Plugins("1h");
  // A shard holding an hour bucket (as condensation will leave) takes minute rows inside it.
  auto shard = Batch(hours, {{"a", 0, "10"}});
  ASSERT_TRUE(MergeInto(Batch(minutes, {{"a", 5 * kMinute, "2"}, {"a", kHour, "1"}}), shard).ok());
  EXPECT_TRUE(Count(GetBucket(*shard, "a", 59 * kMinute), "a", 0, 12));
  EXPECT_TRUE(Count(GetBucket(*shard, "a", kHour), "a", kHour, 1));
  // An hour row over minute rows cannot be split: refused, naming both, the shard unchanged.
  const Status s = MergeInto(Batch(hours, {{"a", kHour + 30 * kMinute, "1"}}), shard);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "overlaps")) << s.message();
  auto minutes_only = Batch(minutes, {{"b", 30 * kMinute, {}}});
  const Status t = MergeInto(Batch(hours, {{"b", 0, {}}}), minutes_only);
  EXPECT_EQ(t.code(), Code::kInvalidArgument) << t.message();
  EXPECT_TRUE(Count(GetBucket(*minutes_only, "b", 30 * kMinute), "b", 30 * kMinute, 1));
  EXPECT_TRUE(Miss(GetBucket(*minutes_only, "b", 0)));
}

TEST_P(HistogramStoreTest, ABatchRowWithABadWidthIsRefusedAndTheShardKept) {
  auto plugins = Plugins("1m");
  auto shard = Batch(plugins, {{"a", kMinute, {}}});
  for (uint64_t width : {uint64_t{0}, uint64_t{7}, uint64_t{1} << 63}) {
    auto batch = Batch(plugins, {{"a", kMinute, {}}});
    {
      // The width is the 8 bytes before the count, at the end of the row's value.
      Txn txn;
      ASSERT_TRUE(txn.Begin(batch->env(), 0).ok());
      Cursor cursor;
      ASSERT_TRUE(cursor.Open(txn.get(), batch->data()).ok());
      Bytes k;
      Bytes v;
      ASSERT_TRUE(cursor.Get(MDB_FIRST, &k, &v));
      std::string key(k.view());
      std::string value(v.view());
      PutU64(reinterpret_cast<uint8_t*>(&value[value.size() - 16]), width);
      cursor.Close();
      ASSERT_TRUE(txn.Put(batch->data(), Bytes(key), Bytes(value)).ok());
      ASSERT_TRUE(txn.Commit().ok());
    }
    const Status s = MergeInto(batch, shard);
    EXPECT_EQ(s.code(), Code::kCorruption) << width << ": " << s.message();
    EXPECT_TRUE(Count(GetBucket(*shard, "a", kMinute), "a", kMinute, 1));
  }
}

TEST_P(HistogramStoreTest, DeleteRowRemovesOneBucket) {
  auto plugins = Plugins("1m");
  auto shard = Batch(plugins, {{"a", 0, {}}, {"a", kMinute, {}}, {"b", 0, {}}});
  uint64_t deleted = 0;
  const Status s = ::planb::testing::DeleteRows(
      shard, [](const Row& row) { return row.key.view() == "a" && row.effective_time_ms == 0; }, &deleted);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(deleted, 1u);
  EXPECT_EQ(::planb::testing::SchemeTableProblems(*shard), "");
  EXPECT_TRUE(Miss(GetBucket(*shard, "a", 0)));
  EXPECT_TRUE(Count(GetBucket(*shard, "a", kMinute), "a", kMinute, 1));
  EXPECT_TRUE(Count(GetBucket(*shard, "b", 0), "b", 0, 1));
}

INSTANTIATE_TEST_SUITE_P(HistogramSchemes, HistogramStoreTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
