// Histogram and metric maps through the whole load path (XML -> stream -> staging -> merge, RunLoad) and the
// host's readers: counts of files loaded again, malformed <value>s and `bucket` options, warm lookups.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/common/iso_time.h"
#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "plugins/counters/bucket_fixture.h"
#include "support/heap_trap.h"
#include "support/map_fixture.h"
#include "support/test_env.h"
#include "support/time_map_fixture.h"

namespace planb {
namespace {

using ::planb::testing::Bucket;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::GetBucket;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapSection;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

constexpr int64_t kBase = 1704067200000;  // 2024-01-01T00:00:00Z
constexpr int64_t kHour = 3600000;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// One <reference> of map `map` (empty `value`: none).
std::string Ref(const std::string& map, const std::string& key, int64_t time_ms, const std::string& value) {
  std::string xml =
      "<reference><map>" + map + "</map><time>" + FormatIsoTime(time_ms) + "</time><key>" + key + "</key>";
  if (!value.empty()) xml += "<value>" + value + "</value>";
  return xml + "</reference>\n";
}

std::string Document(const std::string& body) {
  return "<referenceData xmlns=\"reference-data:2\">\n" + body + "</referenceData>\n";
}

class CountersLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = OpenTestRuntime(dir_.path(),
                                     MapSection("h", "histogram", "hashed", "bucket = 1h\n") +
                                         MapSection("x", "metric", "lookup_table", "bucket = 1m\n"),
                                     &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  Status Load(const std::string& name, const std::string& body, std::optional<std::string> batch_id = std::nullopt,
              LoadReport* report_out = nullptr) {
    const std::string path = dir_ / name;
    WriteFile(path, Document(body));
    LoadOptions options;
    options.effective_time_ms = kBase;
    options.batch_id = std::move(batch_id);
    LoadReport report;
    Status s = RunLoad(*runtime_, {path}, options, &report);
    if (report_out != nullptr) *report_out = std::move(report);
    return s;
  }

  Bucket Get(const std::string& map, const std::string& key, int64_t time_ms) {
    std::shared_ptr<MapEnv> shard;
    const Status s = runtime_->OpenShard(map, &shard);
    if (!s.ok()) {
      Bucket b;
      b.code = s.code();
      return b;
    }
    return GetBucket(*shard, key, time_ms);
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(CountersLoadTest, AFileLoadedAgainIsTheSameBatchUnderANewBatchIdItCountsAgain) {
  const std::string body = Ref("h", "k", kBase + 5, "") + Ref("h", "k", kBase + kHour - 1, "4") +
                           Ref("x", "k", kBase, "2.5") + Ref("x", "k", kBase + 1, "11498.189");
  ASSERT_TRUE(Load("a.xml", body).ok());
  EXPECT_EQ(Get("h", "k", kBase + 10).count, 5);
  Bucket metric = Get("x", "k", kBase);
  EXPECT_EQ(metric.count, 2);
  EXPECT_EQ(metric.sum, 2.5 + 11498.189);
  LoadReport again;
  ASSERT_TRUE(Load("a.xml", body, std::nullopt, &again).ok());  // the same file again: the same batch
  ASSERT_EQ(again.streams.size(), 1u);
  EXPECT_TRUE(again.streams[0].already_merged);
  EXPECT_EQ(again.streams[0].sequence, 0u) << "nothing is staged";
  EXPECT_EQ(Get("h", "k", kBase + 10).count, 5);
  EXPECT_EQ(Get("x", "k", kBase).count, 2);
  ASSERT_TRUE(Load("a.xml", body, "count-it-again").ok());  // a new batch on purpose
  EXPECT_EQ(Get("h", "k", kBase + 10).count, 10);
  metric = Get("x", "k", kBase);
  EXPECT_EQ(metric.count, 4);
  EXPECT_EQ(metric.min, 2.5);
  EXPECT_EQ(metric.max, 11498.189);
}

TEST_F(CountersLoadTest, AMalformedValueNamesFileLineAndColumnAndWritesNothing) {
  const std::pair<std::string, std::string> cases[] = {
      {Ref("h", "k", kBase, "1.5"), "not a whole number"},
      {Ref("h", "k", kBase, "99999999999999999999"), "out of range"},
      {Ref("h", "k", kBase, "<n>1</n>"), "not XML"},
      {Ref("x", "k", kBase, "abc"), "not a finite decimal number"},
      {Ref("x", "k", kBase, "nan"), "not a finite decimal number"},
      {Ref("x", "k", kBase, ""), "has no <value>"},
  };
  int n = 0;
  for (const auto& [bad, why] : cases) {
    const std::string name = "bad" + std::to_string(n++) + ".xml";
    // Line 1 is <referenceData>, line 2 a good record of each map, line 3 the bad one, indented by two.
    const Status s = Load(name, Ref("h", "k", kBase, "") + Ref("x", "k", kBase, "1") + "  " + bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
    EXPECT_TRUE(Contains(s.message(), dir_ / name + ":4:3:")) << s.message();
    EXPECT_TRUE(Contains(s.message(), why)) << s.message();
    EXPECT_EQ(Get("h", "k", kBase).code, Code::kNotFound) << "nothing merged for " << bad;
    EXPECT_EQ(Get("x", "k", kBase).code, Code::kNotFound) << "nothing merged for " << bad;
  }
}

TEST(CountersOptionTest, ABucketThatIsNotAPositiveDurationIsRefusedNamingMapAndOption) {
  for (const char* type : {"histogram", "metric"}) {
    for (const char* bad : {"0", "0s", "-1m", "abc", "", "1M", "1 m", "1x", "m", "99999999999999999999ms",
                            "9999999999999999d", "P", "PT", "P1M", "PT1.5M"}) {
      std::shared_ptr<const MapPlugins> plugins;
      const Status s = CreateMapPlugins(MakeMapConfig("counts", type, "hashed", {{"bucket", bad}}), &plugins);
      EXPECT_EQ(s.code(), Code::kInvalidArgument) << type << " bucket = '" << bad << "'";
      EXPECT_TRUE(Contains(s.message(), "[map.counts]")) << s.message();
      EXPECT_TRUE(Contains(s.message(), std::string("option bucket = '") + bad + "'")) << s.message();
      EXPECT_TRUE(Contains(s.message(), "not a positive duration")) << s.message();
    }
  }
}

TEST(CountersOptionTest, BucketsTakeTheConfigsDurationSyntax) {
  TempDir dir;
  const std::pair<const char*, int64_t> cases[] = {
      {"500ms", 500},      {"10s", 10000},          {"1m", 60000},    {"1h", kHour},           {"1d", 24 * kHour},
      {"P1D", 24 * kHour}, {"PT1H30M", 90 * 60000}, {"pt0.25s", 250}, {"P1W", 7 * 24 * kHour}, {"7", -1}};
  int n = 0;
  for (const auto& [text, width] : cases) {
    std::shared_ptr<const MapPlugins> plugins;
    const Status s = CreateMapPlugins(MakeMapConfig("m", "histogram", "hashed", {{"bucket", text}}), &plugins);
    if (width < 0) {  // a number without a unit is not a duration
      EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
      continue;
    }
    ASSERT_TRUE(s.ok()) << text << ": " << s.message();
    std::shared_ptr<MapEnv> env;
    ASSERT_TRUE(::planb::testing::CreateMapEnv(dir / std::to_string(n++), plugins, &env).ok());
    ASSERT_TRUE(::planb::testing::PutCounts(env, {{"k", width * 3 + 1, std::nullopt}}).ok());
    EXPECT_EQ(GetBucket(*env, "k", width * 3).start, width * 3) << text;
    EXPECT_EQ(GetBucket(*env, "k", width * 4 - 1).count, 1) << text;
    EXPECT_EQ(GetBucket(*env, "k", width * 4).code, Code::kNotFound) << text;
  }
}

TEST(CountersOptionTest, ABucketOptionInTheConfigIsCheckedWhenTheMapIsUsed) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), MapSection("bad", "histogram", "hashed", "bucket = -1m\n"), &runtime);
  if (s.ok()) {
    std::shared_ptr<MapEnv> shard;
    s = runtime->OpenShard("bad", &shard);
  }
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_TRUE(Contains(s.message(), "[map.bad]")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "option bucket = '-1m'")) << s.message();
}

TEST_F(CountersLoadTest, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  std::string body;
  for (int i = 0; i < 300; ++i) {
    body += Ref("h", "key-" + std::to_string(i), kBase + i, "");
    body += Ref("x", "key-" + std::to_string(i), kBase + i, std::to_string(i) + ".5");
  }
  ASSERT_TRUE(Load("a.xml", body).ok());
  for (const char* map : {"h", "x"}) {
    std::shared_ptr<MapEnv> shard;
    ASSERT_TRUE(runtime_->OpenShard(map, &shard).ok());
    MapReader reader;
    ASSERT_TRUE(reader.Open(shard).ok());
    struct Probe {
      std::string key;
      int64_t time;
      Code code;
    };
    std::vector<Probe> probes;
    for (int i = 0; i < 300; ++i) {
      const std::string key = "key-" + std::to_string(i);
      probes.push_back({key, kBase, Code::kOk});
      probes.push_back({key, kBase - 1, Code::kNotFound});
      probes.push_back({"missing-" + std::to_string(i), kBase, Code::kNotFound});
    }
    const auto result = RunWithoutHeap([&] {
      LookupKey lookup;
      ErrorBuffer error;
      for (int round = 0; round < 3; ++round) {
        for (const Probe& probe : probes) {
          Row row;  // the reader attaches its own-field array (Count is field 2 of both types)
          lookup.key = Bytes(probe.key);
          lookup.time_ms = probe.time;
          if (reader.Lookup(lookup, &row, &error) != probe.code) return 2;
          if (probe.code == Code::kOk &&
              (row.own_fields == nullptr || row.own_fields[2].number < 1 || row.effective_time_ms != kBase)) {
            return 3;
          }
        }
      }
      return 0;
    });
    ASSERT_TRUE(result.forked);
    ASSERT_TRUE(result.armed);
    EXPECT_EQ(result.signal, 0) << map << ": a lookup allocated";
    EXPECT_EQ(result.exit_code, 0) << map << ": 2 a wrong outcome, 3 a wrong row";
  }
}

}  // namespace
}  // namespace planb
