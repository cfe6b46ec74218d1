// The planb Python module (python/planb, ctypes over the C API) against `planb lookup` on the example data: every
// store type with a lookup (state under two schemes, ranged, temporal, temporal ranged, session), at instants
// and now, misses; batched lookups; errors raised with the C API's codes; the library found through
// PLANB_LIBRARY_PATH, and a wrong one refused naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"
#include "support/example_home.h"
#include "support/reader_fixture.h"
#include "planb/reader.h"

namespace planb {
namespace {

using testing::ProcessResult;
using testing::RunPlanb;
using testing::TempDir;
using ::testing::HasSubstr;

struct Query {
  std::string map, key, time;  // key "#N": the number N (ranged maps); time "": now
};

class PythonModule : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PLANB_UNDER_SANITIZER
    GTEST_SKIP() << "python3 is not instrumented: an instrumented libplanb_reader.so cannot be loaded into it";
#endif
    if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 here";
    const ProcessResult load = testing::WriteAndLoadExampleHome(config_, dir_ / "home");
    ASSERT_EQ(load.exit_code, 0) << load.err;
  }

  // What `planb lookup` answers, in the driver's form: the value, "<miss>", or "session START_MS END_MS".
  std::string CliAnswer(const Query& q) const {
    std::vector<std::string> args{"--config", config_, "lookup", q.map, q.key[0] == '#' ? q.key.substr(1) : q.key};
    if (!q.time.empty()) args.insert(args.end(), {"--time", q.time});
    const ProcessResult r = RunPlanb(args);
    if (r.exit_code == 1) return "<miss>";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string line = r.out.substr(0, r.out.find('\n'));
    if (q.map != "user_app_sessions") return line;
    std::istringstream words(line);
    std::string start, end;
    words >> start >> end;
    int64_t start_ms = 0, end_ms = 0;
    EXPECT_TRUE(Reader::ParseTime(start, &start_ms) && Reader::ParseTime(end, &end_ms)) << line;
    return "session " + std::to_string(start_ms) + " " + std::to_string(end_ms);
  }

  ProcessResult RunDriver(const std::string& library, const std::vector<Query>& queries) const {
    testing::ProcessSpec spec;
    spec.binary = "/usr/bin/python3";
    spec.args = {std::string(PLANB_SOURCE_DIR) + "/tests/python/planb_module_check.py", PLANB_SOURCE_DIR, library,
                 config_, dir_ / "home"};
    std::string input;
    for (const Query& q : queries) input += q.map + "\t" + q.key + "\t" + q.time + "\n";
    spec.stdin_text = input;
    return testing::RunProcess(spec);
  }

  TempDir dir_;
  const std::string config_ = dir_ / "planb.ini";
};

TEST_F(PythonModule, AnswersAsPlanbLookupDoesOnEveryStoreType) {
  const std::vector<Query> queries = {
      {"country_to_capital", "Japan", ""},
      {"country_to_capital", "Atlantis", ""},
      {"country_to_capital", "Albania", ""},
      {"city_to_country", "Cardiff", ""},
      {"city_to_country", "Atlantis", ""},
      {"employeeidtooffice", "#1555", ""},
      {"employeeidtooffice", "#-1", ""},
      {"user_to_department", "alice", "2024-02-01T00:00:00Z"},
      {"user_to_department", "alice", "1970-01-01T00:00:00Z"},
      {"user_to_department", "nobody", "2024-02-01T00:00:00Z"},
      {"ip_range_to_site", "#167887879", "2024-01-15T00:00:00Z"},
      {"user_app_sessions", "alice_payroll", "2024-01-01T09:10:00Z"},
      {"user_app_sessions", "alice_payroll", "2020-01-01T00:00:00Z"},
  };
  // The library's directory, as PLANB_LIBRARY_PATH may name it.
  const std::string library_dir = std::filesystem::path(PLANB_READER_LIBRARY).parent_path();
  const ProcessResult r = RunDriver(library_dir, queries);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string expected;
  for (const Query& q : queries) expected += CliAnswer(q) + "\n";
  EXPECT_EQ(r.out.substr(0, expected.size()), expected);
  EXPECT_THAT(expected, HasSubstr("<miss>")) << "the queries include misses";
  EXPECT_THAT(r.out, HasSubstr("\nmany: ['" + CliAnswer(queries[0]) + "', '<miss>', '" + CliAnswer(queries[2]) +
                               "']\n"));
  EXPECT_THAT(r.out, HasSubstr("\ndescribe: (False, True, False, True)\n"));
  EXPECT_THAT(r.out, HasSubstr("\nunknown map: code 2 map 'no_such_map' is not in the config"));
  EXPECT_THAT(r.out, HasSubstr("\ntext key on a number map: TypeError planb: map employeeidtooffice is keyed by "
                               "numbers: give an int, not str\n"));
  EXPECT_THAT(r.out, HasSubstr("\ntime on a map without time: code 2 "));
  EXPECT_THAT(r.out, HasSubstr("\nbad time text: code 2 not an ISO-8601 time: b'yesterday'\n"));
  EXPECT_THAT(r.out, HasSubstr("\nnaive datetime: ValueError planb: a naive datetime has no instant"));
  EXPECT_THAT(r.out, HasSubstr("\nkey of another type: TypeError planb: a key of map country_to_capital must be "
                               "str or bytes, not float\n"));
  EXPECT_THAT(r.out, HasSubstr("\nstats: ['city_to_country', 'country_to_capital'] True 1\n"));
  EXPECT_THAT(r.out, HasSubstr("\nclosed: planb: the Reader is closed\n"));
  EXPECT_THAT(r.out, HasSubstr("\nopen missing config: code 2\n"));
}

