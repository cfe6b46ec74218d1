// The raw LMDB baseline of `planb bench --type`: real files read, real LMDB files written and read back.
#include "host/scheme_trial/raw_baseline.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

std::string Records(const std::string& map, int from, int to) {
  std::string body = "<referenceData xmlns=\"reference-data:2\">\n";
  for (int i = from; i < to; ++i) {
    body += "  <reference><map>" + map + "</map><key>k" + std::to_string(i) + "</key><value>v" + std::to_string(i) +
            "</value></reference>\n";
  }
  return body + "</referenceData>\n";
}

TEST(RawBaseline, PutsEveryRecordOfTheMapAndLooksUpHitsAndMisses) {
  TempDir dir;
  MapSample sample;
  sample.files = {dir / "a.xml", dir / "b.xml"};
  WriteFile(sample.files[0], Records("m", 0, 30) + "");
  WriteFile(sample.files[1], Records("m", 20, 50));  // 10 keys again: 60 records, 50 rows
  for (int i = 0; i < 50; i += 5) {
    sample.hits.push_back({"k" + std::to_string(i), 0});
    sample.misses.push_back({"absent" + std::to_string(i), 0});
  }
  sample.misses.push_back({"k1", 0});  // present: not a miss, left out of the figures
  std::vector<int64_t> timings;
  TrialFigures figures;
  const std::string work = dir / "raw";
  ASSERT_TRUE(RunRawBaseline("m", sample, 64 << 20, work, nullptr, &timings, &figures).ok());
  EXPECT_EQ(figures.records, 60u);
  EXPECT_EQ(figures.sizes.rows, 50u);
  EXPECT_GT(figures.sizes.file_bytes, 0u);
  EXPECT_EQ(figures.hits.lookups, 10u);
  EXPECT_EQ(figures.misses.lookups, 10u);
  EXPECT_GT(figures.load_rows_per_s, 0);
  EXPECT_GT(figures.merge_rows_per_s, 0);
  EXPECT_TRUE(std::filesystem::exists(work + "/shard.mdb"));
}

TEST(RawBaseline, RecordsOfOtherMapsAreLeftOut) {
  TempDir dir;
  MapSample sample;
  sample.files = {dir / "a.xml"};
  WriteFile(sample.files[0], Records("other", 0, 10));
  std::vector<int64_t> timings;
  TrialFigures figures;
  ASSERT_TRUE(RunRawBaseline("m", sample, 64 << 20, dir / "raw", nullptr, &timings, &figures).ok());
  EXPECT_EQ(figures.records, 0u);
  EXPECT_EQ(figures.sizes.rows, 0u);
}

TEST(RawBaseline, StopsWhenAsked) {
  TempDir dir;
  MapSample sample;
  sample.files = {dir / "a.xml"};
  WriteFile(sample.files[0], Records("m", 0, 10));
  std::atomic<bool> stop{true};
  std::vector<int64_t> timings;
  TrialFigures figures;
  const Status s = RunRawBaseline("m", sample, 64 << 20, dir / "raw", &stop, &timings, &figures);
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("interrupted"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace planb::testing
