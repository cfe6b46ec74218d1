// `planb plugins`: each loaded plugin (kind, name, version, SDK, file, summary) with its options, as a table or
// JSON, and the plugin files that did not load; and how every command reports those files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/cli_test_env.h"
#include "planb/plugin.h"

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
  std::string kind, name, version, sdk, file;
  std::vector<std::string> options;  // the option lines under it
};

// The plugin lines of `planb plugins` (after the header, up to the blank line before the failed files), each
// with the option lines indented under it; every plugin line's FILE column starts where the header's does.
std::vector<PluginLine> ParsePluginLines(const std::string& out) {
  std::istringstream in(out);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("KIND", 0), 0u) << header;
  const size_t file_column = header.find("FILE");
  std::vector<PluginLine> lines;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    if (line.rfind("    ", 0) == 0) {
      EXPECT_FALSE(lines.empty()) << line;
      if (!lines.empty()) lines.back().options.push_back(line.substr(4));
      continue;
    }
    std::istringstream fields(line);
    PluginLine p;
    fields >> p.kind >> p.name >> p.version >> p.sdk >> p.file;
    EXPECT_EQ(line.find(p.file), file_column) << "not aligned: " << line;
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
    EXPECT_EQ(p.sdk, std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor)) << p.name;
    EXPECT_TRUE(fs::path(p.file).is_absolute()) << p.file;
    EXPECT_TRUE(fs::is_regular_file(p.file)) << p.file;
    EXPECT_EQ(fs::path(p.file).filename().string().rfind("libplanb_", 0), 0u) << p.file;
  }
}

// The one plugin file in the fixture directory `name` (built by tests/fixtures).
std::string FixtureFile(const std::string& name) {
  const std::string dir = std::string(PLANB_FIXTURE_DIR) + "/" + name;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("libplanb_", 0) == 0) files.push_back(entry.path().string());
  }
  EXPECT_EQ(files.size(), 1u) << dir;
  return files.empty() ? dir : files.front();
}

TEST(CliPlugins, ListsTheBuiltPluginsOneLineEachWithTheirOptionsUnder) {
  CliEnv env;
  const ProcessResult r = env.Run({"plugins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<PluginLine> lines = ParsePluginLines(r.out);
  EXPECT_EQ(lines.size(), testing::kBuiltInPlugins) << r.out;
  ExpectBuiltPlugins(lines);
  EXPECT_THAT(r.out, HasSubstr("State: key -> value; the latest effective time wins, in any merge order\n"));
  for (const PluginLine& p : lines) {
    if (p.name != "hashed") continue;
    ASSERT_EQ(p.options.size(), 2u) << r.out;
    EXPECT_THAT(p.options[0], ::testing::MatchesRegex("hash_bits +default 64 +bits of XXH3-64 .*"));
    EXPECT_THAT(p.options[1], ::testing::MatchesRegex("value_dedup +default false +true: identical values .*"));
    EXPECT_EQ(p.options[0].find("bits of"), p.options[1].find("true:"));  // the help column is aligned
  }
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n    direct_max +no default +keys up to"));  // hybrid's
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("NOT LOADED")));
}

TEST(CliPlugins, JsonListsEveryPluginWithItsOptionsAndTheFailedFiles) {
  CliEnv env;
  const std::string file = FixtureFile("wrong_abi");
  const ProcessResult r =
      env.Run({"plugins", "--format", "json", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/wrong_abi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc["plugins"].is_array());
  EXPECT_EQ(doc["plugins"].size(), testing::kBuiltInPlugins);
  bool saw_hashed = false;
  bool saw_hybrid = false;
  for (const nlohmann::json& p : doc["plugins"]) {
    EXPECT_TRUE(p["kind"] == "type" || p["kind"] == "scheme") << p.dump();
    EXPECT_TRUE(p["version"].is_number_unsigned()) << p.dump();
    EXPECT_EQ(p["sdk"], std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor));
    EXPECT_TRUE(fs::is_regular_file(p["file"].get<std::string>())) << p.dump();
    EXPECT_TRUE(p["summary"].is_string() && !p["summary"].get<std::string>().empty()) << p.dump();
    ASSERT_TRUE(p["options"].is_array()) << p.dump();
    for (const nlohmann::json& o : p["options"]) {
      EXPECT_TRUE(o["name"].is_string()) << o.dump();
      EXPECT_TRUE(o["default"].is_string() || o["default"].is_null()) << o.dump();
      EXPECT_TRUE(o["help"].is_string() && !o["help"].get<std::string>().empty()) << o.dump();
    }
    if (p["name"] == "hashed") {
      saw_hashed = true;
      ASSERT_EQ(p["options"].size(), 2u);
      EXPECT_EQ(p["options"][0]["name"], "hash_bits");
      EXPECT_EQ(p["options"][0]["default"], "64");
    }
    if (p["name"] == "hybrid") {
      saw_hybrid = true;
      EXPECT_EQ(p["options"][0]["name"], "direct_max");
      EXPECT_TRUE(p["options"][0]["default"].is_null());
    }
  }
  EXPECT_TRUE(saw_hashed && saw_hybrid) << r.out;
  ASSERT_EQ(doc["failed"].size(), 1u) << r.out;
  EXPECT_EQ(doc["failed"][0]["file"], file);
  EXPECT_THAT(doc["failed"][0]["reason"].get<std::string>(), HasSubstr("built against plugin SDK"));
}

