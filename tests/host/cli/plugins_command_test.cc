// `planb plugins`: one line per loaded plugin (kind, name, version, file); and plugin files the registry refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
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
using testing::RunPlanb;
using testing::TempDir;

struct PluginLine {
  std::string kind, name, version, file;
};

// The lines of `planb plugins` output: one per plugin, no header.
std::vector<PluginLine> ParsePluginLines(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::vector<PluginLine> lines;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    PluginLine p;
    fields >> p.kind >> p.name >> p.version >> p.file;
    std::string extra;
    EXPECT_FALSE(fields >> extra) << "more than four fields: " << line;
    lines.push_back(p);
  }
  return lines;
}

int CountPlugin(const std::vector<PluginLine>& lines, const std::string& kind, const std::string& name) {
  int n = 0;
  for (const PluginLine& p : lines) n += p.kind == kind && p.name == name;
  return n;
}

void ExpectBuiltPlugins(const std::vector<PluginLine>& lines) {
  EXPECT_EQ(CountPlugin(lines, "type", "state"), 1);
  EXPECT_EQ(CountPlugin(lines, "scheme", "hashed"), 1);
  EXPECT_EQ(CountPlugin(lines, "scheme", "direct"), 1);
  for (const PluginLine& p : lines) {
    EXPECT_THAT(p.version, ::testing::MatchesRegex("[0-9]+")) << p.name;
    EXPECT_TRUE(fs::path(p.file).is_absolute()) << p.file;
    EXPECT_TRUE(fs::is_regular_file(p.file)) << p.file;
    EXPECT_EQ(fs::path(p.file).extension(), ".so") << p.file;
  }
}

// The one plugin file in the fixture directory `name` (built by tests/fixtures).
std::string FixtureFile(const std::string& name) {
  const std::string dir = std::string(PLANB_FIXTURE_DIR) + "/" + name;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".so") files.push_back(entry.path().string());
  }
  EXPECT_EQ(files.size(), 1u) << dir;
  return files.empty() ? dir : files.front();
}

TEST(CliPlugins, ListsTheBuiltPluginsOneLineEach) {
  CliEnv env;
  const ProcessResult r = env.Run({"plugins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<PluginLine> lines = ParsePluginLines(r.out);
  EXPECT_EQ(lines.size(), testing::kBuiltInPlugins) << r.out;
  ExpectBuiltPlugins(lines);
}

TEST(CliPlugins, FindsTheBuiltPluginsWithoutAnyConfig) {
  TempDir cwd;
  const ProcessResult r = RunPlanb({"plugins"}, cwd.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectBuiltPlugins(ParsePluginLines(r.out));
}

TEST(CliPlugins, ListsAPluginDirectoryGivenTwiceOnce) {
  CliEnv env;
  // The built-in directory, named twice more: as it is and through "..".
  const ProcessResult r = env.Run(
      {"plugins", "--plugin-dir", PLANB_PLUGIN_DIR, "--plugin-dir", std::string(PLANB_PLUGIN_DIR) + "/../plugins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<PluginLine> lines = ParsePluginLines(r.out);
  EXPECT_EQ(lines.size(), testing::kBuiltInPlugins) << r.out;
  ExpectBuiltPlugins(lines);
}

TEST(CliPlugins, RefusesAPluginWithAnotherAbiVersionNamingTheFile) {
  CliEnv env;
  const std::string file = FixtureFile("wrong_abi");
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/wrong_abi"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr("built against plugin SDK"));
  EXPECT_EQ(r.out, "");
}

TEST(CliPlugins, RefusesAWrongAbiPluginFromTheConfigsPluginDirForEveryCommand) {
  const std::string file = FixtureFile("wrong_abi");
  CliEnv env(std::string("plugin_dir = ") + PLANB_FIXTURE_DIR + "/wrong_abi\n" + testing::kCliConfig);
  const std::string input = env.Write("input.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  const std::vector<std::vector<std::string>> commands = {
      {"plugins"}, {"load", input}, {"lookup", "city_to_country", "Paris"}};
  for (const std::vector<std::string>& command : commands) {
    const ProcessResult r = env.Run(command);
    EXPECT_EQ(r.exit_code, 2) << command[0];
    EXPECT_THAT(r.err, HasSubstr(file)) << command[0];
    EXPECT_THAT(r.err, HasSubstr("built against plugin SDK")) << command[0];
    EXPECT_EQ(r.out, "") << command[0];
  }
  EXPECT_FALSE(fs::exists(env.shard_data("city_to_country")));
}

TEST(CliPlugins, RefusesALibraryWithoutTheEntryPointNamingTheFile) {
  CliEnv env;
  const std::string file = FixtureFile("no_entry_point");
  const ProcessResult r = env.Run({"--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/no_entry_point", "plugins"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr("not a Plan B plugin"));
  EXPECT_EQ(r.out, "");
}

TEST(CliPlugins, RefusesAMissingPluginDirectory) {
  CliEnv env;
  const std::string missing = env.dir() + "/no-plugins-here";
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  EXPECT_EQ(r.out, "");
}

TEST(CliPlugins, RefusesAFileThatIsNotASharedLibrary) {
  CliEnv env;
  const std::string file = env.Write("plugins/libjunk.so", "this is not an ELF file\n");
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", env.dir() + "/plugins"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace planb
