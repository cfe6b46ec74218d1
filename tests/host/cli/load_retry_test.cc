// Loading the same files again is safe for every type, counters included: a stream's batch id comes from its
// records, so a batch already merged is recognised ("already merged as batch ...") and nothing counts twice; a
// pipeline that means to count identical content again says so with a new --batch-id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/node_process.h"

namespace planb {
namespace {

using ::planb::testing::CliEnv;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::DumpShards;
using ::planb::testing::ProcessResult;
using ::planb::testing::ReferenceData;
using ::planb::testing::ShardDataFiles;
using ::planb::testing::VisibleEntries;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kConfig[] =
    "[map.hits]\ntype = histogram\nscheme = hashed\nbucket = 1h\n"
    "[map.roles]\ntype = state\n";

std::string Hits(int copies) {
  std::string body;
  for (int c = 0; c < copies; ++c) {
    for (int i = 0; i < 20; ++i) {
      body += "  <reference><map>hits</map><time>2024-01-01T1" + std::to_string(i % 3) + ":0" +
              std::to_string(i % 10) + ":00Z</time><key>/page-" + std::to_string(i % 4) + "</key><value>" +
              std::to_string(i + 1) + "</value></reference>\n";
    }
  }
  return ReferenceData(body + "  <reference><map>roles</map><key>ann</key><value>admin</value></reference>");
}

std::string Counts(const CliEnv& env) {
  const ProcessResult q = env.Run({"query", "hits", "--format", "csv"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  return q.out;
}

TEST(LoadRetry, LoadingTheSameFileAgainMergesNothingTwice) {
  CliEnv env(kConfig);
  const std::string file = env.Write("hits.xml", Hits(1));
  const ProcessResult first = env.Load({file});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string once = Counts(env);
  const std::string versions = DumpBatchIds(env.home());

  const ProcessResult again = env.Load({file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr(file + ": already merged as batch content:")) << again.out;
  EXPECT_THAT(again.out, HasSubstr("merged 0 batch(es)"));
  EXPECT_EQ(Counts(env), once);
  EXPECT_EQ(DumpBatchIds(env.home()), versions) << "the content version moved without new data";
  EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty());

  // What a single load of the records twice over counts: the reference for "counted again on purpose".
  CliEnv twice(kConfig);
  ASSERT_EQ(twice.Load({twice.Write("hits2.xml", Hits(2))}).exit_code, 0);
  const ProcessResult counted = env.Run({"load", "--batch-id", "replay-2024-01-01", file});
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_THAT(counted.out, HasSubstr("merged 1 batch(es)"));
  EXPECT_EQ(Counts(env), Counts(twice));
  EXPECT_NE(Counts(env), once);
  // The same key again is the same batch again.
  const ProcessResult replayed = env.Run({"load", "--batch-id", "replay-2024-01-01", file});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_THAT(replayed.out, HasSubstr("already merged as batch replay-2024-01-01"));
  EXPECT_EQ(Counts(env), Counts(twice));
}

TEST(LoadRetry, AFileWithANewModificationTimeIsNewDataItsRecordsTakeThatTime) {
  // Records without <time> take the file's modification time: touched, the file gives other rows, so another id.
  CliEnv env(kConfig);
  const std::string file = env.Write("roles.xml", ReferenceData(
      "  <reference><map>roles</map><key>ann</key><value>admin</value></reference>"));
  struct utimbuf old_time {1700000000, 1700000000};
  ASSERT_EQ(::utime(file.c_str(), &old_time), 0);
  ASSERT_EQ(env.Load({file}).exit_code, 0);
  struct utimbuf new_time {1700000100, 1700000100};
  ASSERT_EQ(::utime(file.c_str(), &new_time), 0);
  const ProcessResult touched = env.Load({file});
  ASSERT_EQ(touched.exit_code, 0) << touched.err;
  EXPECT_THAT(touched.out, Not(HasSubstr("already merged"))) << touched.out;
  EXPECT_THAT(touched.out, HasSubstr("merged 1 batch(es)"));
}

TEST(LoadRetry, TheSameFileTwiceInOneLoadIsLoadedOnce) {
  CliEnv env(kConfig);
  const std::string file = env.Write("hits.xml", Hits(1));
  const ProcessResult both = env.Load({file, file});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_THAT(both.out, HasSubstr(file + ": the same batch as " + file + " (content:"));
  EXPECT_THAT(both.out, HasSubstr("merged 1 batch(es)"));
  CliEnv single(kConfig);
  ASSERT_EQ(single.Load({single.Write("hits.xml", Hits(1))}).exit_code, 0);
  EXPECT_EQ(Counts(env), Counts(single));
}

TEST(LoadRetry, AGivenBatchIdNamesEachFileOfTheLoad) {
  CliEnv env(kConfig);
  const std::string a = env.Write("a.xml", Hits(1));
  const std::string b = env.Write("b.xml", Hits(2));
  const ProcessResult load = env.Run({"load", "--batch-id", "nightly:7", a, b});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string ids = DumpBatchIds(env.home());
  EXPECT_THAT(ids, HasSubstr("nightly:7/1")) << ids;
  EXPECT_THAT(ids, HasSubstr("nightly:7/2")) << ids;
}

TEST(LoadRetry, AMalformedBatchIdIsRefusedBeforeAnythingIsWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "planb: load: --batch-id: empty"},
      {std::string(201, 'x'), "--batch-id: 201 bytes, more than the 200 allowed"},
      {"run\x01", "--batch-id: '\\x01' at byte 4 is not allowed"},
      {"run 1", "--batch-id: ' ' at byte 4 is not allowed (only A-Z a-z 0-9 . _ - : /)"},
  };
  for (const auto& [id, why] : cases) {
    CliEnv env(kConfig);
    const ProcessResult r = env.Run({"load", "--batch-id", id, env.Write("hits.xml", Hits(1))});
    EXPECT_EQ(r.exit_code, 2) << id;
    EXPECT_THAT(r.err, HasSubstr(why)) << id;
    EXPECT_THAT(ShardDataFiles(env.home()), IsEmpty()) << id;
    EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty()) << id;
  }
}

}  // namespace
}  // namespace planb
