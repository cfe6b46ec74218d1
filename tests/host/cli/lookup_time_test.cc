// Records without <time>: they take `planb load --effective-time`, and by default the input file's modification
// time, so that loading an unchanged file again changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::CsvColumn;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SetModificationTime;
using testing::TimedRef;

// 2024-03-01T12:34:56.789Z and 2024-03-01T00:00:00.000Z in milliseconds since the epoch.
constexpr int64_t kMtimeMs = 1709296496789;
constexpr int64_t kMidnightMs = 1709251200000;

// One record without <time> in each time-keyed map.
std::string UntimedFile(const CliEnv& env) {
  return env.Write("untimed.xml",
                   ReferenceData(Lines({TimedRef("tm_hashed", "", "k", "v"), TimedRef("tm_direct", "", "k", "v"),
                                        RangeRef("trg", "", "1", "5", "v")})));
}

std::string QueryCsv(const CliEnv& env, const std::string& map) {
  const ProcessResult r = env.Run({"query", map, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << map << ": " << r.err;
  return r.out;
}

ProcessResult LookupAt(const CliEnv& env, const std::string& map, const std::string& key, const std::string& time) {
  return env.Run({"lookup", map, key, "--time", time});
}

TEST(CliLookupTime, RecordsWithoutTimeTakeTheEffectiveTimeOption) {
  CliEnv env(kTypedMapsConfig);
  const ProcessResult r = env.Run({"load", UntimedFile(env), "--effective-time", "2021-06-15T08:30:00.250Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string map : {"tm_hashed", "tm_direct", "trg"}) {
    EXPECT_EQ(CsvColumn(QueryCsv(env, map), "EffectiveTime"), std::vector<std::string>{"2021-06-15T08:30:00.250Z"})
        << map;
    const std::string key = map == "trg" ? "3" : "k";
    EXPECT_EQ(LookupAt(env, map, key, "2021-06-15T08:30:00.249Z").exit_code, 1) << map;
    const ProcessResult at = LookupAt(env, map, key, "2021-06-15T08:30:00.250Z");
    EXPECT_EQ(at.exit_code, 0) << map << ": " << at.err;
    EXPECT_EQ(at.out, "v\n") << map;
  }
}

TEST(CliLookupTime, AnExplicitTimeWinsOverTheEffectiveTimeOption) {
  CliEnv env(kTypedMapsConfig);
  const std::string file =
      env.Write("mixed.xml", ReferenceData(Lines({TimedRef("tm_direct", "2020-01-01T00:00:00.000Z", "timed", "a"),
                                                  TimedRef("tm_direct", "", "untimed", "b")})));
  const ProcessResult r = env.Run({"load", file, "--effective-time", "2022-02-02T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = QueryCsv(env, "tm_direct");
  const std::vector<std::string> keys = CsvColumn(csv, "Key");
  const std::vector<std::string> times = CsvColumn(csv, "EffectiveTime");
  ASSERT_EQ(keys.size(), 2u) << csv;
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(times[i], keys[i] == "timed" ? "2020-01-01T00:00:00.000Z" : "2022-02-02T00:00:00.000Z") << keys[i];
  }
}

TEST(CliLookupTime, RecordsWithoutTimeDefaultToTheFilesModificationTime) {
  CliEnv env(kTypedMapsConfig);
  const std::string file = UntimedFile(env);
  SetModificationTime(file, kMtimeMs);
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string map : {"tm_hashed", "tm_direct", "trg"}) {
    EXPECT_EQ(CsvColumn(QueryCsv(env, map), "EffectiveTime"), std::vector<std::string>{"2024-03-01T12:34:56.789Z"})
        << map;
  }
  // The value is in effect from the modification instant itself.
  r = LookupAt(env, "tm_direct", "k", "2024-03-01T12:34:56.789Z");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v\n");
}

TEST(CliLookupTime, AFileModifiedOnAWholeSecondTakesThatSecond) {
  CliEnv env(kTypedMapsConfig);
  const std::string file = UntimedFile(env);
  SetModificationTime(file, kMidnightMs);
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CsvColumn(QueryCsv(env, "tm_direct"), "EffectiveTime"),
            std::vector<std::string>{"2024-03-01T00:00:00.000Z"});
  r = LookupAt(env, "tm_direct", "k", "2024-03-01T00:00:00.000Z");
  EXPECT_EQ(r.exit_code, 0) << "a value loaded from a file modified at midnight is in effect at midnight: " << r.err;
}

TEST(CliLookupTime, LoadingTheSameFileTwiceGivesIdenticalQueryOutput) {
  CliEnv env(kTypedMapsConfig);
  const std::string file = UntimedFile(env);
  SetModificationTime(file, kMtimeMs);
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> maps = {"tm_hashed", "tm_direct", "trg"};
  std::vector<std::string> first;
  for (const std::string& map : maps) first.push_back(QueryCsv(env, map));
  for (int again = 0; again < 3; ++again) {
    r = env.Load({file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (size_t i = 0; i < maps.size(); ++i) EXPECT_EQ(QueryCsv(env, maps[i]), first[i]) << maps[i] << " " << again;
  }
  // One row each: the reload did not add a version.
  for (size_t i = 0; i < maps.size(); ++i) EXPECT_EQ(CsvColumn(first[i], "Value").size(), 1u) << first[i];
}

TEST(CliLookupTime, ATouchedFileAddsAVersionAtItsNewTime) {
  CliEnv env(kTypedMapsConfig);
  const std::string file = UntimedFile(env);
  SetModificationTime(file, kMidnightMs);
  ASSERT_EQ(env.Load({file}).exit_code, 0);
  SetModificationTime(file, kMtimeMs);
  ASSERT_EQ(env.Load({file}).exit_code, 0);
  EXPECT_EQ(CsvColumn(QueryCsv(env, "tm_hashed"), "Value").size(), 2u);
}

}  // namespace
}  // namespace planb
