// planb enrich as pipelines run it: a long-running filter that answers each event as it arrives (never waiting for
// a full batch), and the shell commands docs/enrich.md gives for Vector, Logstash and Fluent Bit, run through
// /bin/sh on real shards (the three tools are not packaged for Debian 12: the shell stands in for them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/cluster_fixture.h"
#include "support/filter_process.h"

namespace planb {
namespace {

using ::testing::HasSubstr;
using testing::CliEnv;
using testing::ProcessResult;
using testing::ReferenceData;
using testing::Ref;

constexpr char kConfig[] =
    "[map.ip_to_country]\ntype = state\nscheme = hashed\n"
    "[map.user_to_department]\ntype = temporal\nscheme = hashed\n";

class EnrichPipes : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string body =
        Ref("ip_to_country", "10.1.2.3", "GB") + "\n" + Ref("ip_to_country", "10.9.9.9", "FR") + "\n" +
        "  <reference><map>user_to_department</map><key>alice</key><time>2024-01-01T00:00:00Z</time>"
        "<value>Research</value></reference>";
    const ProcessResult load = env_.Load({env_.Write("data.xml", ReferenceData(body))});
    ASSERT_EQ(load.exit_code, 0) << load.err;
    events_ = env_.Write("events.jsonl",
                         R"({"@timestamp":"2024-03-01T09:00:00Z","client":{"ip":"10.1.2.3"},"user":"alice"})"
                         "\n"
                         R"({"@timestamp":"2023-03-01T09:00:00Z","client":{"ip":"192.0.2.1"},"user":"alice"})"
                         "\n");
  }

  // `command` with PLANB standing for the planb binary and its --home and --config, run by /bin/sh.
  ProcessResult Shell(const std::string& command) const {
    std::string line = command;
    const std::string planb =
        std::string(PLANB_BINARY) + " --home " + env_.home() + " --config " + env_.config();
    for (size_t at; (at = line.find("PLANB")) != std::string::npos;) line.replace(at, 5, planb);
    testing::ProcessSpec spec;
    spec.binary = "/bin/sh";
    spec.args = {"-c", line};
    return testing::RunProcess(spec);
  }

  CliEnv env_{kConfig};
  std::string events_;
};

// The commands of docs/enrich.md with `tail -F` (which never ends) as `tail -n +1` and the paths of this test.
TEST_F(EnrichPipes, VectorExecSourceCommand) {
  const ProcessResult r = Shell("tail -n +1 " + events_ +
                                " | PLANB enrich --lookup geo.country=ip_to_country:client.ip "
                                "--lookup dept=user_to_department:user@@timestamp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"@timestamp":"2024-03-01T09:00:00Z","client":{"ip":"10.1.2.3"},"user":"alice","geo":{"country":"GB"},"dept":"Research"})"
            "\n"
            R"({"@timestamp":"2023-03-01T09:00:00Z","client":{"ip":"192.0.2.1"},"user":"alice"})"
            "\n");
}

TEST_F(EnrichPipes, LogstashPipeInputCommand) {
  const ProcessResult r =
      Shell("tail -n +1 " + events_ + " | PLANB enrich --lookup geo.country=ip_to_country:client.ip --on-miss tag");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"@timestamp":"2024-03-01T09:00:00Z","client":{"ip":"10.1.2.3"},"user":"alice","geo":{"country":"GB"}})"
            "\n"
            R"({"@timestamp":"2023-03-01T09:00:00Z","client":{"ip":"192.0.2.1"},"user":"alice","planb_miss":["geo.country"]})"
            "\n");
}

TEST_F(EnrichPipes, FluentBitExecInputCommand) {
  const ProcessResult r = Shell("tail -n +1 " + events_ +
                                " | PLANB enrich --lookup geo.country=ip_to_country:client.ip "
                                "--fallback geo.country=unknown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"("client":{"ip":"192.0.2.1"},"user":"alice","geo":{"country":"unknown"}})"));
}

TEST_F(EnrichPipes, AnswersEachEventAsItArrives) {
  testing::FilterProcess enrich(PLANB_BINARY, {"--home", env_.home(), "--config", env_.config(), "enrich",
                                               "--lookup", "c=ip_to_country:ip"});
  ASSERT_TRUE(enrich.started());
  // One event at a time: each answer must come back while the input stays open.
  for (const auto& [ip, country] : std::vector<std::pair<std::string, std::string>>{{"10.1.2.3", "GB"},
                                                                                     {"10.9.9.9", "FR"}}) {
    ASSERT_TRUE(enrich.Write("{\"ip\":\"" + ip + "\"}\n"));
    std::string line;
    ASSERT_TRUE(enrich.ReadLine(&line)) << "no answer for " << ip << "\n" << enrich.err();
    EXPECT_EQ(line, "{\"ip\":\"" + ip + "\",\"c\":\"" + country + "\"}");
  }
  EXPECT_EQ(enrich.Finish(), 0) << enrich.err();
  EXPECT_THAT(enrich.err(), HasSubstr("planb enrich: 2 events, 0 malformed"));
}

}  // namespace
}  // namespace planb