TEST(CliPlugins, TheTableListsTheFailedFilesAfterThePlugins) {
  CliEnv env;
  const std::string file = FixtureFile("wrong_abi");
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/wrong_abi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParsePluginLines(r.out).size(), testing::kBuiltInPlugins);
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n\nNOT LOADED +REASON\n" + file + " +built against plugin SDK"));
}

TEST(CliPlugins, ShowsThePreviousSdkAPluginWasBuiltAgainst) {
  CliEnv env;
  const ProcessResult r =
      env.Run({"plugins", "--format", "json", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/sdk_7_0_set"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const nlohmann::json& p : doc["plugins"]) {
    if (p["name"] != "member") continue;
    ++seen;
    EXPECT_EQ(p["sdk"], std::to_string(kAbiMajor) + ".0");
  }
  EXPECT_EQ(seen, 1) << r.out;
}

TEST(CliPlugins, RefusesAnUnknownFormat) {
  CliEnv env;
  const ProcessResult r = env.Run({"plugins", "--format", "csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format: 'csv' is not one of table, json"));
  EXPECT_EQ(r.out, "");
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

// The stderr line the runtime writes for a plugin file that did not load.
std::string NotLoadedLine(const std::string& file) { return "planb: plugin " + file + " not loaded: "; }

std::vector<std::string> TextLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CliPlugins, SaysAPluginWithAnotherAbiVersionDidNotLoadAndListsTheRest) {
  CliEnv env;
  const std::string file = FixtureFile("wrong_abi");
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/wrong_abi"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> err = TextLines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_THAT(err[0], HasSubstr(NotLoadedLine(file) + "built against plugin SDK"));
  EXPECT_THAT(r.out, HasSubstr("hashed"));
}

// Commands load the files their maps' plugins are named for, so bad files beside them neither stop them nor are
// said by them; `planb plugins` loads every file and says each bad one, in name order.
TEST(CliPlugins, BadPluginFilesDoNotStopCommandsOnOtherMaps) {
  CliEnv env;
  const std::string dir = env.dir() + "/plugins";
  const std::string junk = env.Write("plugins/libplanb_junk.so", "this is not an ELF file\n");
  const std::string unresolved = dir + "/libplanb_unresolved.so";
  fs::copy_file(FixtureFile("unresolved_symbol"), unresolved);
  const std::string wrong = dir + "/libplanb_wrong.so";
  fs::copy_file(FixtureFile("wrong_abi"), wrong);
  const std::string twice = dir + "/libplanb_state_again.so";
  fs::copy_file(std::string(PLANB_PLUGIN_DIR) + "/libplanb_state_store.so", twice);
  const std::string input = env.Write("input.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  const std::vector<std::vector<std::string>> commands = {
      {"load", input}, {"lookup", "city_to_country", "Paris"}, {"stores"}, {"plugins"}};
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args{"--plugin-dir", dir};
    args.insert(args.end(), command.begin(), command.end());
    const ProcessResult r = env.Run(args);
    EXPECT_EQ(r.exit_code, 0) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Bad file descriptor")));
    const std::vector<std::string> err = TextLines(r.err);
    if (command[0] != "plugins") {
      EXPECT_TRUE(err.empty()) << command[0] << " loaded files its maps do not name: " << r.err;
      continue;
    }
    ASSERT_EQ(err.size(), 4u) << command[0] << ": " << r.err;  // one line per bad file, in name order
    EXPECT_THAT(err[0], HasSubstr(NotLoadedLine(junk) + "cannot be loaded: ")) << command[0];
    EXPECT_THAT(err[1], HasSubstr(NotLoadedLine(twice) + "type 'state' is already provided by ")) << command[0];
    EXPECT_THAT(err[2], HasSubstr(NotLoadedLine(unresolved) + "cannot be loaded: ")) << command[0];
    EXPECT_THAT(err[2], HasSubstr("undefined symbol: planb_fixture_symbol_nobody_defines")) << command[0];
    EXPECT_THAT(err[3], HasSubstr(NotLoadedLine(wrong) + "built against plugin SDK")) << command[0];
  }
  const ProcessResult r = env.Run({"--plugin-dir", dir, "lookup", "city_to_country", "Paris"});
  EXPECT_THAT(r.out, HasSubstr("France"));
  // A map whose plugin is found by no file's name: every file is loaded, and the bad ones are said (the map is set
  // aside, its plugin perhaps in one of them).
  CliEnv other(std::string(testing::kCliConfig) + "[map.odd]\ntype = no_such_type\n");
  const ProcessResult odd = other.Run({"--plugin-dir", dir, "lookup", "odd", "k"});
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_THAT(odd.err, HasSubstr(NotLoadedLine(junk))) << odd.err;
  EXPECT_THAT(odd.err, HasSubstr("unknown type 'no_such_type' (known: ")) << odd.err;
  EXPECT_THAT(odd.err, HasSubstr("temporal")) << "the known types, all of them: " << odd.err;
}