// A JSON value comes back as the Python object it is; a string value stays a str.
TEST_F(PythonModule, JsonValuesAreDecodedToPythonObjects) {
  const std::string events = dir_ / "hosts.jsonl";
  testing::WriteFile(events, "{\"h\":\"web-json\",\"v\":{\"role\":\"web\",\"ports\":[80,443],\"ratio\":1.5}}\n"
                             "{\"h\":\"web-text\",\"v\":\"rack 4\"}\n");
  const ProcessResult load = RunPlanb({"--config", config_, "load", "--format", "jsonl", "--map", "host_to_location",
                                       "--key", "h", "--value", "v", events});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const std::string library_dir = std::filesystem::path(PLANB_READER_LIBRARY).parent_path();
  const ProcessResult r = RunDriver(library_dir, {{"host_to_location", "web-json", ""}, {"host_to_location", "web-text", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("\nmany:")), "{'role': 'web', 'ports': [80, 443], 'ratio': 1.5}\nrack 4");
}

// remote=True: the module's Reader asks a real `planb serve` for every lookup, over one kept-open connection.
TEST_F(PythonModule, RemoteModeAsksTheStorageNodes) {
  testing::ClusterFixture cluster(1);
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  testing::LoadAtlantis(cluster, "Poseidonia");
  const std::string config = cluster.WriteReaderConfig("python");
  testing::ProcessSpec spec;
  spec.binary = "/usr/bin/python3";
  spec.args = {"-c",
               "import os, sys\n"
               "sys.path.insert(0, os.path.join(sys.argv[1], 'python'))\n"
               "os.environ['PLANB_LIBRARY_PATH'] = sys.argv[2]\n"
               "import planb\n"
               "with planb.Reader(config=sys.argv[3], home=sys.argv[4], maintenance_interval_ms=0, remote=True,\n"
               "                  remote_connections=1) as r:\n"
               "    print(r.lookup('country_to_capital', 'Atlantis'), r.lookup('country_to_capital', 'Lemuria'))\n"
               "    print(r.lookup_many('country_to_capital', ['Lemuria', 'Atlantis']))\n"
               "    try:\n"
               "        r.lookup('user_app_sessions', 'k')\n"
               "    except planb.Error as e:\n"
               "        print('error', e.code, e.message)\n",
               PLANB_SOURCE_DIR, std::filesystem::path(PLANB_READER_LIBRARY).parent_path().string(), config,
               cluster.ReaderHome("python")};
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Poseidonia None\n[None, 'Poseidonia']\nerror 9 map 'user_app_sessions' has no data "
                               "on storage node node1"));
}

TEST_F(PythonModule, ALibraryPathThatHoldsNoLibraryIsAnErrorNamingIt) {
  const std::string wrong = dir_ / "nowhere/libplanb_reader.so";
  const ProcessResult r = RunDriver(wrong, {{"country_to_capital", "Japan", ""}});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("planb: cannot load libplanb_reader.so (set PLANB_LIBRARY_PATH to the file or its "
                               "directory); tried " + wrong));
}

}  // namespace
}  // namespace planb
