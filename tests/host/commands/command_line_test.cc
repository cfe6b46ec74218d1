// The planb command line: ParseCommandLine directly (CliCommandLine), then the same rules through the real
// binary (CliProgram): options anywhere, negative keys, `--`, and the errors for what does not parse.
#include "host/commands/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/plugin.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ProcessResult;
using testing::Ref;
using testing::ReferenceData;
using testing::RunPlanb;
using testing::TempDir;

// The parse of `argv`, which must succeed.
CommandLine Parse(const std::vector<std::string>& argv) {
  CommandLine cli;
  const Status s = ParseCommandLine(argv, &cli);
  EXPECT_TRUE(s.ok()) << s.message();
  return cli;
}

// The message of parsing `argv`, which must fail.
std::string ParseError(const std::vector<std::string>& argv) {
  CommandLine cli;
  const Status s = ParseCommandLine(argv, &cli);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  return s.message();
}

// --- ParseCommandLine ---

TEST(CliCommandLine, ReadsOptionsBeforeThePositionals) {
  const CommandLine cli = Parse({"--home", "H", "--config", "C", "lookup", "m", "k"});
  EXPECT_EQ(cli.command, "lookup");
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "k"}));
  EXPECT_EQ(cli.home, "H");
  EXPECT_EQ(cli.config, "C");
}

TEST(CliCommandLine, ReadsOptionsAfterThePositionals) {
  const CommandLine cli = Parse({"lookup", "m", "k", "--home", "H", "--config", "C"});
  EXPECT_EQ(cli.command, "lookup");
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "k"}));
  EXPECT_EQ(cli.home, "H");
  EXPECT_EQ(cli.config, "C");
}

TEST(CliCommandLine, ReadsOptionsBetweenThePositionals) {
  const CommandLine cli = Parse({"lookup", "--home=H", "m", "--config", "C", "k"});
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "k"}));
  EXPECT_EQ(cli.home, "H");
  EXPECT_EQ(cli.config, "C");
}

TEST(CliCommandLine, CollectsRepeatedPluginDirsInOrder) {
  const CommandLine cli = Parse({"--plugin-dir", "a", "plugins", "--plugin-dir=b"});
  EXPECT_EQ(cli.command, "plugins");
  EXPECT_EQ(cli.plugin_dirs, (std::vector<std::string>{"a", "b"}));
}

TEST(CliCommandLine, TakesANegativeNumberAsAKey) {
  const CommandLine cli = Parse({"lookup", "m", "-5"});
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "-5"}));
  EXPECT_EQ(Parse({"lookup", "-5", "-1.5e3"}).args, (std::vector<std::string>{"-5", "-1.5e3"}));
}

TEST(CliCommandLine, TakesEverythingAfterDoubleDashAsPositional) {
  const CommandLine cli = Parse({"--home", "H", "lookup", "m", "--", "--config"});
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "--config"}));
  EXPECT_EQ(cli.home, "H");
  EXPECT_EQ(cli.config, "");
  EXPECT_EQ(Parse({"lookup", "--", "-h", "--help"}).args, (std::vector<std::string>{"-h", "--help"}));
  EXPECT_FALSE(Parse({"lookup", "--", "-h", "--help"}).help);
}

TEST(CliCommandLine, ReadsEffectiveTimeForLoad) {
  const CommandLine cli = Parse({"load", "a.xml", "b.xml", "--effective-time", "2024-01-01T00:00:00Z"});
  EXPECT_EQ(cli.args, (std::vector<std::string>{"a.xml", "b.xml"}));
  ASSERT_TRUE(cli.effective_time.has_value());
  EXPECT_EQ(*cli.effective_time, "2024-01-01T00:00:00Z");
}

TEST(CliCommandLine, RefusesAnUnknownOptionByName) {
  EXPECT_THAT(ParseError({"lookup", "m", "k", "--bogus"}), HasSubstr("--bogus"));
  EXPECT_THAT(ParseError({"--frobnicate=1", "plugins"}), HasSubstr("--frobnicate"));
}

TEST(CliCommandLine, RefusesAnOptionWithoutItsValue) {
  EXPECT_THAT(ParseError({"lookup", "m", "k", "--home"}), HasSubstr("home"));
}

TEST(CliCommandLine, RefusesACommandOptionOnAnotherCommand) {
  EXPECT_THAT(ParseError({"plugins", "--effective-time", "2024-01-01T00:00:00Z"}),
              HasSubstr("option --effective-time does not apply to 'plugins'"));
}

