// Fields of a store type's own (SDK 7.1 RowField::kOwn) end to end through the real planb and the "scores" test
// fixture (tests/fixtures/own_fields.cc): load, lookup (shown fields), query --where on every kind and its three
// output formats, and a malformed value refused at load.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::ReferenceData;
using testing::Ref;

std::string ScoresConfig() {
  return std::string("plugin_dir = ") + PLANB_FIXTURE_DIR +
         "/own_fields\n[map.scores]\ntype = scores\nscheme = hashed\n[map.plain]\ntype = state\n";
}

class OwnFieldsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string body =
        Ref("scores", "a", "count=3;ratio=0.25;active=true;seen=2024-01-01T00:00:00Z;note=first") + "\n" +
        Ref("scores", "b", "count=-7;ratio=11498.189;active=false;seen=2023-06-30T12:00:00.500Z;note=se,\"c\"") +
        "\n" + Ref("scores", "c", "count=9223372036854775807;ratio=-1.5e3") + "\n" + Ref("scores", "d", "");
    const ProcessResult load = env_.Load({env_.Write("s.xml", ReferenceData(body))});
    ASSERT_EQ(load.exit_code, 0) << load.err;
  }
  ProcessResult Run(const std::vector<std::string>& args) const { return env_.Run(args); }
  CliEnv env_{ScoresConfig()};
};

