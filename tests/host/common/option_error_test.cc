// OptionErrorText, and the two parsers that report Boost.Program_options errors through it: a value holding a
// "%placeholder%" of Boost's message template made what() loop forever (found by fuzz/fuzz_config and
// fuzz/fuzz_protocol; the inputs are in fuzz/corpus/*/crash-*). Without the fix these tests never return.
#include "host/common/option_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "host/commands/command_line.h"
#include "host/config/config.h"
#include "host/config/ini_reader.h"

namespace planb {
namespace {

namespace po = boost::program_options;
using ::testing::HasSubstr;

TEST(OptionErrorText, SaysWhatWhatSaysForPlainValues) {
  po::unknown_option error("--colour");
  EXPECT_EQ(OptionErrorText(error), error.what());
}

TEST(OptionErrorText, KeepsAValueHoldingItsOwnPlaceholderAsWritten) {
  po::unknown_option error("--%canonical_option%");
  EXPECT_EQ(OptionErrorText(error), "unrecognised option '--%canonical_option%'");
  po::invalid_config_file_syntax syntax("%invalid_line% %option% 100%", po::invalid_syntax::unrecognized_line);
  EXPECT_THAT(OptionErrorText(syntax), HasSubstr("'%invalid_line% %option% 100%'"));
}

TEST(OptionErrorText, PassesOtherErrorsThrough) {
  po::error error("plain");
  EXPECT_EQ(OptionErrorText(error), "plain");
}

TEST(OptionErrorText, CommandLineWithAPlaceholderInAnOptionIsRefused) {
  // What a peer's READ can carry to a storage node (CheckReadArgs lets it through to ParseCommandLine).
  for (const std::string arg : {"--%canonical_option%", "--%option%", "--x%original_token%", "--%prefix%y"}) {
    CommandLine cli;
    const Status s = ParseCommandLine({"lookup", arg}, &cli);
    ASSERT_FALSE(s.ok()) << arg;
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("'" + arg + "'"));
  }
}

TEST(OptionErrorText, ConfigLineWithAPlaceholderIsRefused) {
  // fuzz/corpus/fuzz_config/crash-percent-placeholder, as fuzz_config found it, and its core: each refused with a
  // message naming the file and quoting the line as written.
  const std::string found = "[apm.cit____%invalid_line%_________________________\\____________________$_a_____y5";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {found, found}, {"%invalid_line%\n", "%invalid_line%"}, {"a = 1\n%option%%value%\n", "%option%%value%"}};
  for (const auto& [text, line] : cases) {
    std::vector<IniSection> sections;
    const Status read = ReadIni("planb.ini", text, &sections);
    ASSERT_FALSE(read.ok()) << text;
    EXPECT_EQ(read.code(), Code::kInvalidArgument);
    EXPECT_THAT(read.message(), HasSubstr("planb.ini"));
    EXPECT_THAT(read.message(), HasSubstr(line));
    Config config;
    const Status parsed = ParseConfig("planb.ini", text, "/etc/planb", &config);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.code(), Code::kInvalidArgument);
    EXPECT_THAT(parsed.message(), HasSubstr(line));
  }
}

}  // namespace
}  // namespace planb
