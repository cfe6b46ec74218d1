// `planb load FILE.xml...`: reference-data files in, rows per map out, merged into the shards in command-line
// order; and every kind of bad input refused with a message naming it, leaving the shards as they were.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/node_process.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::CliEnv;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ProcessResult;
using testing::ReadFile;
using testing::Ref;
using testing::ReferenceData;
using testing::ShardDataFiles;
using testing::VisibleEntries;
using testing::WriteFile;

void ExpectValue(const CliEnv& env, const std::string& map, const std::string& key, const std::string& value) {
  const ProcessResult r = env.Lookup(map, key);
  EXPECT_EQ(r.exit_code, 0) << map << " " << key.substr(0, 40) << ": " << r.err;
  EXPECT_EQ(r.out, value + "\n") << map << " " << key.substr(0, 40);
}

void ExpectAbsent(const CliEnv& env, const std::string& map, const std::string& key) {
  const ProcessResult r = env.Lookup(map, key);
  EXPECT_EQ(r.exit_code, 1) << map << " " << key << ": " << r.out;
  EXPECT_THAT(r.err, HasSubstr("no key '" + key + "'"));
  EXPECT_EQ(r.out, "");
}

// The regex of the summary line for `map` with `rows` rows.
std::string RowsLine(const std::string& map, int rows) { return "\n  " + map + " +" + std::to_string(rows) + "\n"; }

TEST(CliLoad, RoundTripsHashedAndDirectMaps) {
  CliEnv env;
  const std::string long_hashed_key(5000, 'h');
  const std::string longest_direct_key(511, 'd');
  const std::string long_value(100000, 'v');
  const std::string file =
      env.Write("cities.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                            Ref("city_to_country", "Zürich", "Schweiz") + "\n" +
                                            Ref("city_to_country", long_hashed_key, long_value) + "\n" +
                                            Ref("iptolocation", "10.0.0.1", "Berlin") + "\n" +
                                            Ref("iptolocation", longest_direct_key, "edge")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr(file + ": 5 records in 2 map(s)"));
  EXPECT_THAT(r.out, ContainsRegex(RowsLine("city_to_country", 3)));
  EXPECT_THAT(r.out, ContainsRegex(RowsLine("iptolocation", 2)));
  EXPECT_THAT(r.out, HasSubstr("merged 1 batch(es)"));

  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "city_to_country", "Zürich", "Schweiz");
  ExpectValue(env, "city_to_country", long_hashed_key, long_value);
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");
  ExpectValue(env, "iptolocation", longest_direct_key, "edge");
  EXPECT_TRUE(fs::exists(env.shard_data("city_to_country")));
  EXPECT_TRUE(fs::exists(env.shard_data("iptolocation")));
  EXPECT_FALSE(fs::exists(env.shard_data("employees"))) << "a map with no rows got a shard";
}

TEST(CliLoad, MatchesMapNamesInInputCaseInsensitively) {
  CliEnv env;
  const std::string file = env.Write("mixed.xml", ReferenceData(Ref("CITY_TO_COUNTRY", "Paris", "France") + "\n" +
                                                                Ref("IPToLocation", "10.0.0.1", "Berlin") + "\n" +
                                                                Ref("ipTOlocation", "10.0.0.2", "Oslo")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex(RowsLine("city_to_country", 1)));
  EXPECT_THAT(r.out, ContainsRegex(RowsLine("iptolocation", 2)));
  EXPECT_TRUE(fs::exists(env.shard_data("iptolocation")));
  EXPECT_FALSE(fs::exists(env.home() + "/shards/IPToLocation"));
  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");
  ExpectValue(env, "iptolocation", "10.0.0.2", "Oslo");
}

TEST(CliLoad, MatchesElementNamesCaseInsensitively) {
  CliEnv env;
  const std::string file =
      env.Write("upper.xml",
                "<REFERENCEDATA xmlns=\"reference-data:2\">\n"
                "  <REFERENCE><MAP>city_to_country</MAP><KEY>Paris</KEY><VALUE>France</VALUE></REFERENCE>\n"
                "  <Reference><Map>iptolocation</Map><Key>10.0.0.1</Key><Value>Berlin</Value></Reference>\n"
                "</REFERENCEDATA>\n");
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(file + ": 2 records in 2 map(s)"));
  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");
}

