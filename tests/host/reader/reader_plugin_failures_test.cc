// planb::Reader::Open with plugin files that fail to load: as for the CLI, they do not stop it; maps that do not
// need them answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;

TEST(ReaderPluginFailures, BadPluginFilesDoNotStopTheReader) {
  CliEnv env;
  const std::string input = env.Write("input.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  const ProcessResult r = env.Load({input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  env.Write("plugins/libplanb_junk.so", "not an ELF file\n");
  std::filesystem::copy_file(PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so",
                             env.dir() + "/plugins/libplanb_wrong_abi.so");
  ReaderOptions options;
  options.config_path = env.config();
  options.home = env.home();
  options.plugin_dirs = {env.dir() + "/plugins"};
  std::unique_ptr<Reader> reader;
  const Status s = Reader::Open(options, &reader);
  ASSERT_TRUE(s.ok()) << s.message();
  const LookupResult hit = reader->Lookup("city_to_country", "Paris");
  EXPECT_EQ(hit.code, Code::kOk) << hit.error;
  EXPECT_EQ(hit.value.view(), "France");
}

TEST(ReaderPluginFailures, AMapNeedingAPluginThatFailedSaysWhy) {
  CliEnv env(std::string(testing::kCliConfig) + "[map.future]\ntype = state\nscheme = from_the_future\n");
  ReaderOptions options;
  options.config_path = env.config();
  options.home = env.home();
  options.plugin_dirs = {PLANB_FIXTURE_DIR "/wrong_abi"};
  std::unique_ptr<Reader> reader;
  const Status s = Reader::Open(options, &reader);
  ASSERT_TRUE(s.ok()) << s.message();
  const LookupResult r = reader->Lookup("future", "k");
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, ::testing::HasSubstr("future is unavailable: "));
  EXPECT_THAT(r.error, ::testing::HasSubstr("[map.future]: unknown scheme 'from_the_future'"));
  EXPECT_THAT(r.error, ::testing::HasSubstr("not loaded: " PLANB_FIXTURE_DIR "/wrong_abi/libplanb_wrong_abi.so"));
}

}  // namespace
}  // namespace planb
