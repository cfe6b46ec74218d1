// `planb maintain`: one line per map of what it removed, --dry-run reporting exactly what a real pass removes and
// changing nothing, and its bad input (unknown --map, --dry-run without --once, arguments): exit 2, nothing
// changed. Real planb processes on a real home.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

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

// The lines of `out`, each cut before its "; " part about disk space (which depends on page sizes).
std::string WithoutSpace(const std::string& out) {
  std::string cut;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    const size_t space = line.find("; ");
    cut += line.substr(0, space) + "\n";
    start = end + 1;
  }
  return cut;
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
  EXPECT_EQ(WithoutSpace(r.out),
            "st: no condense or retain_for configured\n"
            "tm: 3 rows examined, 2 would be deleted (retention), 0 would be condensed\n");
  EXPECT_EQ(QueryAll(env, "tm"), before);
  r = env.Run({"maintain", "--once", "--map", "TM"});  // map names are case-insensitive, as everywhere
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WithoutSpace(r.out), "tm: 3 rows examined, 2 deleted (retention), 0 condensed\n");
  const std::string after = QueryAll(env, "tm");
  EXPECT_EQ(after.find("old"), std::string::npos) << after;
  EXPECT_NE(after.find("future"), std::string::npos) << after;
  r = env.Run({"maintain", "--once", "--map", "tm"});  // a second pass finds nothing more
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WithoutSpace(r.out), "tm: 1 rows examined, 0 deleted (retention), 0 condensed\n");
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
  EXPECT_EQ(WithoutSpace(r.out), "tm: 3 rows examined, 2 deleted (retention), 0 condensed\n");
  EXPECT_EQ(QueryAll(env, "tm").find("old"), std::string::npos);
}

// The columns of `planb stores`' table that say when maintenance last condensed and reclaimed a map.
constexpr size_t kCondensed = 12;
constexpr size_t kReclaimed = 13;

// The words of `map`'s line in `planb stores`.
std::vector<std::string> StoresLine(const CliEnv& env, const std::string& map) {
  const ProcessResult r = env.Run({"stores"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> out;
    for (std::string w; words >> w;) out.push_back(w);
    if (!out.empty() && out[0] == map) return out;
  }
  ADD_FAILURE() << "no line for " << map << " in:\n" << r.out;
  return {};
}

// Loads that rewrite every value leave free pages; past reclaim_free_share a pass compacts the shard (a dry run
// only says so), lookups still answer, and `planb stores` shows when it condensed and reclaimed.
TEST(CliMaintain, ReclaimsAShardPastItsFreeShareAndStoresShowsWhen) {
  CliEnv env("[map.st]\ntype = state\nreclaim_free_share = 0.2\n[map.tm]\ntype = temporal\nretain_for = 30d\n");
  for (int load = 0; load < 3; ++load) {
    std::string body;
    for (int k = 0; k < 2000; ++k) {
      body += testing::Ref("st", "key" + std::to_string(k), "value " + std::to_string(load)) + "\n";
    }
    body += TimedRef("tm", "2999-01-01T00:00:00Z", "k", "v");
    ASSERT_EQ(env.Load({env.Write("a.xml", ReferenceData(body))}).exit_code, 0);
  }
  const uintmax_t before = std::filesystem::file_size(env.shard_data("st"));
  std::vector<std::string> stores = StoresLine(env, "st");
  ASSERT_EQ(stores.size(), 14u);
  EXPECT_EQ(stores[kCondensed], "-");
  EXPECT_EQ(stores[kReclaimed], "-");
  ProcessResult r = env.Run({"maintain", "--once", "--dry-run", "--map", "st"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("st: no condense or retain_for configured; would reclaim "), std::string::npos) << r.out;
  EXPECT_EQ(std::filesystem::file_size(env.shard_data("st")), before);
  r = env.Run({"maintain", "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("st: no condense or retain_for configured; reclaimed "), std::string::npos) << r.out;
  EXPECT_LT(std::filesystem::file_size(env.shard_data("st")), before);
  r = env.Run({"lookup", "st", "key1999"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "value 2\n");
  stores = StoresLine(env, "st");
  ASSERT_EQ(stores.size(), 14u);
  EXPECT_EQ(stores[3], "2000");
  EXPECT_EQ(stores[kCondensed], "-");  // State is never condensed
  EXPECT_NE(stores[kReclaimed], "-");
  stores = StoresLine(env, "tm");
  ASSERT_EQ(stores.size(), 14u);
  EXPECT_NE(stores[kCondensed], "-");  // retention ran
  r = env.Run({"maintain", "--once", "--map", "st"});  // compact now: nothing more to reclaim
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("reclaimed"), std::string::npos) << r.out;
}

// A shard whose map left the config is kept for delete_orphans_after from when maintenance first saw it, then
// deleted; the dry run names it and deletes nothing.
TEST(CliMaintain, DeletesOrphanShardsAfterTheirTime) {
  CliEnv env("[map.st]\ntype = state\n[map.gone]\ntype = state\n");
  ASSERT_EQ(env.Load({env.Write("a.xml", ReferenceData(testing::Ref("st", "a", "1") + "\n" +
                                                         testing::Ref("gone", "b", "2")))})
                .exit_code,
            0);
  const std::string gone = env.home() + "/shards/gone";
  ASSERT_TRUE(std::filesystem::exists(gone));
  testing::WriteFile(env.config(), "delete_orphans_after = 1d\n[map.st]\ntype = state\n");
  ProcessResult r = env.Run({"maintain", "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("orphan shard gone: not configured since "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(delete_orphans_after)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(gone));
  testing::WriteFile(env.config(), "delete_orphans_after = 0s\n[map.st]\ntype = state\n");
  r = env.Run({"maintain", "--once", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("orphan shard gone: would be deleted"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(gone));
  r = env.Run({"maintain", "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("orphan shard gone: deleted"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(gone));
  r = env.Run({"lookup", "st", "a"});
  EXPECT_EQ(r.out, "1\n");
}

}  // namespace
}  // namespace planb
