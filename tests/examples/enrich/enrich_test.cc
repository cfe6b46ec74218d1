// planb_enrich (examples/enrich), the real binary against a home loaded by the real planb: --time takes every
// form `planb lookup --time` takes and gives the same answers, the epoch included; --help.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::Lines;
using testing::ProcessResult;
using testing::ReferenceData;
using testing::TempDir;
using testing::TimedRef;

// Runs planb_enrich with `args` and `input` on stdin.
ProcessResult RunEnrich(const std::vector<std::string>& args, const std::string& input = "") {
  testing::ProcessSpec spec;
  spec.binary = PLANB_ENRICH_BINARY;
  spec.args = args;
  spec.stdin_text = input;
  return testing::RunProcess(spec);
}

// planb_enrich takes no --home: a config naming the CliEnv's home.
std::string EnrichConfig(const CliEnv& env) {
  return env.Write("enrich.ini", "home = " + env.home() + "\n" + testing::kTypedMapsConfig);
}

TEST(Enrich, TimeTakesEveryFormTheCliTakesWithTheSameAnswers) {
  CliEnv env(testing::kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write(
      "t.xml", ReferenceData(Lines({TimedRef("tm_hashed", "-0005-01-01T00:00:00.000Z", "k", "ancient"),
                                    TimedRef("tm_hashed", "1969-12-31T23:59:59.999Z", "k", "before"),
                                    TimedRef("tm_hashed", "1970-01-01T00:00:00.000Z", "k", "epoch"),
                                    TimedRef("tm_hashed", "2024-01-01T08:10:22.023Z", "k", "morning"),
                                    TimedRef("tm_hashed", "2024-01-01T08:10:22.500Z", "k", "half"),
                                    TimedRef("tm_hashed", "2024-06-01T00:00:00.000Z", "k", "june")})))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const struct {
    const char* time;
    const char* value;
  } kForms[] = {
      {"1970-01-01T00:00:00Z", "epoch"},          {"1970-01-01T00:00:00.000Z", "epoch"},
      {"1970-01-01", "epoch"},                    {"1970-01-01T00:00Z", "epoch"},
      {"1970-01-01T01:00:00+01:00", "epoch"},     {"1969-12-31T23:59:59.999Z", "before"},
      {"1969-12-31T23:59:59.9999Z", "before"},    {"2024-01-01T08:10:22.023Z", "morning"},
      {"2024-01-01T09:10:22.5+01:00", "half"},    {"2024-01-01T08:10:22,5Z", "half"},
      {"2024-01-01T03:10:22.023-05:00", "morning"}, {"2024-06-01", "june"},
      {"+10009-12-28T00:00:00Z", "june"},         {"-0005-01-01", "ancient"},
  };
  for (const auto& form : kForms) {
    const ProcessResult cli = env.Run({"lookup", "tm_hashed", "k", "--time", form.time});
    const ProcessResult enrich =
        RunEnrich({"--config", EnrichConfig(env), "--map", "tm_hashed", "--time", form.time}, "k\n");
    if (cli.exit_code != 0) {  // a form this parser does not take: both must refuse it
      EXPECT_EQ(cli.exit_code, 2) << form.time << ": " << cli.err;
      EXPECT_EQ(enrich.exit_code, 2) << form.time << ": " << enrich.err;
      ADD_FAILURE() << "planb lookup refused the form " << form.time << ": " << cli.err;
      continue;
    }
    EXPECT_EQ(cli.out, std::string(form.value) + "\n") << form.time;
    EXPECT_EQ(enrich.exit_code, 0) << form.time << ": " << enrich.err;
    EXPECT_EQ(enrich.out, std::string("k\t") + form.value + "\n") << form.time;
  }
  for (const char* bad : {"yesterday", "2024-13-01", "1700000000000", ""}) {
    EXPECT_EQ(env.Run({"lookup", "tm_hashed", "k", "--time", bad}).exit_code, 2) << bad;
    const ProcessResult enrich = RunEnrich({"--config", EnrichConfig(env), "--map", "tm_hashed", "--time", bad}, "k\n");
    if (*bad == '\0') continue;  // "" is "no --time" to planb_enrich
    EXPECT_EQ(enrich.exit_code, 2) << bad;
    EXPECT_THAT(enrich.err, HasSubstr(std::string("'") + bad + "' is not an ISO-8601 time")) << bad;
    EXPECT_EQ(enrich.out, "") << bad;
  }
}

TEST(Enrich, SessionsPrintTimesAsTheCliDoes) {
  CliEnv env(testing::kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write(
      "s.xml", ReferenceData(Lines({testing::SessionEvent("ss_hashed", "s", "1970-01-01T00:00:00.000Z", "1s")})))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  const ProcessResult enrich =
      RunEnrich({"--config", EnrichConfig(env), "--map", "ss_hashed", "--time", "1970-01-01T00:00:00Z"}, "s\nt\n");
  EXPECT_EQ(enrich.exit_code, 0) << enrich.err;
  EXPECT_EQ(enrich.out, "s\t1970-01-01T00:00:00.000Z 1970-01-01T00:00:01.000Z\nt\t\n");
}

TEST(Enrich, HelpPrintsUsageOnStdoutAndExitsZero) {
  for (const char* flag : {"--help", "-h"}) {
    const ProcessResult r = RunEnrich({flag});
    EXPECT_EQ(r.exit_code, 0) << flag << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("usage: planb_enrich --config FILE --map NAME")) << flag;
    EXPECT_THAT(r.out, HasSubstr("--time")) << flag;
    EXPECT_EQ(r.err, "") << flag;
  }
  const ProcessResult bad = RunEnrich({"--colour"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown argument '--colour'"));
  EXPECT_THAT(bad.err, HasSubstr("usage: planb_enrich"));
}

TEST(Enrich, TimeOnAMapWithoutTimeAndUnknownMapsAreBadArguments) {
  CliEnv env(testing::kTypedMapsConfig);
  const ProcessResult r =
      RunEnrich({"--config", EnrichConfig(env), "--map", "st_hashed", "--time", "1970-01-01T00:00:00Z"}, "k\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--time does not apply to map st_hashed (type state has no time)"));
  const ProcessResult unknown = RunEnrich({"--config", EnrichConfig(env), "--map", "no_such_map"}, "k\n");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("map 'no_such_map' is not in the config"));
}

}  // namespace
}  // namespace planb
