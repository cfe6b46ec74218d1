// `planb conform` through the real binary: every built-in store type passes with its small expected CSV
// (tests/host/kit/data/<type>/), each check fails on the fixture plugin built to break it
// (tests/fixtures/kit_store.cc), and every bad input is refused with exit status 2.
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_env.h"

namespace planb::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

const std::string kData = std::string(PLANB_SOURCE_DIR) + "/tests/host/kit/data/";
const std::string kKitPlugins = std::string(PLANB_FIXTURE_DIR) + "/kit";

std::vector<std::string> ConformArgs(const std::string& type, const std::string& data_dir, const std::string& expect) {
  return {"conform", "--type", type, "--data", data_dir + "/first.xml", data_dir + "/second.xml", "--expect", expect};
}

// The fixture store types, on the state data (same records, same fields) under the direct scheme, whose order is
// the keys' byte order.
ProcessResult RunKit(const std::string& type, const std::string& expect, const std::string& scratch) {
  std::vector<std::string> args = ConformArgs(type, kData + "state", expect);
  args.insert(args.end(), {"--scheme", "direct", "--plugin-dir", kKitPlugins, "--scratch", scratch});
  return RunPlanb(args);
}

std::string DirectExpected(const TempDir& dir) {
  const std::string path = dir / "direct.csv";
  WriteFile(
      path,
      "Key,ValueType,Value\nalpha,string,1\nbeta,string,3\ndelta,string,<x/>\ngamma,string,\"4, with a comma\"\n");
  return path;
}

bool Empty(const std::string& dir) { return fs::is_empty(dir); }

TEST(Conform, EveryBuiltInTypePassesEveryCheck) {
  for (const char* type : {"state", "temporal", "ranged", "temporal_ranged", "session"}) {
    SCOPED_TRACE(type);
    const std::string dir = kData + type;
    ProcessResult r = RunPlanb(ConformArgs(type, dir, dir + "/expected.csv"));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("TAP version 14\n1..5\n"));
    EXPECT_THAT(r.out, HasSubstr("ok 1 - merge\nok 2 - scan_ranges\nok 3 - decode_row\nok 4 - warm_lookups\n"));
    EXPECT_THAT(r.out, Not(HasSubstr("not ok")));
  }
}

TEST(Conform, StateUnderEveryKeySchemeAndValueDedupPassesEveryCheck) {
  // hashed orders rows by hash (expected.csv); the other schemes by key (expected-key-order.csv).
  for (const char* scheme : {"direct", "hashed", "hybrid", "lookup_table", "variable"}) {
    for (const char* dedup : {"false", "true"}) {
      SCOPED_TRACE(std::string(scheme) + " value_dedup=" + dedup);
      const std::string dir = kData + "state";
      std::vector<std::string> args = ConformArgs(
          "state", dir, dir + (std::string(scheme) == "hashed" ? "/expected.csv" : "/expected-key-order.csv"));
      args.insert(args.end(), {"--scheme", scheme, "--option", std::string("value_dedup=") + dedup});
      ProcessResult r = RunPlanb(args);
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("# 5 of 5 checks passed"));
    }
  }
}

TEST(Conform, FixtureWithoutBugsPassesAndLeavesNoScratch) {
  TempDir dir;
  const std::string scratch = dir / "scratch";
  fs::create_directory(scratch);
  ProcessResult r = RunKit("kit_ok", DirectExpected(dir), scratch);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# 5 of 5 checks passed"));
  EXPECT_TRUE(Empty(scratch));
}