TEST(CliCommandLine, RefusesTheWrongArgumentCount) {
  EXPECT_THAT(ParseError({"lookup"}), HasSubstr("'lookup' takes MAP KEY..., got 0 argument(s)"));
  EXPECT_EQ(Parse({"lookup", "m", "k", "x"}).args, (std::vector<std::string>{"m", "k", "x"}));
  EXPECT_EQ(*Parse({"lookup", "m", "--keys-from", "-"}).keys_from, "-");
  EXPECT_THAT(ParseError({"query", "m", "--keys-from", "f"}), HasSubstr("--keys-from does not apply to 'query'"));
  EXPECT_THAT(ParseError({"cleanup", "x"}), HasSubstr("'cleanup' takes no arguments, got 1 argument(s)"));
  EXPECT_THAT(ParseError({"load"}), HasSubstr("'load' takes FILE..., got 0 argument(s)"));
  EXPECT_THAT(ParseError({"plugins", "x"}), HasSubstr("'plugins' takes no arguments, got 1 argument(s)"));
}

TEST(CliCommandLine, RefusesAnUnknownCommandByName) {
  EXPECT_THAT(ParseError({"frob", "x"}), HasSubstr("unknown command 'frob'"));
  // A retired name is refused naming the new one, however it is given, and takes its value with it.
  for (const std::vector<std::string>& retired : std::vector<std::vector<std::string>>{
           {"load", "--format", "csv", "--map", "s", "--timeout", "idle", "f.csv"},
           {"load", "--timeout=idle", "f.csv"}}) {
    EXPECT_THAT(ParseError(retired), HasSubstr("option --timeout is now --timeout-column COLUMN"));
  }
  EXPECT_THAT(ParseError({"LOOKUP", "m", "k"}), HasSubstr("unknown command 'LOOKUP'"));
}

TEST(CliCommandLine, RefusesNoCommand) {
  EXPECT_THAT(ParseError({}), HasSubstr("no command given"));
  EXPECT_THAT(ParseError({"--home", "H"}), HasSubstr("no command given"));
}

TEST(CliCommandLine, ReadsHelpAndVersionWithoutACommand) {
  EXPECT_TRUE(Parse({"--help"}).help);
  EXPECT_TRUE(Parse({"-h"}).help);
  EXPECT_EQ(Parse({"--help"}).command, "");
  EXPECT_TRUE(Parse({"--version"}).version);
  const CommandLine cli = Parse({"lookup", "--help"});
  EXPECT_TRUE(cli.help);
  EXPECT_EQ(cli.command, "lookup");
}

TEST(CliCommandLine, TakesDashHAsHelpOnlyBeforeTheCommandsArguments) {
  CommandLine cli;
  ASSERT_TRUE(ParseCommandLine({"--home", "-h", "lookup", "m", "k"}, &cli).ok());
  EXPECT_FALSE(cli.help) << "-h was the value of --home";
  EXPECT_EQ(cli.home, "-h");

  cli = CommandLine();
  ASSERT_TRUE(ParseCommandLine({"lookup", "-h"}, &cli).ok());
  EXPECT_TRUE(cli.help);

  cli = CommandLine();
  ASSERT_TRUE(ParseCommandLine({"lookup", "m", "-h"}, &cli).ok());
  EXPECT_FALSE(cli.help);
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "-h"}));
}

TEST(CliCommandLine, TakesDashHAsTheValueOfAnOptionThatTakesOne) {
  CommandLine cli = Parse({"--home", "-h", "lookup", "m", "-h"});
  EXPECT_FALSE(cli.help);
  EXPECT_EQ(cli.home, "-h");
  EXPECT_EQ(cli.command, "lookup");
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "-h"}));

  cli = Parse({"--config", "-h", "--plugin-dir", "-h", "plugins"});
  EXPECT_FALSE(cli.help);
  EXPECT_EQ(cli.config, "-h");
  EXPECT_EQ(cli.plugin_dirs, std::vector<std::string>{"-h"});
  EXPECT_EQ(cli.command, "plugins");

  cli = Parse({"load", "a.xml", "--effective-time", "-h"});
  EXPECT_FALSE(cli.help);
  ASSERT_TRUE(cli.effective_time.has_value());
  EXPECT_EQ(*cli.effective_time, "-h");

  // An option with its value attached, or one taking none, does not swallow the -h after it.
  EXPECT_TRUE(Parse({"--home=H", "-h"}).help);
  EXPECT_TRUE(Parse({"--home", "H", "lookup", "--config", "C", "-h"}).help);
  EXPECT_TRUE(Parse({"--version", "-h"}).help);
}