TEST_F(OwnFieldsCli, LookupPrintsTheShownFields) {
  ProcessResult r = Run({"lookup", "scores", "a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "count=3 ratio=0.25\n");
  r = Run({"lookup", "scores", "b"});
  EXPECT_EQ(r.out, "count=-7 ratio=11498.189\n");  // shortest round-trip form, never 11498.2
  r = Run({"lookup", "scores", "a", "c", "zz", "d"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "a\tcount=3 ratio=0.25\nc\tcount=9223372036854775807 ratio=-1500\nd\tcount=0 ratio=0\n");
  EXPECT_EQ(r.err, "planb: scores: no key 'zz'\n");
}

TEST_F(OwnFieldsCli, AMissPrintsNothingWhenSomeShownFieldIsNotZeroWhenAbsent) {
  // Ratio is shown but not kFieldZeroWhenAbsent: a miss prints nothing (text), exit 1 as for any miss.
  const ProcessResult r = Run({"lookup", "scores", "zz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
}

TEST_F(OwnFieldsCli, LookupJsonAndCsv) {
  ProcessResult r = Run({"lookup", "scores", "b", "zz", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "[\n {\"key\":\"b\",\"count\":-7,\"ratio\":11498.189,\"found\":true},\n"
            " {\"key\":\"zz\",\"count\":0,\"ratio\":null,\"found\":false}\n]\n");
  r = Run({"lookup", "scores", "a", "zz", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "key,count,ratio,found\na,3,0.25,true\nzz,0,,false\n");
}

TEST_F(OwnFieldsCli, ATypeWithoutShownFieldsPrintsItsValueAsBefore) {
  ASSERT_EQ(env_.Load({env_.Write("p.xml", ReferenceData(Ref("plain", "k", "v")))}).exit_code, 0);
  EXPECT_EQ(Run({"lookup", "plain", "k"}).out, "v\n");
  EXPECT_EQ(Run({"lookup", "plain", "k", "--format", "csv"}).out, "key,value,found\nk,v,true\n");
}

TEST_F(OwnFieldsCli, QueryWhereOnEveryKind) {
  const auto keys = [&](const std::string& where) {
    const ProcessResult r = Run({"query", "scores", "--where", where, "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << where << ": " << r.err;
    std::string out;
    size_t line_start = r.out.find('\n') + 1;  // after the header
    while (line_start < r.out.size()) {
      out += r.out.substr(line_start, r.out.find(',', line_start) - line_start) + " ";
      line_start = r.out.find('\n', line_start) + 1;
    }
    return out;
  };
  // Hashed keys come in hash order: single answers and sums keep the checks independent of it.
  EXPECT_EQ(keys("Count > 3"), "c ");
  EXPECT_EQ(keys("Count < 0"), "b ");
  EXPECT_EQ(keys("Ratio > 0.5 and Ratio < 11498.19"), "b ");
  EXPECT_EQ(keys("Ratio = 11498.189"), "b ");
  EXPECT_EQ(keys("Ratio <= -1.5e3"), "c ");
  EXPECT_EQ(keys("Active = true"), "a ");
  EXPECT_EQ(keys("Seen >= '2024-01-01'"), "a ");
  EXPECT_EQ(keys("Seen = '2023-06-30T12:00:00.500Z'"), "b ");
  EXPECT_EQ(keys("Note startsWith 'fi'"), "a ");
  EXPECT_EQ(keys("Note = '' and Count = 0"), "d ");
}

TEST_F(OwnFieldsCli, QueryFormats) {
  ProcessResult r = Run({"query", "scores", "--where", "Key = 'b'", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[\n {\"Key\":\"b\",\"Count\":-7,\"Ratio\":11498.189,\"Active\":false,\"Seen\":\"2023-06-30T12:00:00.500Z\","
            "\"Note\":\"se,\\\"c\\\"\"}\n]\n");
  r = Run({"query", "scores", "--where", "Key = 'c'", "--format", "json"});
  EXPECT_EQ(r.out,
            "[\n {\"Key\":\"c\",\"Count\":9223372036854775807,\"Ratio\":-1500,\"Active\":false,"
            "\"Seen\":\"1970-01-01T00:00:00.000Z\",\"Note\":\"\"}\n]\n");
  r = Run({"query", "scores", "--where", "Key = 'b'", "--format", "csv"});
  EXPECT_EQ(r.out, "Key,Count,Ratio,Active,Seen,Note\nb,-7,11498.189,false,2023-06-30T12:00:00.500Z,\"se,\"\"c\"\"\"\n");
  r = Run({"query", "scores", "--where", "Key = 'a'"});
  EXPECT_EQ(r.out,
            "Key | Count | Ratio | Active | Seen                     | Note\n"
            "----+-------+-------+--------+--------------------------+------\n"
            "a   | 3     | 0.25  | true   | 2024-01-01T00:00:00.000Z | first\n"
            "(1 row)\n");
}

TEST_F(OwnFieldsCli, QueryErrorsNameTheColumn) {
  ProcessResult r = Run({"query", "scores", "--where", "Active = 'x'"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "planb: --where: column 10: Active is a boolean; 'x' is text (write true or false, unquoted)\n");
  r = Run({"query", "scores", "--where", "Active < true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "planb: --where: column 8: Active is a boolean: only =, != and in apply to it, not '<'\n");
  r = Run({"query", "scores", "--where", "Ratio > nan"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(OwnFieldsCli, ExplainShowsOwnFieldsScanEveryRow) {
  const ProcessResult r = Run({"query", "scores", "--where", "Count = 3 and Seen >= '2024-01-01'", "--explain"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "scan: all keys (full scan), rows examined: 4, rows matched: 1\n");
}

TEST_F(OwnFieldsCli, AMalformedValueIsRefusedAtLoadAndNothingIsWritten) {
  for (const char* value : {"count=x", "ratio=nan", "ratio=1e999", "active=yes", "seen=2024-13-01T00:00:00Z",
                                   "count=1;count=2", "colour=red", "count"}) {
    const ProcessResult r = env_.Load({env_.Write("bad.xml", ReferenceData(Ref("scores", "e", value)))});
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_NE(r.err.find("scores value"), std::string::npos) << value << ": " << r.err;
    EXPECT_EQ(Run({"lookup", "scores", "e"}).exit_code, 1) << value;
  }
}

// lookup --remote and query --remote print what the storage node prints locally, shown fields included.
TEST(OwnFieldsRemote, RemoteOutputEqualsTheNodesOwn) {
  testing::ClusterFixture cluster(1);
  cluster.top_level_extra = std::string("plugin_dir = ") + PLANB_FIXTURE_DIR +
                            "/own_fields\n[map.scores]\ntype = scores\nscheme = hashed\n";
  PLANB_ASSERT_NODE_STARTS(cluster, 0);
  const std::string xml = cluster.dir() + "/s.xml";
  testing::WriteFile(xml, ReferenceData(Ref("scores", "a", "count=3;ratio=0.25;active=true;note=x") + "\n" +
                                        Ref("scores", "b", "count=-7;ratio=11498.189;seen=2024-01-01T00:00:00Z")));
  const ProcessResult load = cluster.Load({xml});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(cluster.WaitMerged(0)) << cluster.process(0).log();
  const std::vector<std::vector<std::string>> commands = {
      {"lookup", "scores", "a"},
      {"lookup", "scores", "b", "zz", "a"},
      {"lookup", "scores", "zz"},
      {"lookup", "scores", "a", "zz", "--format", "json"},
      {"lookup", "scores", "b", "zz", "--format", "csv"},
      {"query", "scores", "--where", "Ratio > 1 or Active = true", "--format", "json"},
      {"query", "scores", "--format", "csv"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> local = {"--config", cluster.config(0), "--home", cluster.home(0)};
    local.insert(local.end(), command.begin(), command.end());
    std::vector<std::string> remote = {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/empty"};
    remote.insert(remote.end(), command.begin(), command.end());
    remote.push_back("--remote");
    const ProcessResult on_node = testing::RunPlanb(local);
    const ProcessResult asked = testing::RunPlanb(remote);
    EXPECT_EQ(asked.exit_code, on_node.exit_code) << command[0] << " " << command[2] << ": " << asked.err;
    EXPECT_EQ(asked.out, on_node.out) << command[0] << " " << command[2];
    EXPECT_EQ(asked.err, on_node.err) << command[0] << " " << command[2];
  }
  const ProcessResult one = testing::RunPlanb(
      {"--config", cluster.dir() + "/proc.ini", "--home", cluster.dir() + "/empty", "lookup", "--remote", "scores", "b"});
  EXPECT_EQ(one.out, "count=-7 ratio=11498.189\n") << one.err;
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// planb enrich writes an answer of a type with fields of its own as an object of the fields lookup shows.
TEST_F(OwnFieldsCli, EnrichWritesTheShownFieldsAsAnObject) {
  testing::ProcessSpec spec;
  spec.binary = PLANB_BINARY;
  spec.args = {"--home", env_.home(), "--config", env_.config(), "enrich", "--lookup", "score=scores:k"};
  spec.stdin_text = "{\"k\":\"b\"}\n{\"k\":\"c\"}\n";
  const ProcessResult r = testing::RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"k\":\"b\",\"score\":{\"count\":-7,\"ratio\":11498.189}}\n"
            "{\"k\":\"c\",\"score\":{\"count\":9223372036854775807,\"ratio\":-1500}}\n");
}

}  // namespace
}  // namespace planb
