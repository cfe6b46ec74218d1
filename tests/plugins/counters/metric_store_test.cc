// The metric store type with each key scheme, loaded through the real registry, on real LMDB files.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugins/counters/bucket_fixture.h"
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
using ::planb::testing::MergeInto;
using ::planb::testing::PutCounts;
using ::planb::testing::RandomInput;
using ::planb::testing::TempDir;

using Events = std::vector<CountEvent>;

struct Stats {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  void Add(const Stats& o) {
    if (count == 0) {
      *this = o;
      return;
    }
    count += o.count;
    sum += o.sum;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
};
using Model = std::map<std::pair<std::string, int64_t>, Stats>;  // (key, bucket start) -> stats
using RawRows = std::vector<std::pair<std::string, std::string>>;   // LMDB key and value of each data row

constexpr uint32_t kAggregateSize = 40;  // metric_store.cc: count, sum (units of 1e-9, 16 bytes), min, max
constexpr __int128 kMaxUnits = static_cast<__int128>((static_cast<unsigned __int128>(1) << 127) - 1);
constexpr __int128 kMinUnits = -kMaxUnits - 1;

// Every row of the env's data table, as bytes, in LMDB order.
Status DumpRaw(const MapEnv& env, RawRows* out) {
  out->clear();
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), MDB_RDONLY));
  Cursor walk;
  PLANB_RETURN_IF_ERROR(walk.Open(txn.get(), env.data()));
  Bytes key;
  Bytes value;
  for (bool more = walk.Get(MDB_FIRST, &key, &value); more; more = walk.Get(MDB_NEXT, &key, &value)) {
    out->emplace_back(std::string(key.view()), std::string(value.view()));
  }
  return Status::Ok();
}

// Overwrites the sum (units of 1e-9) of every row of the env's data table: a shard as 1.7e9 values of 1e20 would
// leave it, which no test can load. The aggregate is the value's last kAggregateSize bytes (bucket_store.h).
Status SetSums(const MapEnv& env, __int128 units) {
  RawRows rows;
  PLANB_RETURN_IF_ERROR(DumpRaw(env, &rows));
  Txn txn;
  PLANB_RETURN_IF_ERROR(txn.Begin(env.env(), 0));
  for (auto& [key, value] : rows) {
    if (value.size() < kAggregateSize) return Status::Corruption("a metric row shorter than its aggregate");
    const unsigned __int128 bits = static_cast<unsigned __int128>(units);
    uint8_t* sum = reinterpret_cast<uint8_t*>(&value[value.size() - kAggregateSize + 8]);
    for (int i = 0; i < 16; ++i) sum[i] = static_cast<uint8_t>(bits >> (8 * (15 - i)));
    PLANB_RETURN_IF_ERROR(txn.Put(env.data(), Bytes(key), Bytes(value)));
  }
  return txn.Commit();
}

constexpr int64_t kMinute = 60000;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// Mean as the store computes it: sum / count in long double, then rounded to double (exact when the sum is).
double MeanOf(const Stats& s) {
  return static_cast<double>(static_cast<long double>(s.sum) / static_cast<long double>(s.count));
}

std::string Shortest(double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, r.ptr);
}

::testing::AssertionResult Is(const Bucket& b, std::string_view key, int64_t start, const Stats& want) {
  if (b.code != Code::kOk || b.key != key || b.start != start || b.count != want.count || b.sum != want.sum ||
      b.min != want.min || b.max != want.max || b.mean != MeanOf(want)) {
    return ::testing::AssertionFailure() << "got " << ::testing::PrintToString(b) << ", want count " << want.count
                                         << " sum " << want.sum << " min " << want.min << " max " << want.max << " at "
                                         << start;
  }
  return ::testing::AssertionSuccess();
}

