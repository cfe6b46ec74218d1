// The C API (planb/reader_c.h) from C and from Python (ctypes), against a home the real `planb load` filled with
// the example data: every answer is the one `planb lookup` gives for the same key, and errors say what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/example_home.h"
#include "planb/reader.h"

namespace planb {
namespace {

using testing::ProcessResult;
using testing::RunPlanb;
using testing::TempDir;
using ::testing::HasSubstr;

class ReaderCTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ProcessResult load = testing::WriteAndLoadExampleHome(config_, dir_ / "home");
    ASSERT_EQ(load.exit_code, 0) << load.err;
  }

  // "LABEL: 0 VALUE" with the value `planb lookup` prints for `args`.
  std::string Found(const std::string& label, std::vector<std::string> args) const {
    args.insert(args.begin(), {"--config", config_, "lookup"});
    const ProcessResult r = RunPlanb(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return label + ": 0 " + r.out.substr(0, r.out.size() - 1) + "\n";
  }
  // "LABEL: 0 session START END" in milliseconds, from the ISO times `planb lookup` prints.
  std::string Session(const std::string& label, std::vector<std::string> args) const {
    args.insert(args.begin(), {"--config", config_, "lookup"});
    const ProcessResult r = RunPlanb(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream words(r.out);
    std::string start, end;
    words >> start >> end;
    int64_t start_ms = 0, end_ms = 0;
    EXPECT_TRUE(Reader::ParseTime(start, &start_ms) && Reader::ParseTime(end, &end_ms)) << r.out;
    return label + ": 0 session " + std::to_string(start_ms) + " " + std::to_string(end_ms) + "\n";
  }

  TempDir dir_;
  const std::string config_ = dir_ / "planb.ini";
};

TEST_F(ReaderCTest, FromCEveryAnswerIsPlanbLookupsAndErrorsSayWhy) {
  testing::ProcessSpec spec;
  spec.binary = PLANB_READER_C_CHECK;
  spec.args = {config_, dir_ / "home", dir_ / "empty-home"};
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string expected = Found("text", {"country_to_capital", "Japan"}) + "miss: 1 \n" +
                         Found("number", {"employeeIdToOffice", "1555"}) +
                         Found("temporal", {"user_to_department", "alice", "--time", "2024-02-01T00:00:00Z"}) +
                         Found("temporal_ranged", {"ip_range_to_site", "167887879", "--time", "2024-01-15T00:00:00Z"}) +
                         Session("session", {"user_app_sessions", "alice_payroll", "--time", "2024-01-01T09:10:00Z"});
  EXPECT_EQ(r.out.substr(0, expected.size()), expected);
  // The epoch is asked about (alice had no department then), not taken for "now".
  const ProcessResult epoch = RunPlanb({"--config", config_, "lookup", "user_to_department", "alice", "--time",
                                        "1970-01-01T00:00:00Z"});
  EXPECT_EQ(epoch.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("\nepoch: 1 \n"));
  EXPECT_THAT(r.out, HasSubstr("\nmany: 0\n" + Found("many", {"country_to_capital", "Japan"}) + "many: 1 \n" +
                               Found("many", {"country_to_capital", "Albania"})));
  EXPECT_THAT(r.out, HasSubstr("\ndescribe: 0 number_keys 0 uses_time 1 has_value 0 has_session 1\n"));
  EXPECT_THAT(r.out, HasSubstr("\nunknown map: 2 "));
  // A home without the map's data (a pipeline given the wrong one): its own code and a message, never a miss.
  EXPECT_THAT(r.out, HasSubstr("\nno data: 9 map country_to_capital has no data on this node (home " + dir_ / "empty-home"));
  EXPECT_THAT(r.out, HasSubstr("no_such_map"));
  EXPECT_THAT(r.out, HasSubstr("\ntext key on a number map: 2 "));
  EXPECT_THAT(r.out, HasSubstr("\ndescribe unknown: 2 "));
  EXPECT_THAT(r.out, HasSubstr("\nbad time: 2\n"));
  EXPECT_THAT(r.out, HasSubstr("\nopen missing config: NULL, message cut to 15 bytes\n"));
  // Stats: every configured map, each answer above counted once (Japan twice found, Albania found, Atlantis
  // missed; the text key on a number map an error; the unknown map apart), on a single node reading its shards
  // (one load of two files: content version 1 on each map they hold).
  size_t configured = 0;
  const std::string config = testing::ReadFile(config_);
  for (size_t at = config.find("\n[map."); at != std::string::npos; at = config.find("\n[map.", at + 1)) ++configured;
  EXPECT_THAT(r.out, HasSubstr("\nstats: 0 maps " + std::to_string(configured) + " unknown map lookups 1\n"));
  EXPECT_THAT(r.out, HasSubstr("\nstats country_to_capital: lookups 4 found 3 misses 1 errors 0 serving 1 snapshot 0 "
                               "version 1 1 created 0 refreshes 0 failures 0\n"));
  EXPECT_THAT(r.out, HasSubstr("\nstats employeeidtooffice: lookups 2 found 1 misses 0 errors 1 serving 1 "));
  EXPECT_THAT(r.out, HasSubstr("\nstats city_to_country: lookups 1 found 0 misses 1 errors 0 "));
}

TEST_F(ReaderCTest, FromPythonThroughCtypes) {
#ifdef PLANB_UNDER_SANITIZER
  GTEST_SKIP() << "python3 is not instrumented: an instrumented libplanb_reader.so cannot be loaded into it "
                  "(the sanitizer runtime must come first); the C program covers the same calls";
#endif
  testing::ProcessSpec spec;
  spec.binary = "/usr/bin/python3";
  if (!std::filesystem::exists(spec.binary)) GTEST_SKIP() << "no /usr/bin/python3 here";
  spec.args = {std::string(PLANB_SOURCE_DIR) + "/tests/c_api/reader_ctypes.py", PLANB_READER_LIBRARY, config_,
               dir_ / "home"};
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, Found("text", {"country_to_capital", "Japan"}) + "miss: 1 \n" +
                       Session("session", {"user_app_sessions", "alice_payroll", "--time", "2024-01-01T09:10:00Z"}) +
                       "many: 0\n" + Found("many", {"country_to_capital", "Japan"}) + "many: 1 \n" +
                       Found("many", {"country_to_capital", "Albania"}) +
                       r.out.substr(r.out.find("unknown map: 2 ")));
  EXPECT_THAT(r.out, HasSubstr("unknown map: 2 "));
  EXPECT_THAT(r.out, HasSubstr("no_such_map"));
}

}  // namespace
}  // namespace planb
