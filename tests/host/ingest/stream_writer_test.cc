#include "host/ingest/stream_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/map_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;

using ::planb::testing::DumpedRow;
using ::planb::testing::DumpMap;
using ::planb::testing::GetValue;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::StateMapSection;
using ::planb::testing::StateRecord;
using ::planb::testing::TempDir;

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

class StreamWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s =
        OpenTestRuntime(dir_.path(), StateMapSection("m", "hashed") + StateMapSection("d", "direct"), &runtime_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::string StreamDir() const { return runtime_->home().writer() + "/stream"; }

  // The finished stream's LMDB of `map`, opened as MergeProcessor opens batches.
  std::shared_ptr<MapEnv> OpenWritten(const std::string& map) {
    std::shared_ptr<const MapPlugins> plugins;
    EXPECT_TRUE(runtime_->catalog().Get(map, &plugins).ok());
    std::shared_ptr<MapEnv> env;
    const Status s =
        MapEnv::Open(StreamDir() + "/" + map, plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  TempDir dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(StreamWriterTest, WritesOneLmdbPerMap) {
  StreamWriter writer(runtime_->catalog(), StreamDir());
  ASSERT_TRUE(writer.Add("m", StateRecord("a", "1")).ok());
  ASSERT_TRUE(writer.Add("m", StateRecord("a", "2")).ok());
  ASSERT_TRUE(writer.Add("m", StateRecord("b", "3")).ok());
  ASSERT_TRUE(writer.Add("d", StateRecord("a", "4")).ok());
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(writer.RecordCounts(), (std::map<std::string, uint64_t>{{"d", 1}, {"m", 3}}));
  EXPECT_TRUE(fs::exists(StreamDir() + "/m/data.mdb"));
  EXPECT_TRUE(fs::exists(StreamDir() + "/d/data.mdb"));

  auto m = OpenWritten("m");
  ASSERT_NE(m, nullptr);
  std::string value;
  ASSERT_EQ(GetValue(*m, "a", &value), Code::kOk);
  EXPECT_EQ(value, "2");
  std::vector<DumpedRow> rows;
  ASSERT_TRUE(DumpMap(*m, &rows).ok());
  EXPECT_EQ(rows.size(), 2u);
  auto d = OpenWritten("d");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(GetValue(*d, "a", &value), Code::kOk);
  EXPECT_EQ(value, "4");
}

// Writes x under map "m" and y under "M" (the same map: the catalog matches names case-insensitively); prints
// each failed check to stderr and returns how many failed.
int WriteUnderTwoSpellings(Runtime& runtime, const std::string& dir) {
  int failures = 0;
  auto check = [&failures](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "failed: %s\n", what);
      ++failures;
    }
  };
  {
    StreamWriter writer(runtime.catalog(), dir);
    check(writer.Add("m", StateRecord("x", "1")).ok(), "Add(m, x)");
    check(writer.Add("M", StateRecord("y", "2")).ok(), "Add(M, y)");
    check(writer.Finish().ok(), "Finish");
    check(writer.RecordCounts() == std::map<std::string, uint64_t>{{"m", 2}}, "RecordCounts == {m: 2}");
  }
  std::shared_ptr<const MapPlugins> plugins;
  check(runtime.catalog().Get("m", &plugins).ok(), "catalog m");
  std::shared_ptr<MapEnv> env;
  Status s = MapEnv::Open(dir + "/m", plugins, MapEnv::Mode::kOpenExisting, MapEnv::kShardFlags, &env);
  check(s.ok(), "reopening the stream's LMDB");
  if (!s.ok()) return failures;
  std::string value;
  check(GetValue(*env, "x", &value) == Code::kOk && value == "1", "x == 1 (written before \"M\")");
  check(GetValue(*env, "y", &value) == Code::kOk && value == "2", "y == 2");
  return failures;
}

// Add must reuse the map's open LMDB whatever the spelling. Run in a child process: opening the environment a
// second time reinitialises its lock file under the open write transaction, which corrupts this thread's
// robust-mutex list and crashes later LMDB calls in the same process.
TEST_F(StreamWriterTest, AMapNameInAnotherCaseIsTheSameMap) {
  EXPECT_EXIT(std::exit(WriteUnderTwoSpellings(*runtime_, StreamDir())), ::testing::ExitedWithCode(0), "");
}

TEST_F(StreamWriterTest, OverwritesAcrossTransactionSlices) {
  // The writer commits every 100,000 records; a key written before and after a commit still has one row.
  constexpr int kKeys = 70000;
  constexpr int kRecords = 140000;
  StreamWriter writer(runtime_->catalog(), StreamDir());
  for (int i = 0; i < kRecords; ++i) {
    const std::string key = "key-" + std::to_string(i % kKeys);
    const std::string value = std::to_string(i);
    Status s = writer.Add("m", StateRecord(key, value));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(writer.RecordCounts().at("m"), static_cast<uint64_t>(kRecords));
  auto m = OpenWritten("m");
  ASSERT_NE(m, nullptr);
  std::vector<DumpedRow> rows;
  ASSERT_TRUE(DumpMap(*m, &rows).ok());
  EXPECT_EQ(rows.size(), static_cast<size_t>(kKeys));
  std::string value;
  for (int key : {0, 29999, 30000, 69999}) {
    ASSERT_EQ(GetValue(*m, "key-" + std::to_string(key), &value), Code::kOk);
    EXPECT_EQ(value, std::to_string(key + kKeys));
  }
}

TEST_F(StreamWriterTest, DiscardsWhatItWroteUnlessFinished) {
  {
    StreamWriter writer(runtime_->catalog(), StreamDir());
    ASSERT_TRUE(writer.Add("m", StateRecord("a", "1")).ok());
    ASSERT_TRUE(fs::exists(StreamDir() + "/m"));
  }
  EXPECT_FALSE(fs::exists(StreamDir()));

  StreamWriter finished(runtime_->catalog(), StreamDir());
  ASSERT_TRUE(finished.Add("m", StateRecord("a", "1")).ok());
  ASSERT_TRUE(finished.Finish().ok());
  finished.Discard();
  EXPECT_FALSE(fs::exists(StreamDir()));
}

TEST_F(StreamWriterTest, AStreamWithoutRecordsIsAnEmptyDirectory) {
  {
    StreamWriter writer(runtime_->catalog(), StreamDir());
    ASSERT_TRUE(writer.Finish().ok());
    EXPECT_TRUE(writer.RecordCounts().empty());
  }
  ASSERT_TRUE(fs::is_directory(StreamDir()));  // kept: it was finished
  EXPECT_TRUE(fs::is_empty(StreamDir()));
}

TEST_F(StreamWriterTest, RefusesAMapNotInTheConfig) {
  StreamWriter writer(runtime_->catalog(), StreamDir());
  const Status s = writer.Add("nope", StateRecord("a", "1"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "map 'nope' is not in the config")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "d, m")) << s.message();
}

TEST_F(StreamWriterTest, ARefusedRecordNamesTheMap) {
  StreamWriter writer(runtime_->catalog(), StreamDir());
  ASSERT_TRUE(writer.Add("d", StateRecord("fine", "1")).ok());
  const Status s = writer.Add("d", StateRecord(std::string(600, 'k'), "1"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "map d: scheme 'direct' (")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "libplanb_direct_key.so): KeyScheme::FirstCandidate: key of 600 bytes"))
      << s.message();
  EXPECT_EQ(writer.RecordCounts().at("d"), 1u);
}

}  // namespace
}  // namespace planb