TEST(CliCommandLine, TakesDashHAfterTheFirstArgumentAsAnArgument) {
  EXPECT_EQ(Parse({"load", "a.xml", "-h"}).args, (std::vector<std::string>{"a.xml", "-h"}));
  EXPECT_FALSE(Parse({"load", "a.xml", "-h"}).help);
  const CommandLine cli = Parse({"lookup", "--home", "H", "m", "-h"});
  EXPECT_FALSE(cli.help);
  EXPECT_EQ(cli.home, "H");
  EXPECT_EQ(cli.args, (std::vector<std::string>{"m", "-h"}));
  EXPECT_TRUE(Parse({"load", "-h"}).help);
}

TEST(CliCommandLine, ReadsLoadsColumnOptionsAndStdin) {
  const CommandLine cli = Parse({"load", "--format", "csv", "--map", "geo", "--from", "a", "--to", "b", "--time", "t",
                                 "--timeout-column", "o", "--key", "k", "--value", "v", "--value-json", "x,y", "--columns",
                                 "a,b,c", "--comments", "-"});
  EXPECT_EQ(cli.command, "load");
  EXPECT_EQ(cli.args, std::vector<std::string>{"-"});
  EXPECT_EQ(cli.format.value_or(""), "csv");
  EXPECT_EQ(cli.map.value_or(""), "geo");
  EXPECT_EQ(cli.from_column.value_or(""), "a");
  EXPECT_EQ(cli.to_column.value_or(""), "b");
  EXPECT_EQ(cli.time.value_or(""), "t");
  EXPECT_EQ(cli.timeout_column.value_or(""), "o");
  EXPECT_EQ(cli.key_column.value_or(""), "k");
  EXPECT_EQ(cli.value_column.value_or(""), "v");
  EXPECT_EQ(cli.value_json.value_or(""), "x,y");
  EXPECT_EQ(cli.columns.value_or(""), "a,b,c");
  EXPECT_TRUE(cli.comments);
  EXPECT_THAT(ParseError({"lookup", "m", "k", "--key", "x"}), HasSubstr("option --key does not apply to 'lookup'"));
  EXPECT_THAT(ParseError({"load", "f.csv", "--value"}), HasSubstr("value"));
}

TEST(CliCommandLine, UsageTextNamesTheCommandAndTheOptions) {
  const std::string general = UsageText("");
  EXPECT_THAT(general, HasSubstr("Usage: planb [options] COMMAND"));
  for (const char* word : {"load", "lookup", "plugins", "--home", "--config", "--plugin-dir", "--version"}) {
    EXPECT_THAT(general, HasSubstr(word));
  }
  EXPECT_THAT(UsageText("lookup"), HasSubstr("Usage: planb [options] lookup MAP KEY"));
  EXPECT_THAT(UsageText("load"), HasSubstr("Usage: planb [options] load FILE..."));
}

// Issue 11: every `planb COMMAND --help` listed every command's options (load's showed --where and --bind). Each
// command's help lists the global options and its own, and no other command's.
TEST(CliCommandLine, EachCommandsHelpListsOnlyItsOwnOptions) {
  const std::vector<std::string> all = {"--effective-time", "--time",  "--where", "--format", "--limit",
                                        "--explain",        "--keys-from", "--quiet", "--remote", "--bind",
                                        "--ready-file"};
  const std::map<std::string, std::vector<std::string>> own = {
      {"load", {"--effective-time", "--time", "--format"}},
      {"lookup", {"--time", "--keys-from", "--format", "--quiet", "--remote"}},
      {"query", {"--where", "--format", "--limit", "--explain", "--remote"}},
      {"serve", {"--bind", "--ready-file"}},
      {"stores", {"--format"}},
      {"cleanup", {}},
      {"plugins", {"--format"}},
  };
  for (const auto& [command, options] : own) {
    const std::string text = UsageText(command);
    EXPECT_THAT(text, HasSubstr("Usage: planb [options] " + command)) << command;
    for (const char* global : {"--home", "--config", "--plugin-dir", "--help"}) {
      EXPECT_THAT(text, HasSubstr(global)) << command;
    }
    for (const std::string& option : all) {
      const bool listed = text.find(option + " ") != std::string::npos;
      const bool wanted = std::find(options.begin(), options.end(), option) != options.end();
      EXPECT_EQ(listed, wanted) << command << " --help and " << option << ":\n" << text;
    }
  }
  // The general help still lists every command and every option.
  const std::string general = UsageText("");
  for (const std::string& option : all) EXPECT_THAT(general, HasSubstr(option + " "));
}

// --- the real binary ---