TEST(CliPlugins, AMapNeedingAPluginThatFailedNamesTheMapAndTheFile) {
  const std::string file = FixtureFile("wrong_abi");
  CliEnv env(std::string("plugin_dir = ") + PLANB_FIXTURE_DIR + "/wrong_abi\n" + testing::kCliConfig +
             "[map.future]\ntype = state\nscheme = from_the_future\n");
  const std::string future = env.Write("future.xml", ReferenceData(Ref("future", "k", "v")));
  const std::string paris = env.Write("paris.xml", ReferenceData(Ref("city_to_country", "Paris", "France")));
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"load", future}, {"lookup", "future", "k"}}) {
    const ProcessResult r = env.Run(command);
    EXPECT_EQ(r.exit_code, 2) << command[0];
    EXPECT_THAT(r.err, HasSubstr(NotLoadedLine(file))) << command[0];
    EXPECT_THAT(r.err, HasSubstr("[map.future]: unknown scheme 'from_the_future' (known: ")) << command[0];
    EXPECT_THAT(r.err, HasSubstr("; not loaded: " + file + " (built against plugin SDK")) << command[0];
  }
  EXPECT_FALSE(fs::exists(env.shard_data("future")));
  ProcessResult r = env.Run({"load", paris});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = env.Run({"lookup", "city_to_country", "Paris"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("France"));
}

