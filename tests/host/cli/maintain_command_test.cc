// `planb maintain`: one line per map of what it removed, --dry-run reporting exactly what a real pass removes and
// changing nothing, and its bad input (unknown --map, --dry-run without --once, arguments): exit 2, nothing
// changed. Real planb processes on a real home.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::Lines;
using testing::ProcessResult;
using testing::ReferenceData;
using testing::TimedRef;

// tm keeps 30 days; st (State) has nothing to maintain.
constexpr char kConfig[] =
    "[map.tm]\ntype = temporal\nscheme = direct\nretain_for = 30d\n"
    "[map.st]\ntype = state\n";

std::string Data() {
  return ReferenceData(Lines({TimedRef("tm", "2001-01-01T00:00:00Z", "k", "old"),
                              TimedRef("tm", "2001-06-01T00:00:00Z", "k", "older"),
                              TimedRef("tm", "2999-01-01T00:00:00Z", "k", "future"),
                              TimedRef("st", "", "paris", "fr")}));
}

std::string QueryAll(const CliEnv& env, const std::string& map) {
  const ProcessResult r = env.Run({"query", map, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(CliMaintain, RefusesBadArgumentsChangingNothing) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("a.xml", Data())}).exit_code, 0);
  const std::string before = QueryAll(env, "tm");
  ProcessResult r = env.Run({"maintain", "--once", "--map", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "planb: maintain: unknown map 'nope' (not in the config)\n");
  r = env.Run({"maintain", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "planb: maintain: --dry-run needs --once (a dry run reports one pass)\n");
  r = env.Run({"maintain", "--once", "tm"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("maintain"), std::string::npos) << r.err;
  EXPECT_EQ(QueryAll(env, "tm"), before);
}

TEST(CliMaintain, DryRunReportsWhatTheRealPassRemoves) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("a.xml", Data())}).exit_code, 0);
  const std::string before = QueryAll(env, "tm");
  ProcessResult r = env.Run({"maintain", "--once", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "st: no condense or retain_for configured\n"
            "tm: 3 rows examined, 2 would be deleted (retention), 0 would be condensed\n");
  EXPECT_EQ(QueryAll(env, "tm"), before);
  r = env.Run({"maintain", "--once", "--map", "TM"});  // map names are case-insensitive, as everywhere
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tm: 3 rows examined, 2 deleted (retention), 0 condensed\n");
  const std::string after = QueryAll(env, "tm");
  EXPECT_EQ(after.find("old"), std::string::npos) << after;
  EXPECT_NE(after.find("future"), std::string::npos) << after;
  r = env.Run({"maintain", "--once", "--map", "tm"});  // a second pass finds nothing more
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tm: 1 rows examined, 0 deleted (retention), 0 condensed\n");
}

// kill -9 just before a map's maintenance commits: the shard is the old one, whole, and the next pass does the
// work.
TEST(CliMaintain, AKillBeforeTheCommitLeavesTheOldShardAndTheNextPassFinishes) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("a.xml", Data())}).exit_code, 0);
  const std::string before = QueryAll(env, "tm");
  ::setenv("PLANB_FAULT", "maintain.before_commit", 1);
  ProcessResult r = env.Run({"maintain", "--once", "--map", "tm"});
  ::unsetenv("PLANB_FAULT");
  EXPECT_EQ(r.exit_code, -1) << "not killed: " << r.out << r.err;
  EXPECT_EQ(QueryAll(env, "tm"), before);
  r = env.Run({"maintain", "--once", "--map", "tm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tm: 3 rows examined, 2 deleted (retention), 0 condensed\n");
  EXPECT_EQ(QueryAll(env, "tm").find("old"), std::string::npos);
}

}  // namespace
}  // namespace planb
