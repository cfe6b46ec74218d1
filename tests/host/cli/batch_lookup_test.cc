// `planb lookup MAP KEY KEY...` and `--keys-from FILE`: several keys in one read, one "KEY<TAB>VALUE" line each
// in the order asked; absent keys named on stderr with exit 1; bad keys files refused with exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/cli/cli_test_env.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;

void LoadCities(const CliEnv& env) {
  const std::string file = env.Write(
      "cities.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                  Ref("city_to_country", "Lyon", "France") + "\n" +
                                  Ref("city_to_country", "Cardiff", "Wales")));
  const ProcessResult r = env.Load({file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliBatchLookup, PrintsOneKeyTabValueLinePerKeyInOrder) {
  CliEnv env;
  LoadCities(env);
  const ProcessResult r = env.Run({"lookup", "city_to_country", "Lyon", "Cardiff", "Paris"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Lyon\tFrance\nCardiff\tWales\nParis\tFrance\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliBatchLookup, NamesAbsentKeysOnStderrAndExitsOne) {
  CliEnv env;
  LoadCities(env);
  const ProcessResult r = env.Run({"lookup", "city_to_country", "Lyon", "Atlantis", "Paris"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "Lyon\tFrance\nParis\tFrance\n");
  EXPECT_EQ(r.err, "planb: city_to_country: no key 'Atlantis'\n");
}

TEST(CliBatchLookup, ReadsKeysFromAFileAfterTheArguments) {
  CliEnv env;
  LoadCities(env);
  // Issue 11: a blank line (a file's trailing blank lines, a paragraph gap) counted as a missing key ''.
  // Blank lines are skipped; a key of spaces is still a key.
  const std::string keys = env.Write("keys.txt", "Paris\r\nCardiff\n\n\r\nLyon\n \n\n");
  const ProcessResult r = env.Run({"lookup", "city_to_country", "Lyon", "--keys-from", keys});
  EXPECT_EQ(r.exit_code, 1) << "' ' is a key that is absent";
  EXPECT_EQ(r.out, "Lyon\tFrance\nParis\tFrance\nCardiff\tWales\nLyon\tFrance\n");
  EXPECT_EQ(r.err, "planb: city_to_country: no key ' '\n");
}

TEST(CliBatchLookup, AFileOfOneKeyPrintsTheValueAlone) {
  CliEnv env;
  LoadCities(env);
  const std::string keys = env.Write("keys.txt", "Cardiff\n");
  const ProcessResult r = env.Run({"lookup", "city_to_country", "--keys-from", keys});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Wales\n");
}

TEST(CliBatchLookup, RefusesAMissingOrEmptyKeysFile) {
  CliEnv env;
  LoadCities(env);
  ProcessResult r = env.Run({"lookup", "city_to_country", "--keys-from", env.dir() + "/absent.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--keys-from: cannot read '" + env.dir() + "/absent.txt'"));
  EXPECT_EQ(r.out, "");
  for (const char* empty : {"", "\n\n", "\r\n"}) {
    r = env.Run({"lookup", "city_to_country", "--keys-from", env.Write("empty.txt", empty)});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("no KEY given"));
  }
  r = env.Run({"lookup", "city_to_country"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no KEY given (give keys after MAP, or --keys-from FILE)"));
  r = env.Run({"lookup", "city_to_country", "--keys-from", env.dir()});
  EXPECT_EQ(r.exit_code, 2) << "a directory is not a keys file";
  EXPECT_THAT(r.err, HasSubstr("--keys-from"));
}

TEST(CliBatchLookup, RefusesTheWholeBatchWhenOneNumberKeyIsMalformed) {
  CliEnv env(std::string(testing::kCliConfig) + "[map.ip_owner]\ntype = ranged\n");
  const ProcessResult r = env.Run({"lookup", "ip_owner", "5", "five", "7"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("KEY 'five' is not a whole number"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace planb