// `planb stores` lists a map set aside with the rest, says why, and fails: a script must not read "not there".
TEST(CliPlugins, StoresListsAMapWhosePluginDidNotLoadWithTheReasonAndFails) {
  const std::string file = FixtureFile("wrong_abi");
  CliEnv env(std::string("plugin_dir = ") + PLANB_FIXTURE_DIR + "/wrong_abi\n" + testing::kCliConfig +
             "[map.future]\ntype = state\nscheme = from_the_future\n");
  ProcessResult r = env.Run({"stores"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("planb: stores: map 'future' is not available: ")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not loaded: " + file)) << r.err;
  bool listed = false;
  for (const std::string& line : TextLines(r.out)) {
    std::istringstream words(line);
    std::string map, type, scheme, rows;
    words >> map >> type >> scheme >> rows;
    if (map != "future") continue;
    listed = true;
    EXPECT_EQ(type, "state");
    EXPECT_EQ(scheme, "from_the_future");
    EXPECT_EQ(rows, "?");
  }
  EXPECT_TRUE(listed) << r.out;
  EXPECT_THAT(r.out, HasSubstr("unavailable: map future: ")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("city_to_country")) << "the maps that work are listed too: " << r.out;

  r = env.Run({"stores", "--format", "json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  bool in_json = false;
  for (const nlohmann::json& m : doc.at("maps")) {
    if (m.at("map") == "future") {
      in_json = true;
      EXPECT_EQ(m.at("measured"), false);
      EXPECT_THAT(m.at("unavailable").get<std::string>(), HasSubstr("unknown scheme 'from_the_future'"));
    } else {
      EXPECT_TRUE(m.at("unavailable").is_null()) << m.dump();
    }
  }
  EXPECT_TRUE(in_json) << r.out;
}

// A query whose store type throws in DecodeRow at the first row prints no header and no half result: only the
// error, naming the plugin, its file and the call.
TEST(CliPlugins, AQueryWhoseDecodeRowThrowsPrintsOnlyTheErrorNamingThePlugin) {
  const std::string kit = std::string(PLANB_FIXTURE_DIR) + "/kit";
  CliEnv env("plugin_dir = " + kit + "\n[map.sample]\ntype = kit_throw_in_decode\nscheme = direct\n");
  const std::string input = env.Write("input.xml", ReferenceData(Ref("sample", "alpha", "1")));
  ProcessResult r = env.Run({"load", input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* format : {"csv", "json", "table"}) {
    r = env.Run({"query", "sample", "--format", format});
    EXPECT_EQ(r.exit_code, 2) << format;
    EXPECT_EQ(r.out, "") << format;
    EXPECT_THAT(r.err, HasSubstr("store type 'kit_throw_in_decode' (" + kit +
                                 "/libplanb_kit_throw_in_decode.so): Store::DecodeRow threw: kit DecodeRow refuses"))
        << format;
  }
}

// A plugin that dies of a signal in its merge: `planb load` says so, naming the map, the plugin file and the
// staged batch, and exits 2 (not the signal's death). The batch stays staged, its death counted.
TEST(CliPlugins, APluginThatCrashesInMergeIsNamedAndTheLoadExits2) {
  const std::string kit = std::string(PLANB_FIXTURE_DIR) + "/kit";
  CliEnv env("plugin_dir = " + kit + "\n[map.sample]\ntype = kit_crash_in_merge\nscheme = direct\n");
  const std::string input = env.Write("input.xml", ReferenceData(Ref("sample", "alpha", "1")));
  const ProcessResult r = env.Run({"load", input});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("planb: fatal signal 4 (Illegal instruction) while merging map 'sample' (store type "
                               "'kit_crash_in_merge' (" +
                               kit + "/libplanb_kit_crash_in_merge.so), scheme 'direct' ("));
  EXPECT_THAT(r.err, HasSubstr(") of staged batch "));
  EXPECT_THAT(r.err, HasSubstr("the batch stays staged, and this death counts towards its quarantine"));
  // Each later run counts the death and tries again; at the third death the batch goes to quarantine, its reason
  // naming the map and the plugins.
  for (int run = 2; run <= 4; ++run) {
    const std::string more =
        env.Write("input" + std::to_string(run) + ".xml", ReferenceData(Ref("sample", "k" + std::to_string(run), "v")));
    const ProcessResult again = env.Run({"load", more});
    EXPECT_NE(again.exit_code, 0) << run;
  }
  const ProcessResult stores = env.Run({"stores", "--format", "json"});
  const nlohmann::json doc = nlohmann::json::parse(stores.out);
  ASSERT_FALSE(doc.at("quarantined").empty()) << stores.out << stores.err;
  EXPECT_THAT(doc.at("quarantined")[0].at("reason").get<std::string>(),
              HasSubstr("merge failed 3 times; last: the merging process died during the merge of map 'sample' "
                        "(store type 'kit_crash_in_merge' (" +
                        kit + "/libplanb_kit_crash_in_merge.so), scheme 'direct' ("));
}

// A plugin file that dies of a signal while it is being loaded is named, and the command exits 2.
TEST(CliPlugins, APluginFileThatCrashesWhileLoadingIsNamed) {
  const std::string file = FixtureFile("crashing_constructor");
  CliEnv env;
  const ProcessResult r =
      env.Run({"--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/crashing_constructor", "plugins"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("planb: fatal signal 4 (Illegal instruction) while loading plugin file " + file +
                               " (its initialisers or entry point)"));
}

TEST(CliPlugins, AMapNamingAnUnknownPluginWhenAllLoadedStillStopsEveryCommand) {
  CliEnv env(std::string(testing::kCliConfig) + "[map.future]\ntype = state\nscheme = from_the_future\n");
  const ProcessResult r = env.Run({"lookup", "city_to_country", "Paris"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("[map.future]: unknown scheme 'from_the_future'"));
}

TEST(CliPlugins, SaysALibraryWithoutTheEntryPointDidNotLoad) {
  CliEnv env;
  const std::string file = FixtureFile("no_entry_point");
  const ProcessResult r = env.Run({"--plugin-dir", std::string(PLANB_FIXTURE_DIR) + "/no_entry_point", "plugins"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(NotLoadedLine(file) + "not a Plan B plugin"));
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

TEST(CliPlugins, EscapesAFailedFilesNameAndReason) {
  CliEnv env;
  const std::string file = env.Write("plugins/libplanb_a\nb.so", "junk\n");
  const ProcessResult r = env.Run({"plugins", "--plugin-dir", env.dir() + "/plugins"});
  EXPECT_EQ(r.exit_code, 0);
  const std::vector<std::string> err = TextLines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_THAT(err[0], HasSubstr("libplanb_a\\nb.so not loaded: "));
}

}  // namespace
}  // namespace planb
