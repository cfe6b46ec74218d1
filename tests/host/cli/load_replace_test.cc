// `planb load --replace`: after it a map holds exactly the rows of the files (a new release of a range file leaves
// none of the old one's narrower ranges behind), switched in one step: lookups running meanwhile answer from the
// old or the new release, never a mix and never a miss of a key both have.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/node_process.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using ::planb::testing::CliEnv;
using ::planb::testing::DumpBatchIds;
using ::planb::testing::DumpShards;
using ::planb::testing::ProcessResult;
using ::planb::testing::RangeRef;
using ::planb::testing::ReferenceData;
using ::planb::testing::VisibleEntries;
using ::testing::HasSubstr;

constexpr char kConfig[] = "[map.geo]\ntype = ranged\nkey_format = ipv4\n[map.roles]\ntype = state\n";

// The old release: a narrow range inside what the new release gives as one, and a range the new one drops.
std::string OldRelease() {
  return ReferenceData(RangeRef("geo", "", "4.201.0.0", "4.203.159.255", "XX") + "\n" +
                       RangeRef("geo", "", "4.203.160.0", "4.203.255.255", "US") + "\n" +
                       RangeRef("geo", "", "9.0.0.0", "9.0.0.255", "OLDONLY") + "\n" +
                       "  <reference><map>roles</map><key>ann</key><value>admin</value></reference>");
}

std::string NewRelease() {
  return ReferenceData(RangeRef("geo", "", "4.201.0.0", "4.203.255.255", "BR") + "\n" +
                       RangeRef("geo", "", "10.0.0.0", "10.0.0.255", "NEWONLY"));
}

std::string Lookup(const CliEnv& env, const std::string& key) {
  const ProcessResult r = env.Lookup("geo", key);
  return std::to_string(r.exit_code) + ":" + r.out;
}

TEST(LoadReplace, ANewReleaseLeavesNoneOfTheOldRowsBehind) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("old.xml", OldRelease())}).exit_code, 0);
  const std::string new_file = env.Write("new.xml", NewRelease());

  // Loaded on top, the old narrower range still answers: the reason --replace exists.
  CliEnv on_top(kConfig);
  ASSERT_EQ(on_top.Load({on_top.Write("old.xml", OldRelease())}).exit_code, 0);
  ASSERT_EQ(on_top.Load({new_file}).exit_code, 0);
  EXPECT_EQ(Lookup(on_top, "4.203.230.172"), "0:US\n");

  const ProcessResult replaced = env.Run({"load", "--replace", new_file});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_THAT(replaced.out, HasSubstr("replaced the whole content of geo"));
  EXPECT_EQ(Lookup(env, "4.203.230.172"), "0:BR\n");
  EXPECT_EQ(Lookup(env, "4.201.0.1"), "0:BR\n");
  EXPECT_EQ(Lookup(env, "10.0.0.7"), "0:NEWONLY\n");
  EXPECT_EQ(Lookup(env, "9.0.0.1").substr(0, 2), "1:") << "a range only the old release had";
  // A map the files do not write is left alone.
  EXPECT_EQ(env.Lookup("roles", "ann").out, "admin\n");

  // Row for row what a home that only ever had the new release as its replacement holds (roles aside): the same
  // rows, indexes and tombstone.
  CliEnv fresh("[map.geo]\ntype = ranged\nkey_format = ipv4\n[map.roles]\ntype = state\n");
  ASSERT_EQ(fresh.Run({"load", "--replace", new_file}).exit_code, 0);
  const std::string dump = DumpShards(env.home());
  const std::string geo_rows = dump.substr(dump.find("geo/"), dump.find("roles/") - dump.find("geo/"));
  const std::string fresh_dump = DumpShards(fresh.home());
  EXPECT_EQ(geo_rows, fresh_dump.substr(fresh_dump.find("geo/"))) << dump;

  // The version moved by one (readers fetch the new content); the replacement again is the same batch.
  const std::string versions = DumpBatchIds(env.home());
  EXPECT_THAT(versions, HasSubstr("geo/meta: content_version = 2 ")) << versions;
  const ProcessResult again = env.Run({"load", "--replace", new_file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("already merged as batch content:"));
  EXPECT_EQ(DumpBatchIds(env.home()), versions);
  EXPECT_FALSE(std::filesystem::exists(env.home() + "/shards/.geo.compact")) << "the old shard was left behind";
}

