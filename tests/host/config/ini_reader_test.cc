#include "host/config/ini_reader.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace planb {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

std::vector<IniSection> Read(std::string_view text) {
  std::vector<IniSection> sections;
  const Status status = ReadIni("t.ini", text, &sections);
  EXPECT_TRUE(status.ok()) << status.message();
  return sections;
}

std::string ErrorOf(std::string_view text) {
  std::vector<IniSection> sections;
  const Status status = ReadIni("t.ini", text, &sections);
  EXPECT_FALSE(status.ok()) << text;
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_TRUE(sections.empty());
  return status.message();
}

// Every character of the Z85 alphabet that is not a letter or digit, where the old reader (Boost) cut at '#'.
constexpr std::string_view kZ85Specials = ".-:+=^!/*?&<>()[]{}@%$#";

TEST(ReadIni, ReadsEveryZ85SpecialCharacterExactly) {
  for (char c : kZ85Specials) {
    for (const std::string& value : {std::string(1, c) + "abc", "ab" + std::string(1, c) + "cd",
                                     "abc" + std::string(1, c), std::string(3, c)}) {
      const auto sections = Read("[client.x]\npublic_key = " + value + "\n");
      ASSERT_EQ(sections.size(), 2u);
      EXPECT_EQ(sections[1].entries, (Entries{{"public_key", value}})) << value;
    }
  }
  // A whole key holding all of them, with an inline comment after it.
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  EXPECT_EQ(Read("k = " + key + "  # rotated\n")[0].entries, (Entries{{"k", key}}));
  EXPECT_EQ(Read("k = #" + key + "#\n")[0].entries, (Entries{{"k", "#" + key + "#"}}));
}

TEST(ReadIni, ValueIsEverythingAfterTheFirstEquals) {
  EXPECT_EQ(Read("a = b = c\n")[0].entries, (Entries{{"a", "b = c"}}));
  EXPECT_EQ(Read("a==\n")[0].entries, (Entries{{"a", "="}}));
  EXPECT_EQ(Read("a = \"quoted; not # unquoted\"\n")[0].entries, (Entries{{"a", "\"quoted; not"}}));
  EXPECT_EQ(Read("a = x;y ;z\n")[0].entries, (Entries{{"a", "x;y ;z"}}));
  EXPECT_EQ(Read("a =\n")[0].entries, (Entries{{"a", ""}}));
}

TEST(ReadIni, LoneHashStartsAnInlineComment) {
  EXPECT_EQ(Read("a = /h  # where\n")[0].entries, (Entries{{"a", "/h"}}));
  EXPECT_EQ(Read("a = # none\n")[0].entries, (Entries{{"a", ""}}));
  EXPECT_EQ(Read("a = x\t#\n")[0].entries, (Entries{{"a", "x"}}));
  EXPECT_EQ(Read("a = x #y\n")[0].entries, (Entries{{"a", "x #y"}}));  // not lone: text
  const auto sections = Read("[map.a]   # one section per map\ntype = state\n");
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[1].header, "map.a");
}

TEST(ReadIni, SkipsCommentAndBlankLines) {
  const auto sections = Read("# a comment = with equals\n; another [x]\n   \t\n  #indented\n\n[s]\n ;k = v\nk = v\n");
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_TRUE(sections[0].entries.empty());
  EXPECT_EQ(sections[1].entries, (Entries{{"k", "v"}}));
}

TEST(ReadIni, ReadsCrlfAndBom) {
  const auto sections = Read("\xEF\xBB\xBFhome = /h\r\n[map.a]\r\n\ttype\t=\tstate \r\nk = a#b\r\n");
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[0].entries, (Entries{{"home", "/h"}}));
  EXPECT_EQ(sections[1].entries, (Entries{{"type", "state"}, {"k", "a#b"}}));
  // A BOM anywhere but the start is text (here it makes a key no config knows).
  EXPECT_EQ(Read("a = 1\n\xEF\xBB\xBF" "b = 2\n")[0].entries.back().first, "\xEF\xBB\xBF" "b");
}

TEST(ReadIni, KeepsSectionsInOrderWithRepeatsAndEmptySections) {
  const auto sections = Read("top = 1\n[b]\n[ a.x ]\nk = 1\nk = 2\n[b]\n");
  ASSERT_EQ(sections.size(), 4u);
  EXPECT_EQ(sections[0].entries, (Entries{{"top", "1"}}));
  EXPECT_EQ(sections[1].header, "b");
  EXPECT_TRUE(sections[1].entries.empty());
  EXPECT_EQ(sections[2].header, "a.x");
  EXPECT_EQ(sections[2].entries, (Entries{{"k", "1"}, {"k", "2"}}));
  EXPECT_EQ(sections[3].header, "b");
}

TEST(ReadIni, RefusesMalformedLinesNamingFileAndLine) {
  EXPECT_EQ(ErrorOf("a = 1\njust words\n"), "t.ini: line 2: 'just words' is neither [section] nor key = value");
  EXPECT_EQ(ErrorOf("\n\n= 5\n"), "t.ini: line 3: '= 5' has no key before the '='");
  EXPECT_EQ(ErrorOf("[]\n"), "t.ini: line 1: '[]' is a section with no name");
  EXPECT_EQ(ErrorOf("[ \t]\n"), "t.ini: line 1: '[ \t]' is a section with no name");
  EXPECT_EQ(ErrorOf("a = 1\r\n[map.a\r\n"), "t.ini: line 2: '[map.a' has no closing ']'");
  EXPECT_EQ(ErrorOf("[map.a] x\n"), "t.ini: line 1: '[map.a] x' has no closing ']'");
  EXPECT_EQ(ErrorOf("]\n"), "t.ini: line 1: ']' is neither [section] nor key = value");
  EXPECT_EQ(ErrorOf("a = b\rc\n"), "t.ini: line 1: control character 0x0d at column 6");
  EXPECT_EQ(ErrorOf(std::string("a = \0\n", 6)), "t.ini: line 1: control character 0x00 at column 5");
  EXPECT_EQ(ErrorOf("ok = 1\n# \x1b[31m\n"), "t.ini: line 2: control character 0x1b at column 3");
  EXPECT_EQ(ErrorOf("a = \x7f\n"), "t.ini: line 1: control character 0x7f at column 5");
}

TEST(ReadIni, ReadsTextWithoutTrailingNewlineAndEmptyText) {
  EXPECT_EQ(Read("a = 1")[0].entries, (Entries{{"a", "1"}}));
  const auto empty = Read("");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].entries.empty());
  EXPECT_EQ(Read("\xEF\xBB\xBF").size(), 1u);
}

}  // namespace
}  // namespace planb