TEST(Conform, ScanRangeThatNarrowsTooMuchFailsScanRanges) {
  TempDir dir;
  ProcessResult r = RunKit("kit_narrow_scan", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok 1 - merge\nnot ok 2 - scan_ranges\n"));
  EXPECT_THAT(r.out, HasSubstr("# scan with Key = alpha returned 0 row(s); a full scan filtered the same way "
                               "returns 1, first missing: alpha,string,1\n"));
  EXPECT_THAT(r.out, HasSubstr("ScanRange for Key = beta says no row can match"));  // decode_row's range check
  EXPECT_THAT(r.out, HasSubstr("ok 4 - warm_lookups"));
}

TEST(Conform, AllocationPerGetFailsWarmLookups) {
  TempDir dir;
  ProcessResult r = RunKit("kit_alloc_get", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok 1 - merge\nok 2 - scan_ranges\nok 3 - decode_row\nnot ok 4 - warm_lookups\n"));
  // Four keys: four hits and four misses, one allocation each.
  EXPECT_THAT(r.out, HasSubstr("# 8 heap allocation(s) in 8 warm lookups; the first: 1 in the hit of key alpha\n"));
}

TEST(Conform, MergesThatDoNotCommuteFailMergeOrder) {
  TempDir dir;
  ProcessResult r = RunKit("kit_last_merged_wins", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok 1 - merge\nok 2 - scan_ranges\nok 3 - decode_row\nok 4 - warm_lookups\n"
                               "not ok 5 - merge_order\n"));
  EXPECT_THAT(r.out, HasSubstr("rows after the second file then the first (merges must commute)"));
  EXPECT_THAT(r.out, HasSubstr("beta"));
}

TEST(Conform, DecodeRowThatDisagreesFailsDecodeRow) {
  TempDir dir;
  ProcessResult r = RunKit("kit_decode_disagrees", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not ok 3 - decode_row\n"));
  EXPECT_THAT(r.out, HasSubstr("ALPHA,string,1: a lookup of its key at its instant finds nothing"));
  EXPECT_THAT(r.out, HasSubstr("ALPHA,string,1: ScanRange for Key = ALPHA gives a range without it"));
  EXPECT_THAT(r.out, HasSubstr("not ok 1 - merge\n# rows after both files: line 2: expected alpha,string,1, got "
                               "ALPHA,string,1"));
}

TEST(Conform, RowsThatDifferFromTheModelFailMerge) {
  TempDir dir;
  const std::string expect = dir / "wrong.csv";
  WriteFile(expect, "Key,ValueType,Value\nalpha,string,1\nbeta,string,2\ndelta,string,<x/>\n");
  ProcessResult r = RunKit("kit_ok", expect, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not ok 1 - merge\n# rows after both files: 4 row(s), expected 3\n"));
  EXPECT_THAT(r.out, HasSubstr("# rows after both files: line 3: expected beta,string,2, got beta,string,3\n"));
  EXPECT_THAT(r.out, HasSubstr("line 5: expected (none), got gamma,string,\"4, with a comma\""));
  EXPECT_THAT(r.out, HasSubstr("ok 2 - scan_ranges"));
}

TEST(Conform, RowsInAnotherOrderAreNamedAsSuch) {
  TempDir dir;
  const std::string expect = dir / "sorted.csv";
  // The hashed scheme (state's default) orders rows by hash, not as written here.
  WriteFile(expect,
            "Key,ValueType,Value\r\nalpha,string,1\r\nbeta,string,3\r\ndelta,string,<x/>\r\n"
            "gamma,string,\"4, with a comma\"\r\n");
  ProcessResult r = RunPlanb(ConformArgs("state", kData + "state", expect));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# rows after both files: the expected rows, in another order"));
}

// --unordered: one expected file for every scheme; still a set compare, so a wrong row fails.
TEST(Conform, UnorderedComparesTheRowsAsASet) {
  TempDir dir;
  const std::string expect = dir / "sorted.csv";
  WriteFile(expect,
            "Key,ValueType,Value\nalpha,string,1\nbeta,string,3\ndelta,string,<x/>\n"
            "gamma,string,\"4, with a comma\"\n");
  for (const char* scheme : {"hashed", "direct", "lookup_table"}) {
    SCOPED_TRACE(scheme);
    std::vector<std::string> args = ConformArgs("state", kData + "state", expect);
    args.insert(args.end(), {"--scheme", scheme, "--unordered"});
    ProcessResult r = RunPlanb(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("# 5 of 5 checks passed"));
  }
  const std::string wrong = dir / "wrong.csv";
  WriteFile(wrong,
            "Key,ValueType,Value\nalpha,string,1\nbeta,string,2\ndelta,string,<x/>\n"
            "gamma,string,\"4, with a comma\"\n");
  std::vector<std::string> args = ConformArgs("state", kData + "state", wrong);
  args.push_back("--unordered");
  ProcessResult r = RunPlanb(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not ok 1 - merge\n# rows after both files (as a set: --unordered): line 3: expected "
                               "beta,string,2, got beta,string,3\n"));
}

TEST(Conform, AMissingScratchDirectoryIsMadeWithItsParents) {
  TempDir dir;
  const std::string scratch = dir / "not/there/yet";
  ProcessResult r = RunKit("kit_ok", DirectExpected(dir), scratch);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# 5 of 5 checks passed"));
  ASSERT_TRUE(fs::is_directory(scratch));
  EXPECT_TRUE(Empty(scratch));  // the scratch home inside it is gone
}

// Each check runs in a child: a plugin that dies of a signal in Merge fails the checks it reaches, conform says
// so in TAP with what the child said and finishes its stream, and its scratch directory is removed.
TEST(Conform, APluginThatCrashesInMergeIsANotOkLineAndConformFinishes) {
  TempDir dir;
  const std::string scratch = dir / "scratch";
  ProcessResult r = RunKit("kit_crash_in_merge", DirectExpected(dir), scratch);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // planb reports the fatal signal itself (crash_report.h) and exits 2; the report is in the child's output.
  EXPECT_THAT(r.out, HasSubstr("TAP version 14\n1..5\nnot ok 1 - merge\n# the check's process exited with status 2 "
                               "before its verdict"));
  EXPECT_THAT(r.out, HasSubstr("#   planb: fatal signal 4 (Illegal instruction) while merging map 'sample' (store "
                               "type 'kit_crash_in_merge' ("));
  EXPECT_THAT(r.out, HasSubstr("not ok 5 - merge_order\n"));  // its second home merges too
  EXPECT_THAT(r.out, HasSubstr("checks passed\n"));
  EXPECT_TRUE(Empty(scratch));
}

// A throw from DecodeRow fails the checks that decode rows with the plugin's whole message (past the 200 bytes a
// log line is cut at), and the other checks still run.
TEST(Conform, AThrowInDecodeRowFailsWithTheWholeMessageAndTheOtherChecksRun) {
  TempDir dir;
  ProcessResult r = RunKit("kit_throw_in_decode", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("TAP version 14\n1..5\nnot ok 1 - merge\n"));
  const std::string message = "Store::DecodeRow threw: kit DecodeRow refuses: " + std::string(400, 'x') + " END";
  EXPECT_THAT(r.out, HasSubstr("store type 'kit_throw_in_decode' ("));
  EXPECT_THAT(r.out, HasSubstr(message));
  EXPECT_THAT(r.out, HasSubstr("not ok 3 - decode_row\n"));
  for (const char* line : {" 2 - scan_ranges\n", " 4 - warm_lookups\n", " 5 - merge_order\n"}) {
    EXPECT_THAT(r.out, HasSubstr(line));
  }
  EXPECT_THAT(r.out, HasSubstr("checks passed\n"));
  EXPECT_EQ(r.err, "");
}

// An error the plugin returns names the plugin, its file and the call, as a throw does.
TEST(Conform, AnErrorReturnedByMergeNamesThePluginAndTheCall) {
  TempDir dir;
  ProcessResult r = RunKit("kit_merge_error", DirectExpected(dir), dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not ok 1 - merge\n# loading "));
  EXPECT_THAT(r.out, HasSubstr("store type 'kit_merge_error' (" + kKitPlugins + "/libplanb_kit_merge_error.so): "
                               "Store::Merge: kit merge refuses every batch"));
}

TEST(Conform, ExpectedFileWithWindowsLineEndsIsRead) {
  TempDir dir;
  std::string text = ReadFile(kData + "state/expected.csv");
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const std::string expect = dir / "crlf.csv";
  WriteFile(expect, crlf);
  ProcessResult r = RunPlanb(ConformArgs("state", kData + "state", expect));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

void ExpectRefused(const std::vector<std::string>& args, const std::vector<std::string>& said) {
  ProcessResult r = RunPlanb(args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("ok ")));
  for (const std::string& s : said) EXPECT_THAT(r.err, HasSubstr(s));
}

TEST(Conform, BadInputIsRefused) {
  TempDir dir;
  const std::string state = kData + "state";
  const std::string first = state + "/first.xml";
  const std::string second = state + "/second.xml";
  const std::string expect = state + "/expected.csv";
  ExpectRefused({"conform", "--data", first, second, "--expect", expect}, {"--type TYPE is required"});
  std::vector<std::string> with_config = ConformArgs("state", state, expect);
  with_config.insert(with_config.begin(), {"--config", dir / "planb.ini"});
  ExpectRefused(with_config, {"--config does not apply to conform"});
  std::vector<std::string> with_home = ConformArgs("state", state, expect);
  with_home.insert(with_home.end(), {"--home", dir / "home"});
  ExpectRefused(with_home, {"--home does not apply to conform"});
  ExpectRefused({"conform", "--type", "state", "--data", first, "--expect", expect},
                {"--data takes two files", "got 1"});
  ExpectRefused({"conform", "--type", "state", "--data", first, second, first, "--expect", expect}, {"got 3"});
  ExpectRefused({"conform", "--type", "state", "--data", first, second}, {"--expect ROWS.csv is required"});
  ExpectRefused(ConformArgs("nosuch", state, expect), {"nosuch"});
  ExpectRefused(ConformArgs("state/../x", state, expect), {"--type", "not a plugin name"});
  std::vector<std::string> args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--scheme", "nosuch_scheme"});
  ExpectRefused(args, {"nosuch_scheme"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--option", "value_dedup"});
  ExpectRefused(args, {"--option value_dedup: not NAME=VALUE"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--option", "no such=1"});
  ExpectRefused(args, {"the name may hold only letters, digits and '_'"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--option", "=1"});
  ExpectRefused(args, {"an empty name"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--option", "no_such_option=1"});
  ExpectRefused(args, {"no_such_option"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--plugin-dir", dir / "missing"});
  ExpectRefused(args, {"--plugin-dir", "not a directory"});
  args = ConformArgs("state", state, expect);
  args.insert(args.end(), {"--map", "Bad Name!"});
  ExpectRefused(args, {"--map", "not a map name"});
  ExpectRefused({"conform", "--type", "state", "--data", dir / "none.xml", second, "--expect", expect},
                {"none.xml", "not a readable file"});
  ExpectRefused({"conform", "--type", "state", "--data", first, second, "--expect", dir / "none.csv"},
                {"none.csv", "not a readable file"});
  const std::string empty = dir / "empty.csv";
  WriteFile(empty, "");
  ExpectRefused({"conform", "--type", "state", "--data", first, second, "--expect", empty},
                {"empty (the CSV header is missing)"});
}

TEST(Conform, DataOfAnotherMapFailsTheMergeCheckNamingTheMap) {
  std::vector<std::string> args = ConformArgs("state", kData + "state", kData + "state/expected.csv");
  args.insert(args.end(), {"--map", "other"});
  ProcessResult r = RunPlanb(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("first.xml:2:3: map 'sample' is not in the config (configured maps: other)"));
  EXPECT_THAT(r.out, HasSubstr("not ok 2 - scan_ranges\n# no shard: nothing was merged (see the merge check)"));
}

TEST(Conform, BrokenDataFailsTheMergeCheckNamingTheFile) {
  TempDir dir;
  const std::string broken = dir / "broken.xml";
  WriteFile(broken, "<referenceData xmlns=\"reference-data:2\">\n  <reference><map>conform</map>\n");
  ProcessResult r = RunPlanb({"conform", "--type", "state", "--data", kData + "state/first.xml", broken, "--expect",
                              kData + "state/expected.csv"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not ok 1 - merge\n# loading "));
  EXPECT_THAT(r.out, HasSubstr("broken.xml"));
}

TEST(Conform, FirstFileWithoutRecordsFailsTheMergeCheck) {
  TempDir dir;
  const std::string none = dir / "none.xml";
  WriteFile(none, "<referenceData xmlns=\"reference-data:2\">\n</referenceData>\n");
  ProcessResult r = RunPlanb({"conform", "--type", "state", "--data", none, kData + "state/second.xml", "--expect",
                              kData + "state/expected.csv"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("none.xml holds no record of map 'sample' (name it in each <map>, or pass --map)"));
}

}  // namespace
}  // namespace planb::testing