TEST(LoadReplace, SeveralFilesAreOneReplacement) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("old.xml", OldRelease())}).exit_code, 0);
  const std::string a = env.Write("a.xml", ReferenceData(RangeRef("geo", "", "1.0.0.0", "1.0.0.255", "A")));
  const std::string b = env.Write("b.xml", ReferenceData(RangeRef("geo", "", "2.0.0.0", "2.0.0.255", "B")));
  const ProcessResult r = env.Run({"load", "--replace", a, b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(a + " + " + b + ": 2 records in 1 map(s)"));
  EXPECT_THAT(r.out, HasSubstr("merged 1 batch(es)"));
  EXPECT_EQ(Lookup(env, "1.0.0.1"), "0:A\n");
  EXPECT_EQ(Lookup(env, "2.0.0.1"), "0:B\n");
  EXPECT_EQ(Lookup(env, "4.203.230.172").substr(0, 2), "1:");
}

TEST(LoadReplace, CsvNeedsItsMapAndAReplacementOfANewMapIsAFirstLoad) {
  CliEnv env(kConfig);
  const std::string csv = env.Write("geo.csv", "from,to,country\n1.0.0.0,1.0.0.255,AU\n");
  const ProcessResult no_map = env.Run({"load", "--replace", "--format", "csv", "--from", "from", "--to", "to",
                                        "--value", "country", csv});
  EXPECT_EQ(no_map.exit_code, 2);
  EXPECT_THAT(no_map.err, HasSubstr("--map: the map the rows go to is required with --format csv|jsonl"));
  const ProcessResult r = env.Run({"load", "--replace", "--format", "csv", "--map", "geo", "--from", "from", "--to",
                                   "to", "--value", "country", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lookup(env, "1.0.0.9"), "0:AU\n");
  // A replacement by nothing is refused before anything is staged: the map stays as it is.
  const std::string empty = env.Write("empty.csv", "from,to,country\n");
  const ProcessResult nothing = env.Run({"load", "--replace", "--format", "csv", "--map", "geo", "--from", "from",
                                         "--to", "to", "--value", "country", empty});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(nothing.err, HasSubstr(empty + ": --replace: no records, so no map would be replaced"));
  EXPECT_EQ(Lookup(env, "1.0.0.9"), "0:AU\n");
  const ProcessResult empty_xml = env.Run({"load", "--replace", env.Write("empty.xml", ReferenceData(""))});
  EXPECT_EQ(empty_xml.exit_code, 2);
  EXPECT_THAT(empty_xml.err, HasSubstr("--replace: no records"));
}

// PLANB_FAULT for the planb processes this test starts.
class FaultGuard {
 public:
  explicit FaultGuard(const char* point) { ::setenv("PLANB_FAULT", point, 1); }
  ~FaultGuard() { ::unsetenv("PLANB_FAULT"); }
};

class ReplaceCrash : public ::testing::TestWithParam<const char*> {};

// kill -9 of the load just before or just after the replacement's commit (its deletion of the old rows and its
// rows are one write transaction): the next load (of anything) finishes the staged replacement, and the home ends
// as if nothing had died.
TEST_P(ReplaceCrash, TheNextRunFinishesTheReplacement) {
  CliEnv env(kConfig);
  ASSERT_EQ(env.Load({env.Write("old.xml", OldRelease())}).exit_code, 0);
  const std::string new_file = env.Write("new.xml", NewRelease());
  {
    FaultGuard fault(GetParam());
    const ProcessResult died = env.Run({"load", "--replace", new_file});
    ASSERT_EQ(died.exit_code, -1) << "the fault point was not reached: " << died.out << died.err;
  }
  // Between the death and the next run a lookup answers from one release or the other.
  const std::string between = Lookup(env, "4.203.230.172");
  EXPECT_TRUE(between == "0:US\n" || between == "0:BR\n") << between;

  // The next run loads something else: it merges the replacement still staged first.
  const ProcessResult next = env.Load({env.Write("roles.xml", ReferenceData(
      "  <reference><map>roles</map><key>bob</key><value>viewer</value></reference>"))});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_THAT(VisibleEntries(env.home() + "/quarantine"), ::testing::IsEmpty());
  EXPECT_EQ(Lookup(env, "4.203.230.172"), "0:BR\n");
  EXPECT_EQ(Lookup(env, "9.0.0.1").substr(0, 2), "1:");
  EXPECT_TRUE(VisibleEntries(env.home() + "/staging").empty());
  EXPECT_FALSE(std::filesystem::exists(env.home() + "/shards/.geo.compact"));
  CliEnv reference(kConfig);
  ASSERT_EQ(reference.Load({env.dir() + "/old.xml"}).exit_code, 0);  // the same file: the same effective time
  ASSERT_EQ(reference.Run({"load", "--replace", new_file}).exit_code, 0);
  ASSERT_EQ(reference.Load({env.dir() + "/roles.xml"}).exit_code, 0);
  EXPECT_EQ(DumpShards(env.home()), DumpShards(reference.home()));
}

INSTANTIATE_TEST_SUITE_P(Points, ReplaceCrash, ::testing::Values("merge.before_commit", "merge.after_commit"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param).find("before") != std::string::npos ? "BeforeCommit"
                                                                                                : "AfterCommit";
                         });

