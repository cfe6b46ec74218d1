// `planb delete MAP --where EXPR | --all [--dry-run]` on a single node through the real binary: rows go, others
// stay; --dry-run prints what query prints and changes nothing; bad input stages nothing; a deletion batch merged
// again (after later batches) changes nothing; kill -9 inside its merge leaves the old or the new shard.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::CliEnv;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;
using testing::SortedCsvColumn;
using Strings = std::vector<std::string>;

// PLANB_FAULT for the children started while it lives.
class FaultGuard {
 public:
  explicit FaultGuard(const char* point) { ::setenv("PLANB_FAULT", point, 1); }
  ~FaultGuard() { ::unsetenv("PLANB_FAULT"); }
};

Strings StagedZips(const CliEnv& env) {
  Strings zips;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(env.home() + "/staging", ec)) {
    if (entry.path().extension() == ".zip") zips.push_back(entry.path().string());
  }
  return zips;
}

class DeleteCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProcessResult r = env_.Load({env_.Write(
        "cities.xml",
        ReferenceData(Ref("city_to_country", "Lyon", "France") + "\n" + Ref("city_to_country", "Paris", "France") +
                      "\n" + Ref("city_to_country", "Berlin", "Germany") + "\n" +
                      Ref("city_to_country", "Rome", "Italy") + "\n" + Ref("iptolocation", "10.0.0.1", "lab") + "\n" +
                      Ref("iptolocation", "10.0.0.2", "office")))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  Strings Keys(const std::string& map) {
    const ProcessResult r = env_.Run({"query", map, "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return SortedCsvColumn(r.out, "Key");
  }
  ProcessResult Delete(const Strings& options) {
    Strings args{"delete"};
    args.insert(args.end(), options.begin(), options.end());
    return env_.Run(args);
  }
  CliEnv env_;
};

TEST_F(DeleteCommandTest, DeletesTheMatchingRowsAndKeepsTheOthers) {
  const ProcessResult r = Delete({"city_to_country", "--where", "Value = 'France' or Key = 'Nowhere'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("of city_to_country staged on 1 node and merged: 2 rows deleted"));
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Rome"}));
  EXPECT_EQ(env_.Lookup("city_to_country", "Lyon").exit_code, 1);
  const ProcessResult berlin = env_.Lookup("city_to_country", "Berlin");
  EXPECT_EQ(berlin.exit_code, 0);
  EXPECT_EQ(berlin.out, "Germany\n");
  EXPECT_EQ(Keys("iptolocation"), (Strings{"10.0.0.1", "10.0.0.2"}));  // another map: untouched
  EXPECT_TRUE(StagedZips(env_).empty());
}

TEST_F(DeleteCommandTest, ANarrowedDeletionByKeyTakesOnlyThatKey) {
  // Key = narrows the scan to the key's LMDB range (map_scan.h); on the direct scheme so does startsWith.
  ASSERT_EQ(Delete({"city_to_country", "--where", "Key = 'Rome'"}).exit_code, 0);
  ASSERT_EQ(Delete({"iptolocation", "--where", "Key startsWith '10.0.0.2'"}).exit_code, 0);
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Lyon", "Paris"}));
  EXPECT_EQ(Keys("iptolocation"), (Strings{"10.0.0.1"}));
}

TEST_F(DeleteCommandTest, AllDeletesEveryRowOfTheMapOnly) {
  const ProcessResult r = Delete({"iptolocation", "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 rows deleted"));
  EXPECT_EQ(Keys("iptolocation"), Strings{});
  EXPECT_EQ(Keys("city_to_country").size(), 4u);
  // Loading after a deletion adds rows as before.
  ASSERT_EQ(env_.Load({env_.Write("ip.xml", ReferenceData(Ref("iptolocation", "10.0.0.9", "lab")))}).exit_code, 0);
  EXPECT_EQ(Keys("iptolocation"), Strings{"10.0.0.9"});
}

// The deletion is remembered even where the map has no rows yet: a load older than it that merges later is
// shadowed here as on a node that had the rows (tombstones), and one newer than it is kept.
TEST_F(DeleteCommandTest, ADeletionOfAMapWithoutAShardMakesOneThatRemembersIt) {
  const ProcessResult r = Delete({"employees", "--all", "--effective-time", "2024-06-01T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 rows deleted"));
  EXPECT_TRUE(fs::exists(env_.home() + "/shards/employees/data.mdb"));
  EXPECT_EQ(Keys("employees"), Strings{});
  const ProcessResult old_load = env_.Run({"load", env_.Write("old.xml", ReferenceData(Ref("employees", "ann", "clerk"))),
                                           "--effective-time", "2024-05-01T00:00:00Z"});
  ASSERT_EQ(old_load.exit_code, 0) << old_load.err;
  EXPECT_THAT(old_load.err, HasSubstr("planb note: 1 row(s) of map employees are older than a deletion"));
  EXPECT_EQ(Keys("employees"), Strings{});
  const ProcessResult new_load = env_.Run({"load", env_.Write("new.xml", ReferenceData(Ref("employees", "bob", "boss"))),
                                           "--effective-time", "2024-07-01T00:00:00Z"});
  ASSERT_EQ(new_load.exit_code, 0) << new_load.err;
  EXPECT_THAT(new_load.err, Not(HasSubstr("planb note")));
  EXPECT_EQ(Keys("employees"), Strings{"bob"});
}

TEST_F(DeleteCommandTest, DryRunPrintsWhatQueryPrintsAndChangesNothing) {
  const std::string before = testing::ReadFile(env_.shard_data("city_to_country"));
  for (const std::string format : {"table", "csv", "json"}) {
    SCOPED_TRACE(format);
    const ProcessResult dry =
        Delete({"city_to_country", "--where", "Value = 'France'", "--dry-run", "--format", format});
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    const ProcessResult query =
        env_.Run({"query", "city_to_country", "--where", "Value = 'France'", "--format", format});
    EXPECT_EQ(dry.out, query.out);
    EXPECT_EQ(dry.err, "would delete 2 rows of city_to_country\n");
  }
  const ProcessResult all = Delete({"iptolocation", "--all", "--dry-run"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("10.0.0.2"));
  EXPECT_EQ(all.err, "would delete 2 rows of iptolocation\n");
  EXPECT_EQ(testing::ReadFile(env_.shard_data("city_to_country")), before);
  EXPECT_TRUE(StagedZips(env_).empty());
  EXPECT_EQ(Keys("city_to_country").size(), 4u);
  EXPECT_EQ(Keys("iptolocation").size(), 2u);
}

TEST_F(DeleteCommandTest, BadInputExitsTwoAndStagesNothing) {
  const std::string before = testing::ReadFile(env_.shard_data("city_to_country"));
  struct Case {
    Strings args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"no_such_map", "--all"}, "unknown map: map 'no_such_map' is not in the config"},
      {{"city_to_country", "--where", "Kye = 'a'"}, "--where: column 1: unknown field 'Kye'"},
      {{"city_to_country", "--where", "Key = "}, "--where: column"},
      {{"city_to_country", "--where", "   "}, "an empty expression"},
      {{"city_to_country", "--where", "Key = '" + std::string(70000, 'x') + "'"},
       "--where: 70008 bytes, more than a deletion holds (65510)"},
      {{"city_to_country"}, "give exactly one of --where EXPR and --all"},
      {{"city_to_country", "--all", "--effective-time", "yesterday"},
       "--effective-time: 'yesterday' is not an ISO-8601 time"},
      {{"city_to_country", "--all", "--effective-time", ""}, "--effective-time: '' is not an ISO-8601 time"},
      {{"city_to_country", "--all", "--where", "Key = 'a'"}, "give exactly one of --where EXPR and --all"},
      {{"city_to_country", "--all", "--format", "csv"}, "--format applies to --dry-run only"},
      {{"city_to_country", "--all", "--remote"}, "--remote applies to --dry-run only"},
      {{"city_to_country", "--all", "--dry-run", "--format", "xml"}, "--format: 'xml' is not one of"},
      {{"city_to_country", "--all", "--dry-run", "--remote"}, "--remote needs a node_list"},
      {{"city_to_country", "--all", "--limit", "3"}, "option --limit does not apply to 'delete'"},
      {{"city_to_country", "extra", "--all"}, "'delete' takes MAP, got 2 argument(s)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const ProcessResult r = Delete(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
  EXPECT_EQ(testing::ReadFile(env_.shard_data("city_to_country")), before);
  EXPECT_TRUE(StagedZips(env_).empty());
  EXPECT_EQ(Keys("city_to_country").size(), 4u);
}

// The deletion batch staged again after later batches merged (a second delivery): its id is recorded in the
// shard, so it takes nothing, not even the rows loaded after it.
TEST_F(DeleteCommandTest, MergingADeletionBatchAgainChangesNothing) {
  std::string zip;
  {
    FaultGuard fault("merge.after_commit");  // every map committed, the zip still staged
    EXPECT_EQ(Delete({"city_to_country", "--where", "Key = 'Lyon'"}).exit_code, -1);
  }
  const Strings staged = StagedZips(env_);
  ASSERT_EQ(staged.size(), 1u);
  const std::string bytes = testing::ReadFile(staged[0]);
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Paris", "Rome"}));  // committed
  // The next run merges it again (nothing changes), then this load's Lyon.
  ASSERT_EQ(env_.Load({env_.Write("lyon.xml", ReferenceData(Ref("city_to_country", "Lyon", "France")))}).exit_code, 0);
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Lyon", "Paris", "Rome"}));
  testing::WriteFile(env_.home() + "/staging/00000000000000009999.zip", bytes);
  const ProcessResult r = Delete({"employees", "--all"});  // merges whatever is staged first
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StagedZips(env_).empty());
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Lyon", "Paris", "Rome"}));
}

TEST_F(DeleteCommandTest, KilledBeforeItsCommitTheShardIsOldAndTheNextRunFinishes) {
  const std::string before = testing::ReadFile(env_.shard_data("city_to_country"));
  {
    FaultGuard fault("merge.before_commit");
    EXPECT_EQ(Delete({"city_to_country", "--where", "Value = 'France'"}).exit_code, -1);
  }
  EXPECT_EQ(Keys("city_to_country").size(), 4u);  // the old shard, whole
  EXPECT_EQ(StagedZips(env_).size(), 1u);
  const ProcessResult r = Delete({"employees", "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Keys("city_to_country"), (Strings{"Berlin", "Rome"}));
  EXPECT_TRUE(StagedZips(env_).empty());
}

}  // namespace
}  // namespace planb