TEST(CliLoad, KeepsKeysCaseSensitive) {
  CliEnv env;
  const std::string file = env.Write(
      "case.xml",
      ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" + Ref("city_to_country", "PARIS", "Texas") + "\n" +
                    Ref("iptolocation", "host-A", "upper") + "\n" + Ref("iptolocation", "host-a", "lower")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "city_to_country", "PARIS", "Texas");
  ExpectAbsent(env, "city_to_country", "paris");
  ExpectValue(env, "iptolocation", "host-A", "upper");
  ExpectValue(env, "iptolocation", "host-a", "lower");
  ExpectAbsent(env, "iptolocation", "HOST-A");
}

// State keeps the value with the latest effective time (a file's modification time unless it says otherwise),
// whatever order the files are given or merged in: the order-free merge storage nodes converge by.
TEST(CliLoad, TheNewerFileWinsInEitherOrder) {
  CliEnv env;
  const std::string first = env.Write("first.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                                                 Ref("city_to_country", "Lyon", "France") + "\n" +
                                                                 Ref("iptolocation", "10.0.0.1", "Berlin")));
  const std::string second = env.Write("second.xml", ReferenceData(Ref("city_to_country", "Paris", "Italy") + "\n" +
                                                                   Ref("iptolocation", "10.0.0.1", "Rome") + "\n" +
                                                                   Ref("iptolocation", "10.0.0.9", "Milan")));
  std::filesystem::last_write_time(first, std::filesystem::last_write_time(second) - std::chrono::hours(1));
  ProcessResult r = env.Load({first, second});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(first + ": 3 records in 2 map(s)"));
  EXPECT_THAT(r.out, HasSubstr(second + ": 3 records in 2 map(s)"));
  EXPECT_THAT(r.out, HasSubstr("merged 2 batch(es)"));
  ExpectValue(env, "city_to_country", "Paris", "Italy");
  ExpectValue(env, "city_to_country", "Lyon", "France");
  ExpectValue(env, "iptolocation", "10.0.0.1", "Rome");
  ExpectValue(env, "iptolocation", "10.0.0.9", "Milan");

  CliEnv reversed;
  r = reversed.Load({second, first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(reversed, "city_to_country", "Paris", "Italy");
  ExpectValue(reversed, "iptolocation", "10.0.0.1", "Rome");
  ExpectValue(reversed, "iptolocation", "10.0.0.9", "Milan");
  EXPECT_EQ(testing::DumpShards(env.home()), testing::DumpShards(reversed.home()));

  // An older file loaded later does not win; given a newer effective time, it does.
  r = env.Load({first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "Italy");
  r = env.Load({"--effective-time", "2100-01-01T00:00:00Z", first});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "France");
}

TEST(CliLoad, MergesLaterLoadsOverEarlierOnes) {
  CliEnv env;
  ProcessResult r = env.Load({env.Write("one.xml", ReferenceData(Ref("city_to_country", "Paris", "France")))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = env.Load({env.Write("two.xml", ReferenceData(Ref("city_to_country", "Paris", "Italy") + "\n" +
                                                   Ref("city_to_country", "Lyon", "France")))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "Italy");
  ExpectValue(env, "city_to_country", "Lyon", "France");
}

TEST(CliLoad, KeepsTheLastRecordForAKeyWithinOneFile) {
  CliEnv env;
  const std::string file =
      env.Write("repeat.xml",
                ReferenceData(Ref("city_to_country", "Paris", "one") + "\n" + Ref("city_to_country", "Paris", "two") +
                              "\n" + Ref("iptolocation", "k", "one") + "\n" + Ref("iptolocation", "k", "two")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectValue(env, "city_to_country", "Paris", "two");
  ExpectValue(env, "iptolocation", "k", "two");
}

TEST(CliLoad, LoadingTheSameFileTwiceGivesTheSameLookups) {
  CliEnv env;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"Paris", "France"}, {"Lyon", "France"}, {"Oslo", "Norway"}, {"-5", "minus"}};
  std::string body;
  for (const auto& [key, value] : rows) body += Ref("city_to_country", key, value) + "\n";
  body += Ref("iptolocation", "10.0.0.1", "Berlin");
  const std::string file = env.Write("same.xml", ReferenceData(body));

  auto expect_all = [&] {
    for (const auto& [key, value] : rows) ExpectValue(env, "city_to_country", key, value);
    ExpectValue(env, "iptolocation", "10.0.0.1", "Berlin");
    ExpectAbsent(env, "city_to_country", "Rome");
  };
  ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_all();
  r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("same.xml: already merged as batch content:"));
  expect_all();
  r = env.Load({file, file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged 0 batch(es)"));
  EXPECT_THAT(r.out, HasSubstr("same.xml: the same batch as "));
  expect_all();
}

// --- bad input: exit 2, a message naming the input, nothing merged ---

// Loads `xml` (as bad.xml) into a fresh env and expects exit 2 with every part of `what` in the message, which
// must start with the file's path; returns stderr.
std::string ExpectLoadRefused(const std::string& xml, const std::vector<std::string>& what) {
  CliEnv env;
  const std::string file = env.Write("bad.xml", xml);
  const ProcessResult r = env.Load({file});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  for (const std::string& part : what) EXPECT_THAT(r.err, HasSubstr(part));
  EXPECT_THAT(r.err, HasSubstr(file + ":"));
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(ShardDataFiles(env.home()), IsEmpty()) << "a refused load created a shard";
  EXPECT_THAT(VisibleEntries(env.home() + "/writer"), IsEmpty());
  EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty());
  return r.err;
}

TEST(CliLoad, RefusesAnUnclosedTagNamingFileLineAndColumn) {
  // <reference> on line 2 is never closed; expat notices at the root's end tag, line 3 column 3.
  ExpectLoadRefused(
      "<referenceData xmlns=\"reference-data:2\">\n"
      "  <reference><map>city_to_country</map><key>Paris</key><value>France</value>\n"
      "</referenceData>\n",
      {"bad.xml:3:3:", "mismatched tag"});
}

TEST(CliLoad, RefusesATruncatedFileNamingFileLineAndColumn) {
  ExpectLoadRefused(
      "<referenceData xmlns=\"reference-data:2\">\n"
      "  <reference><map>city_to_country</map><key>Pa",
      {"bad.xml:2:", "no element found"});
}

TEST(CliLoad, RefusesTheWrongNamespace) {
  ExpectLoadRefused("<referenceData xmlns=\"reference-data:1\">\n" + Ref("city_to_country", "Paris", "France") +
                        "\n</referenceData>\n",
                    {"bad.xml:1:1:", "reference-data:1", "reference-data:2"});
}

TEST(CliLoad, RefusesNoNamespace) {
  ExpectLoadRefused("<referenceData>\n" + Ref("city_to_country", "Paris", "France") + "\n</referenceData>\n",
                    {"bad.xml:1:1:", "reference-data:2"});
}

TEST(CliLoad, RefusesAReferenceWithoutMap) {
  ExpectLoadRefused(ReferenceData(Ref("city_to_country", "Paris", "France") +
                                  "\n  <reference><key>Paris</key><value>France</value></reference>"),
                    {"bad.xml:3:3:", "without <map>"});
}

TEST(CliLoad, RefusesAReferenceWithoutKey) {
  ExpectLoadRefused(ReferenceData("  <reference><map>city_to_country</map><value>France</value></reference>"),
                    {"bad.xml:2:3:", "without <key"});
}

TEST(CliLoad, RefusesAReferenceWithoutValue) {
  ExpectLoadRefused(ReferenceData("  <reference><map>city_to_country</map><key>Paris</key></reference>"),
                    {"bad.xml:2:3:", "map city_to_country", "<reference> has no <value>"});
}

TEST(CliLoad, RefusesAMapNotInTheConfig) {
  ExpectLoadRefused(ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" + Ref("Atlantis", "k", "v")),
                    {"bad.xml:3:3:", "map 'atlantis' is not in the config", "city_to_country"});
}

TEST(CliLoad, RefusesADirectKeyLongerThanLmdbAllows) {
  ExpectLoadRefused(ReferenceData(Ref("iptolocation", "10.0.0.1", "Berlin") + "\n" +
                                  Ref("iptolocation", std::string(512, 'k'), "too long")),
                    {"bad.xml:3:3:", "iptolocation", "512 bytes"});
}

TEST(CliLoad, RefusesAMissingFile) {
  CliEnv env;
  const std::string missing = env.dir() + "/no-such.xml";
  const ProcessResult r = env.Load({missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_EQ(r.out, "");
}

TEST(CliLoad, RefusesAShardThatIsNotLmdb) {
  CliEnv env;
  const std::string junk = "junk, not an LMDB file\n";
  WriteFile(env.shard_data("city_to_country"), junk);
  const ProcessResult r = env.Load({env.Write("paris.xml", ReferenceData(Ref("city_to_country", "Paris", "France")))});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(env.shard_data("city_to_country")));
  EXPECT_THAT(r.err, HasSubstr("not an LMDB file"));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(ReadFile(env.shard_data("city_to_country")), junk);
}

TEST(CliLoad, NamesADirectoryAsNotARegularFile) {
  CliEnv env;
  const std::string dir = env.dir() + "/a-directory.xml";
  fs::create_directories(dir);
  const ProcessResult r = env.Load({dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(dir + ": not a regular file"));
  EXPECT_THAT(r.err, Not(HasSubstr("no such file")));
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(VisibleEntries(env.home() + "/writer"), IsEmpty());
  EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty());
}

TEST(CliLoad, NamesAMissingFileAsNoSuchFile) {
  CliEnv env;
  const std::string missing = env.dir() + "/missing.xml";
  const ProcessResult r = env.Load({missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing + ": no such file"));
  EXPECT_EQ(r.out, "");
}

TEST(CliLoad, RefusesAnEmptyShardFileAndLeavesItEmpty) {
  // LMDB would take a 0-byte data.mdb for a new environment and initialise it: a truncated shard would vanish.
  CliEnv env;
  const std::string data = env.shard_data("city_to_country");
  WriteFile(data, "");
  const ProcessResult r = env.Load({env.Write("paris.xml", ReferenceData(Ref("city_to_country", "Paris", "France")))});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(data + ": not an LMDB file (0 bytes)"));
  EXPECT_EQ(r.out, "");
  ASSERT_TRUE(fs::exists(data));
  EXPECT_EQ(fs::file_size(data), 0u);
  EXPECT_THAT(VisibleEntries(env.home() + "/writer"), IsEmpty());
  EXPECT_THAT(VisibleEntries(env.home() + "/staging"), IsEmpty());
  EXPECT_THAT(VisibleEntries(env.home() + "/merging"), IsEmpty());
}

// A merged batch is renamed "<seq>.merged" before it is deleted; a crash mid-delete leaves one, partly deleted.
TEST(CliLoad, RemovesAHalfDeletedMergedBatchAndLoads) {
  CliEnv env;
  ProcessResult r = env.Load({env.Write("one.xml", ReferenceData(Ref("city_to_country", "Paris", "France")))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string leftover = env.home() + "/merging/00000000000000000001.merged";
  WriteFile(leftover + "/city_to_country/lock.mdb", std::string(8192, '\0'));  // data.mdb already deleted
  const std::string lone = env.home() + "/merging/00000000000000000002.merged";
  WriteFile(lone + "/lock.mdb", std::string(8192, '\0'));

  r = env.Load({env.Write("two.xml", ReferenceData(Ref("city_to_country", "Lyon", "France")))});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged 1 batch(es)"));
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_FALSE(fs::exists(lone));
  EXPECT_THAT(VisibleEntries(env.home() + "/merging"), IsEmpty());
  ExpectValue(env, "city_to_country", "Paris", "France");
  ExpectValue(env, "city_to_country", "Lyon", "France");
}

// A pid that no process has: a child's, once it has been reaped.
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  EXPECT_GT(child, 0);
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  return child;
}

// Streams are named "<ms>-<pid>-<counter>" (StreamWriter::NewStreamName); a load killed mid-write leaves its
// stream in writer/, and the next load removes it, but never the stream of a process still running.
TEST(CliLoad, RemovesTheStreamsOfDeadProcessesOnly) {
  CliEnv env;
  const pid_t dead = DeadPid();
  errno = 0;
  ASSERT_EQ(::kill(dead, 0), -1);
  ASSERT_EQ(errno, ESRCH) << "pid " << dead << " was reused";
  const std::string writer = env.home() + "/writer";
  const std::string dead_stream = "1700000000000-" + std::to_string(dead) + "-0";
  const std::string live_stream = "1700000000000-" + std::to_string(::getpid()) + "-0";
  WriteFile(writer + "/" + dead_stream + "/city_to_country/data.mdb", "half written");
  WriteFile(writer + "/" + dead_stream + "/city_to_country/lock.mdb", "");
  WriteFile(writer + "/" + live_stream + "/city_to_country/data.mdb", "still being written");
  WriteFile(writer + "/notes/readme", "not a stream");

  const ProcessResult r = env.Load({env.Write("paris.xml", ReferenceData(Ref("city_to_country", "Paris", "France")))});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(VisibleEntries(writer), (std::vector<std::string>{live_stream, "notes"}));
  EXPECT_EQ(ReadFile(writer + "/" + live_stream + "/city_to_country/data.mdb"), "still being written");
  ExpectValue(env, "city_to_country", "Paris", "France");
}

// --- nothing half-written ---

// A home with both maps loaded (Paris -> France, 10.0.0.1 -> Berlin), and what a failed load must not change.
class CliLoadFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProcessResult r =
        env_.Load({env_.Write("old.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                                       Ref("iptolocation", "10.0.0.1", "Berlin")))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    shards_before_ = ShardDataFiles(env_.home());
    ASSERT_EQ(shards_before_.size(), 2u);
    // A good file that changes both maps and starts a third: none of it may show after the failed load.
    good_ = env_.Write(
        "new.xml",
        ReferenceData(Ref("city_to_country", "Paris", "Italy") + "\n" + Ref("city_to_country", "Rome", "Italy") + "\n" +
                      Ref("iptolocation", "10.0.0.1", "Rome") + "\n" + Ref("employees", "1001", "Ada")));
  }

  void ExpectNothingChanged() {
    const std::map<std::string, std::string> after = ShardDataFiles(env_.home());
    EXPECT_EQ(after.size(), shards_before_.size());
    for (const auto& [map, bytes] : shards_before_) {
      auto it = after.find(map);
      ASSERT_NE(it, after.end()) << map;
      EXPECT_TRUE(it->second == bytes) << "shards/" << map << "/data.mdb changed";
    }
    EXPECT_FALSE(fs::exists(env_.home() + "/shards/employees")) << "a failed load started a new shard";
    EXPECT_THAT(VisibleEntries(env_.home() + "/staging"), IsEmpty());
    EXPECT_THAT(VisibleEntries(env_.home() + "/merging"), IsEmpty());
    // writer/ is checked in FailedLoadLeavesNoStreamInWriter, so that one leak does not fail every test here.
    ExpectValue(env_, "city_to_country", "Paris", "France");
    ExpectAbsent(env_, "city_to_country", "Rome");
    ExpectValue(env_, "iptolocation", "10.0.0.1", "Berlin");
  }

  CliEnv env_;
  std::map<std::string, std::string> shards_before_;
  std::string good_;
};

TEST_F(CliLoadFailure, MalformedSecondFileLeavesEveryShardAsItWas) {
  const std::string bad =
      env_.Write("bad.xml", "<referenceData xmlns=\"reference-data:2\">\n" + Ref("city_to_country", "Lyon", "France") +
                                "\n  <reference><map>city_to_country</map><key>Nice</key><value>France</value>\n"
                                "</referenceData>\n");
  const ProcessResult r = env_.Load({good_, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ":4:3:"));
  EXPECT_THAT(r.err, HasSubstr("mismatched tag"));
  EXPECT_EQ(r.out, "");
  ExpectNothingChanged();
  ExpectAbsent(env_, "city_to_country", "Lyon");
}

TEST_F(CliLoadFailure, UnknownMapInSecondFileLeavesEveryShardAsItWas) {
  const std::string bad =
      env_.Write("bad.xml", ReferenceData(Ref("city_to_country", "Lyon", "France") + "\n" + Ref("atlantis", "k", "v")));
  const ProcessResult r = env_.Load({good_, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ":3:3:"));
  EXPECT_THAT(r.err, HasSubstr("map 'atlantis' is not in the config"));
  EXPECT_EQ(r.out, "");
  ExpectNothingChanged();
  ExpectAbsent(env_, "city_to_country", "Lyon");
}

TEST_F(CliLoadFailure, TooLongDirectKeyInSecondFileLeavesEveryShardAsItWas) {
  const std::string bad = env_.Write("bad.xml", ReferenceData(Ref("iptolocation", std::string(600, 'k'), "v")));
  const ProcessResult r = env_.Load({good_, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ":2:3:"));
  EXPECT_THAT(r.err, HasSubstr("600 bytes"));
  EXPECT_EQ(r.out, "");
  ExpectNothingChanged();
}

TEST_F(CliLoadFailure, MissingSecondFileLeavesEveryShardAsItWas) {
  const std::string missing = env_.dir() + "/no-such.xml";
  const ProcessResult r = env_.Load({good_, missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_EQ(r.out, "");
  ExpectNothingChanged();
}

// Each file's stream is written to writer/ before any is staged; when a later file fails, the earlier
// (complete) streams must be discarded too, not left in writer/.
TEST_F(CliLoadFailure, FailedLoadLeavesNoStreamInWriter) {
  const std::string bad = env_.Write("bad.xml", ReferenceData(Ref("atlantis", "k", "v")));
  const ProcessResult r = env_.Load({good_, good_, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ":2:3:"));
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(VisibleEntries(env_.home() + "/writer"), IsEmpty());
  ExpectNothingChanged();
}

// The contract: "a file in shards/ that is not LMDB ... nothing half-written: a failed load leaves every shard's
// data file byte-for-byte as it was". A batch touching a good shard and a corrupt one must not merge into either.
TEST_F(CliLoadFailure, CorruptShardLeavesTheOtherShardsAsTheyWere) {
  const std::string junk = "junk, not an LMDB file\n";
  WriteFile(env_.shard_data("iptolocation"), junk);
  shards_before_["iptolocation"] = junk;
  const ProcessResult r = env_.Load({good_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(env_.shard_data("iptolocation")));
  EXPECT_THAT(r.err, HasSubstr("not an LMDB file"));
  EXPECT_EQ(r.out, "");
  const std::map<std::string, std::string> after = ShardDataFiles(env_.home());
  for (const auto& [map, bytes] : shards_before_) {
    auto it = after.find(map);
    ASSERT_NE(it, after.end()) << map;
    EXPECT_TRUE(it->second == bytes) << "shards/" << map << "/data.mdb changed by a failed load";
  }
  EXPECT_FALSE(fs::exists(env_.home() + "/shards/employees")) << "a failed load started a new shard";
  ExpectValue(env_, "city_to_country", "Paris", "France");
  ExpectAbsent(env_, "city_to_country", "Rome");
}

}  // namespace
}  // namespace planb
