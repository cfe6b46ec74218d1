// Commands refuse a home whose receive/ (or any subdirectory) is a symlink, before they touch anything: `serve`
// used to empty the link's target while clearing receive/. The target is checked whole afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/endpoints.h"

namespace planb {
namespace {

namespace fs = std::filesystem;
using testing::CliEnv;
using testing::ProcessResult;
using ::testing::HasSubstr;

TEST(CliHomeLinks, ServeLoadAndLookupRefuseALinkedSubdirectoryAndLeaveItsTargetWhole) {
  zmq::context_t context;
  for (const char* sub : {"receive", "merging", "outgoing"}) {
    CliEnv env;
    const std::string paris =
        env.Write("paris.xml", testing::ReferenceData(testing::Ref("city_to_country", "Paris", "France")));
    ASSERT_EQ(env.Run({"load", paris}).exit_code, 0);
    const std::string victim = env.dir() + "/victim";
    fs::create_directories(victim + "/inner");
    const std::string precious = env.Write("victim/inner/precious", "keep me\n");
    const std::string linked = env.home() + "/" + sub;
    fs::remove_all(linked);
    fs::create_directory_symlink(victim, linked);
    const std::vector<std::vector<std::string>> commands{
        {"serve", "--bind", testing::UnusedEndpoint(context)},
        {"load", paris},
        {"lookup", "city_to_country", "Paris"}};
    for (const std::vector<std::string>& command : commands) {
      const ProcessResult r = env.Run(command);
      EXPECT_EQ(r.exit_code, 2) << sub << " " << command[0] << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(linked + " is a symbolic link")) << sub << " " << command[0];
      EXPECT_EQ(testing::ReadFile(precious), "keep me\n") << sub << " " << command[0];
    }
  }
}

TEST(CliHomeLinks, AFileModeThatLetsOthersWriteIsRefused) {
  CliEnv env(std::string("file_mode = 0666\n") + testing::kCliConfig);
  const ProcessResult r = env.Run({"stores"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'0666' is not a file mode"));
  EXPECT_THAT(r.err, HasSubstr("no write for group or others"));
  EXPECT_FALSE(fs::exists(env.home()));
}

}  // namespace
}  // namespace planb