// Lookups (each a `planb lookup` process) run while the replacement merges: every answer is the old release's or
// the new one's, for keys both have, and a key both have is never missed.
TEST(LoadReplace, LookupsDuringTheSwitchSeeTheOldOrTheNewNeverAMixOrAMiss) {
  CliEnv env(kConfig);
  // Big enough that the replacement's merge spans many lookups.
  std::string old_body, new_body;
  for (int i = 0; i < 20000; ++i) {
    const std::string base = "20." + std::to_string(i / 200) + "." + std::to_string(i % 200) + ".";
    old_body += RangeRef("geo", "", base + "0", base + "255", "old") + "\n";
    new_body += RangeRef("geo", "", base + "0", base + "127", "new") + "\n" +
                RangeRef("geo", "", base + "128", base + "255", "new") + "\n";
  }
  ASSERT_EQ(env.Load({env.Write("old.xml", ReferenceData(old_body))}).exit_code, 0);
  const std::string new_file = env.Write("new.xml", ReferenceData(new_body));
  // Two keys far apart in one process: both answers come from one release, whichever it is.
  auto both = [&env] {
    const ProcessResult r = env.Run({"lookup", "geo", "20.42.17.200", "20.99.199.3"});
    return std::to_string(r.exit_code) + ":" + r.out;
  };
  const std::string old_answer = "0:20.42.17.200\told\n20.99.199.3\told\n";
  const std::string new_answer = "0:20.42.17.200\tnew\n20.99.199.3\tnew\n";
  ASSERT_EQ(both(), old_answer);
  std::atomic<bool> done{false};
  std::vector<std::string> answers;
  std::thread reader([&] {
    // At least a few lookups after the switch too, so both sides are seen.
    int after = 0;
    while (after < 3) {
      if (done.load()) ++after;
      answers.push_back(both());
    }
  });
  const ProcessResult replaced = env.Run({"load", "--replace", new_file});
  done = true;
  reader.join();
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  size_t new_seen = 0;
  for (const std::string& answer : answers) {
    ASSERT_TRUE(answer == old_answer || answer == new_answer) << answer;
    if (answer == new_answer) ++new_seen;
  }
  EXPECT_GT(new_seen, 0u);
  EXPECT_EQ(answers.back(), new_answer);
}

}  // namespace
}  // namespace planb
