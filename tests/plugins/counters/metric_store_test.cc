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

constexpr int64_t kMinute = 60000;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string Shortest(double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, r.ptr);
}

::testing::AssertionResult Is(const Bucket& b, std::string_view key, int64_t start, const Stats& want) {
  if (b.code != Code::kOk || b.key != key || b.start != start || b.count != want.count || b.sum != want.sum ||
      b.min != want.min || b.max != want.max || b.mean != want.sum / static_cast<double>(want.count)) {
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

TEST_P(MetricStoreTest, SumsComeBackAsTheExactDouble) {
  auto env = Batch({{"a", 0, "11498.189"},
                    {"b", 0, "0.1"},
                    {"b", 1, "0.2"},
                    {"c", 0, "5e-324"},
                    {"d", 0, "1.7976931348623157e308"}});
  const Bucket a = GetBucket(*env, "a", 0);
  EXPECT_EQ(a.sum, 11498.189);
  EXPECT_EQ(Shortest(a.sum), "11498.189");
  EXPECT_EQ(Shortest(a.mean), "11498.189");
  EXPECT_EQ(Shortest(GetBucket(*env, "b", 0).sum), "0.30000000000000004");  // what 0.1 + 0.2 is, not "0.3"
  EXPECT_EQ(GetBucket(*env, "c", 0).min, 5e-324);
  EXPECT_EQ(Shortest(GetBucket(*env, "d", 0).max), "1.7976931348623157e+308");
  std::vector<Bucket> rows;
  ASSERT_TRUE(DumpBuckets(*env, &rows).ok());
  bool seen = false;
  for (const Bucket& row : rows) {
    if (row.key != "a") continue;
    seen = true;
    EXPECT_EQ(Shortest(row.sum), "11498.189");
  }
  EXPECT_TRUE(seen);
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

TEST_P(MetricStoreTest, AnOverflowingSumIsRefusedNamingKeyAndBucket) {
  auto shard = Batch({{"big", kMinute, "1e308"}});
  const Status s = MergeInto(Batch({{"big", kMinute + 1, "1e308"}}), shard);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'big'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "1970-01-01T00:01:00.000Z")) << s.message();
  EXPECT_TRUE(Is(GetBucket(*shard, "big", kMinute), "big", kMinute, {1, 1e308, 1e308, 1e308}));
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