class MetricStoreTest : public ::testing::TestWithParam<SchemeParam> {
 protected:
  void SetUp() override {
    auto options = GetParam().Options();
    options.emplace_back("bucket", "1m");
    const Status s = CreateMapPlugins(MakeMapConfig("m", "metric", GetParam().scheme, options), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> NewEnv() {
    std::shared_ptr<MapEnv> env;
    const Status s = CreateMapEnv(dir_ / ("e" + std::to_string(envs_++)), plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const Events& events) {
    std::shared_ptr<MapEnv> env = NewEnv();
    const Status s = PutCounts(env, events);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  TempDir dir_;
  int envs_ = 0;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_P(MetricStoreTest, AggregatesCountSumMinMaxAndMean) {
  auto env = Batch({{"a", 0, "3"}, {"a", 10, "-1.5"}, {"a", 59999, " 4.5e1 "}, {"a", kMinute, "0.25"}, {"b", -1, "7"}});
  EXPECT_TRUE(Is(GetBucket(*env, "a", 30000), "a", 0, {3, 46.5, -1.5, 45}));
  EXPECT_TRUE(Is(GetBucket(*env, "a", kMinute + 1), "a", kMinute, {1, 0.25, 0.25, 0.25}));
  EXPECT_TRUE(Is(GetBucket(*env, "b", -kMinute), "b", -kMinute, {1, 7, 7, 7}));
  EXPECT_EQ(GetBucket(*env, "a", -1).code, Code::kNotFound);
  EXPECT_EQ(GetBucket(*env, "c", 0).code, Code::kNotFound);
}

TEST_P(MetricStoreTest, SumsAreExactToANanoUnit) {
  auto env = Batch({{"a", 0, "11498.189"},
                    {"b", 0, "0.1"},
                    {"b", 1, "0.2"},
                    {"c", 0, "5e-324"},
                    {"d", 0, "1e20"},
                    {"d", 1, "-1e20"},
                    {"d", 2, "100000000000000000000"},
                    {"e", 0, "-0"},
                    {"f", 0, "0.0000000015"},
                    {"f", 1, "-0.0000000015"},
                    {"g", 0, "-0.1"},
                    {"g", 1, "-0.2"},
                    {"h", 0, "12345678901.123456789"},
                    {"h", 1, "0.000000001"}});
  const Bucket a = GetBucket(*env, "a", 0);
  EXPECT_EQ(a.sum, 11498.189);
  EXPECT_EQ(Shortest(a.sum), "11498.189");
  EXPECT_EQ(Shortest(a.mean), "11498.189");
  const Bucket b = GetBucket(*env, "b", 0);
  EXPECT_EQ(Shortest(b.sum), "0.3");  // 0.1 + 0.2 in units of 1e-9, not the double 0.30000000000000004
  EXPECT_EQ(Shortest(b.mean), "0.15");
  EXPECT_EQ(b.min, 0.1);
  EXPECT_EQ(b.max, 0.2);
  const Bucket c = GetBucket(*env, "c", 0);
  EXPECT_EQ(c.min, 5e-324);  // min and max are the parsed doubles
  EXPECT_EQ(c.max, 5e-324);
  EXPECT_EQ(c.sum, 0);  // below half a unit of 1e-9
  EXPECT_EQ(c.mean, 0);
  EXPECT_TRUE(Is(GetBucket(*env, "d", 0), "d", 0, {3, 1e20, -1e20, 1e20}));  // the range's ends are in it
  const Bucket e = GetBucket(*env, "e", 0);
  EXPECT_EQ(e.min, 0);
  EXPECT_FALSE(std::signbit(e.min)) << "-0 is kept as +0";
  EXPECT_FALSE(std::signbit(e.max));
  // The sum shown is the double nearest its exact decimal value, negative ones too.
  EXPECT_EQ(Shortest(GetBucket(*env, "g", 0).sum), "-0.3");
  EXPECT_EQ(GetBucket(*env, "h", 0).sum, 12345678901.12345679);
  const Bucket f = GetBucket(*env, "f", 0);  // +-1.5 units round to the same magnitude: the sum is 0
  EXPECT_EQ(f.sum, 0);
  EXPECT_EQ(f.min, -0.0000000015);
  std::vector<Bucket> rows;
  ASSERT_TRUE(DumpBuckets(*env, &rows).ok());
  bool seen = false;
  for (const Bucket& row : rows) {
    if (row.key != "b") continue;
    seen = true;
    EXPECT_EQ(Shortest(row.sum), "0.3");
  }
  EXPECT_TRUE(seen);
}

TEST_P(MetricStoreTest, AValueBeyondTheRangeIsRefusedNamingIt) {
  auto env = Batch({{"a", 0, "1"}});
  for (const char* value : {"1.7976931348623157e308", "-1.7976931348623157e308", "1e21", "-1.0000000000000002e20",
                            "100000000000000016384"}) {
    const Status s = PutCounts(env, {{"a", 5, "2"}, {"b", 0, value}});
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << value;
    EXPECT_TRUE(Contains(s.message(), std::string("<value> '") + value + "' is beyond the metric's range of +-1e20"))
        << s.message();
  }
  EXPECT_TRUE(Is(GetBucket(*env, "a", 0), "a", 0, {1, 1, 1, 1}));
  EXPECT_EQ(GetBucket(*env, "b", 0).code, Code::kNotFound);
}

TEST_P(MetricStoreTest, MalformedValuesAreRefusedAndWriteNothing) {
  auto env = Batch({{"a", 0, "1"}});
  const std::vector<std::optional<std::string>> bad = {
      std::nullopt, "",       " ",   "abc",  "nan", "NaN",   "inf", "-inf",  "infinity",
      "1e400",      "-1e400", "1,5", "0x10", "+1",  "1.5.2", "1 2", "12abc", std::string("1\0", 2),
      "--1",        "."};
  for (const auto& value : bad) {
    const Status s = PutCounts(env, {{"a", 5, "2"}, {"b", 0, value}});
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << "'" << value.value_or("(none)") << "'";
    EXPECT_TRUE(Contains(s.message(), "<value>")) << s.message();
  }
  EXPECT_TRUE(Is(GetBucket(*env, "a", 0), "a", 0, {1, 1, 1, 1}));
  EXPECT_EQ(GetBucket(*env, "b", 0).code, Code::kNotFound);
}

// A sum leaves its 128-bit range only after some 1.7e9 values of 1e20 (the range's end), more than a test can
// load: the shard's sum is set near either end by hand, as that many merges would leave it.
TEST_P(MetricStoreTest, AnOverflowingSumIsRefusedNamingKeyAndBucket) {
  for (const bool up : {true, false}) {
    auto shard = Batch({{"big", kMinute, up ? "1e20" : "-1e20"}});
    const __int128 near = up ? kMaxUnits : kMinUnits;  // the ends of the range
    ASSERT_TRUE(SetSums(*shard, near).ok());
    const double sum = static_cast<double>(static_cast<long double>(near) / 1e9L);
    const Stats stored = up ? Stats{1, sum, 1e20, 1e20} : Stats{1, sum, -1e20, -1e20};
    ASSERT_TRUE(Is(GetBucket(*shard, "big", kMinute), "big", kMinute, stored)) << "any 128-bit sum is valid";
    RawRows before;
    ASSERT_TRUE(DumpRaw(*shard, &before).ok());
    const Status s = MergeInto(Batch({{"big", kMinute + 1, up ? "0.000000001" : "-0.000000001"}}), shard);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_TRUE(Contains(s.message(), "'big'")) << s.message();
    EXPECT_TRUE(Contains(s.message(), "1970-01-01T00:01:00.000Z")) << s.message();
    EXPECT_TRUE(Contains(s.message(), "the sum leaves its range")) << s.message();
    RawRows after;
    ASSERT_TRUE(DumpRaw(*shard, &after).ok());
    EXPECT_EQ(after, before);
    // One unit back in range still adds.
    ASSERT_TRUE(MergeInto(Batch({{"big", kMinute + 2, up ? "-0.000000001" : "0.000000001"}}), shard).ok());
    EXPECT_EQ(GetBucket(*shard, "big", kMinute).count, 2);
  }
}

// Sums in units of 1e-9 add as integers: the same batches merged in any order give the same bytes. None of the
// values is exact in binary: as doubles added in merge order (format version 1), the first bucket's sum was
// 123457.79 in four orders and 123457.79000000001 in two. One key only, so that schemes that give keys ids in
// order of arrival give the same ids; -0 and 0 in two batches check that the min of two zeros does not depend on
// the order.
TEST_P(MetricStoreTest, MergesInAnyOrderGiveTheSameBytes) {
  const std::vector<Events> batches = {
      {{"k", 0, "0.1"}, {"k", 1, "1e-3"}, {"k", kMinute, "-0"}, {"k", 3 * kMinute, "-2.5e-7"}},
      {{"k", 2, "0.2"}, {"k", 3, "123456.789"}, {"k", kMinute + 1, "0"}},
      {{"k", 4, "0.7"}, {"k", kMinute + 2, "0.5"}, {"k", 3 * kMinute, "0.3333333333"}},
  };
  std::vector<size_t> order = {0, 1, 2};
  RawRows first;
  int orders = 0;
  do {
    auto shard = NewEnv();
    for (const size_t i : order) ASSERT_TRUE(MergeInto(Batch(batches[i]), shard).ok());
    RawRows rows;
    ASSERT_TRUE(DumpRaw(*shard, &rows).ok());
    ASSERT_EQ(rows.size(), 3u);
    if (orders++ == 0) {
      first = rows;
      std::vector<Bucket> buckets;
      ASSERT_TRUE(DumpBuckets(*shard, &buckets).ok());
      ASSERT_EQ(buckets.size(), 3u);
      EXPECT_EQ(buckets[0].count, 5);
      EXPECT_EQ(Shortest(buckets[0].sum), "123457.79");
      EXPECT_EQ(Shortest(buckets[0].mean), "24691.558");
      EXPECT_EQ(buckets[0].min, 1e-3);
      EXPECT_EQ(buckets[0].max, 123456.789);
      EXPECT_TRUE(Is(buckets[1], "k", kMinute, {3, 0.5, 0, 0.5}));
      EXPECT_FALSE(std::signbit(buckets[1].min));
      EXPECT_EQ(Shortest(buckets[2].sum), "0.333333083");  // 0.3333333333 is 333333333 units of 1e-9, minus 250
      continue;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      EXPECT_EQ(rows[r].first, first[r].first) << "order " << order[0] << order[1] << order[2];
      EXPECT_EQ(rows[r].second, first[r].second) << "order " << order[0] << order[1] << order[2] << ", row " << r;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 6);
}

// A property test: random batches merged one after another equal a model. Values are multiples of 1/8 small
// enough that every sum is exact, so the model need not add in the store's order.
TEST_P(MetricStoreTest, RandomBatchesMergeLikeAModel) {
  RandomInput random(4242);
  const std::vector<std::string> keys = random.DistinctTexts(50, 1, 16);
  auto shard = NewEnv();
  Model model;
  for (int b = 0; b < 5; ++b) {
    Events events;
    for (int i = 0; i < 400; ++i) {
      const int64_t eighths = random.Between(-80000, 80000);
      const double v = static_cast<double>(eighths) / 8;
      CountEvent event{keys[random.Index(keys.size())], random.Between(-10 * kMinute, 10 * kMinute), Shortest(v)};
      const int64_t start = event.time_ms - ((event.time_ms % kMinute) + kMinute) % kMinute;
      model[{event.key, start}].Add({1, v, v, v});
      events.push_back(std::move(event));
    }
    ASSERT_TRUE(MergeInto(Batch(events), shard).ok());
  }
  std::vector<Bucket> rows;
  ASSERT_TRUE(DumpBuckets(*shard, &rows).ok());
  ASSERT_EQ(rows.size(), model.size());
  for (const Bucket& row : rows) {
    auto it = model.find({row.key, row.start});
    ASSERT_NE(it, model.end()) << row.key << " " << row.start;
    EXPECT_TRUE(Is(row, it->first.first, it->first.second, it->second));
  }
  for (const auto& [where, stats] : model) {
    EXPECT_TRUE(Is(GetBucket(*shard, where.first, where.second + random.Between(0, kMinute - 1)), where.first,
                   where.second, stats));
  }
}

TEST_P(MetricStoreTest, TheSameBatchMergedTwiceByTheHostCountsOnce) {
  auto batch = Batch({{"a", 0, "1.5"}, {"a", 1, "2.5"}});
  auto shard = NewEnv();
  ::planb::MapMergeResult result;
  ASSERT_TRUE(HostMerge(*batch, *shard, "test/m-1", &result).ok());
  ASSERT_TRUE(HostMerge(*batch, *shard, "test/m-1", &result).ok());
  EXPECT_TRUE(result.already_merged);
  EXPECT_TRUE(Is(GetBucket(*shard, "a", 0), "a", 0, {2, 4, 1.5, 2.5}));
}

TEST_P(MetricStoreTest, RetentionDropsExactlyTheBucketsThatEndByTheCut) {
  auto shard = Batch({{"a", 0, "1"}, {"a", kMinute, "2"}});
  ::planb::testing::MaintainResult result;
  MaintainRequest request;
  request.retain = true;
  request.retain_from_ms = kMinute;
  ASSERT_TRUE(::planb::testing::RunMaintain(shard, request, &result).ok());
  EXPECT_EQ(result.stats.rows_deleted, 1u);
  EXPECT_EQ(GetBucket(*shard, "a", 0).code, Code::kNotFound);
  EXPECT_TRUE(Is(GetBucket(*shard, "a", kMinute), "a", kMinute, {1, 2, 2, 2}));
  EXPECT_EQ(::planb::testing::SchemeTableProblems(*shard), "");
}

INSTANTIATE_TEST_SUITE_P(MetricSchemes, MetricStoreTest, ::testing::ValuesIn(kSchemeMatrix), SchemeName);

}  // namespace
}  // namespace planb