// An env with Paris -> France, "-5" -> minus five and "--config" -> dashes in city_to_country.
void LoadDashKeys(const CliEnv& env) {
  const std::string file = env.Write("dash.xml", ReferenceData(Ref("city_to_country", "Paris", "France") + "\n" +
                                                               Ref("city_to_country", "-5", "minus five") + "\n" +
                                                               Ref("city_to_country", "--config", "dashes")));
  const ProcessResult load = env.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
}

TEST(CliProgram, ReadsOptionsAfterThePositionals) {
  CliEnv env;
  LoadDashKeys(env);
  TempDir elsewhere;  // no planb.ini or planb-home here: only the options can find them
  const ProcessResult r = RunPlanb(
      {"lookup", "city_to_country", "Paris", "--home", env.home(), "--config", env.config()}, elsewhere.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "France\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliProgram, LooksUpANegativeNumberKey) {
  CliEnv env;
  LoadDashKeys(env);
  const ProcessResult r = env.Run({"lookup", "city_to_country", "-5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "minus five\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliProgram, LooksUpAKeyThatLooksLikeAnOptionAfterDoubleDash) {
  CliEnv env;
  LoadDashKeys(env);
  const ProcessResult r = env.Run({"lookup", "city_to_country", "--", "--config"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dashes\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliProgram, LooksUpTheKeyDashH) {
  CliEnv env;
  const std::string file = env.Write("dash-h.xml", ReferenceData(Ref("city_to_country", "-h", "dash aitch") + "\n" +
                                                                 Ref("iptolocation", "-h", "direct aitch")));
  const ProcessResult load = env.Load({file});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ProcessResult r = env.Run({"lookup", "city_to_country", "-h"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dash aitch\n");
  EXPECT_EQ(r.err, "");
  r = env.Run({"lookup", "iptolocation", "-h"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "direct aitch\n");

  // As the command's first argument, -h is still help.
  r = env.Run({"lookup", "-h"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Usage: planb [options] lookup MAP KEY"));
  EXPECT_EQ(r.err, "");
}

TEST(CliProgram, RefusesAnUnknownOption) {
  CliEnv env;
  const ProcessResult r = env.Run({"lookup", "city_to_country", "Paris", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--bogus"));
  EXPECT_THAT(r.err, HasSubstr("planb --help"));
  EXPECT_EQ(r.out, "");
}

TEST(CliProgram, RefusesTheWrongArgumentCount) {
  CliEnv env;
  ProcessResult r = env.Run({"lookup"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'lookup' takes MAP KEY..., got 0 argument(s)"));
  EXPECT_EQ(r.out, "");
  r = env.Run({"load"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'load' takes FILE..., got 0 argument(s)"));
  EXPECT_EQ(r.out, "");
}

TEST(CliProgram, RefusesAnUnknownCommand) {
  CliEnv env;
  const ProcessResult r = env.Run({"frob", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frob'"));
  EXPECT_EQ(r.out, "");
}

TEST(CliProgram, RefusesNoCommand) {
  TempDir cwd;
  const ProcessResult r = RunPlanb({}, cwd.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no command given"));
  EXPECT_EQ(r.out, "");
}

TEST(CliProgram, PrintsHelp) {
  TempDir cwd;
  for (const char* flag : {"--help", "-h"}) {
    const ProcessResult r = RunPlanb({flag}, cwd.path());
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_THAT(r.out, HasSubstr("Usage: planb [options] COMMAND")) << flag;
    for (const char* word : {"load", "lookup", "plugins", "--home", "--config", "--plugin-dir"}) {
      EXPECT_THAT(r.out, HasSubstr(word)) << flag;
    }
    EXPECT_EQ(r.err, "") << flag;
  }
  EXPECT_THAT(testing::VisibleEntries(cwd.path()), IsEmpty()) << "--help created files";
}

TEST(CliProgram, PrintsACommandsHelp) {
  TempDir cwd;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"lookup", "--help"}, std::vector<std::string>{"--help", "lookup"},
        std::vector<std::string>{"lookup", "-h"}}) {
    const ProcessResult r = RunPlanb(args, cwd.path());
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[1];
    EXPECT_THAT(r.out, HasSubstr("Usage: planb [options] lookup MAP KEY..."));
    EXPECT_THAT(r.out, HasSubstr("exit 1 when a key is absent"));
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliProgram, PrintsTheVersion) {
  TempDir cwd;
  const ProcessResult r = RunPlanb({"--version"}, cwd.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("planb ") + PLANB_VERSION + " (plugin SDK " + std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor) + ")\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace planb
