// A config planb cannot use stops every command with exit 2 and a message naming the file, the section and the
// offending value; nothing is created for the maps it describes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;

// Runs load and lookup against `env` (whose config is bad) and expects both to fail with every part of `what`.
void ExpectEveryCommandRefuses(const CliEnv& env, const std::vector<std::string>& what) {
  const std::string input = env.Write("input.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  const std::vector<std::vector<std::string>> commands = {{"load", input}, {"lookup", "city_to_country", "Paris"}};
  for (const std::vector<std::string>& command : commands) {
    const ProcessResult r = env.Run(command);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(env.config())) << command[0];
    for (const std::string& part : what) EXPECT_THAT(r.err, HasSubstr(part)) << command[0];
    EXPECT_EQ(r.out, "") << command[0];
  }
  EXPECT_FALSE(fs::exists(env.shard_data("city_to_country")));
}

TEST(CliConfig, RefusesAnInvalidMapName) {
  CliEnv env(
      "[map.city_to_country]\ntype = state\n"
      "[map.City-X]\ntype = state\n");
  ExpectEveryCommandRefuses(env, {"[map.City-X]", "invalid map name 'City-X'"});
}

TEST(CliConfig, RefusesAMapNameStartingWithADigit) {
  CliEnv env("[map.1cities]\ntype = state\n");
  ExpectEveryCommandRefuses(env, {"invalid map name '1cities'"});
}

TEST(CliConfig, RefusesAnUnknownType) {
  CliEnv env(
      "[map.city_to_country]\ntype = state\n"
      "[map.other]\ntype = no_such_type\n");
  ExpectEveryCommandRefuses(env, {"[map.other]", "unknown type 'no_such_type'", "state"});
}

TEST(CliConfig, RefusesAnUnknownScheme) {
  CliEnv env("[map.city_to_country]\ntype = state\nscheme = no_such_scheme\n");
  ExpectEveryCommandRefuses(env, {"[map.city_to_country]", "unknown scheme 'no_such_scheme'", "hashed", "direct"});
}

TEST(CliConfig, RefusesAMissingConfigFile) {
  CliEnv env;
  const std::string missing = env.dir() + "/no-such.ini";
  const ProcessResult r = testing::RunPlanb({"--home", env.home(), "--config", missing, "plugins"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_EQ(r.out, "");
}

TEST(CliConfig, DefaultsTheSchemeToHashed) {
  CliEnv env("[map.city_to_country]\ntype = state\n");
  const std::string input = env.Write("input.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  ProcessResult r = env.Load({input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A key the direct scheme would refuse (LMDB caps keys at 511 bytes) is fine for hashed.
  const std::string long_key(2000, 'k');
  const std::string long_input = env.Write("long.xml", ReferenceData(Ref("city_to_country", long_key, "far")));
  r = env.Load({long_input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = env.Lookup("city_to_country", long_key);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "far\n");
}

}  // namespace
}  // namespace planb
