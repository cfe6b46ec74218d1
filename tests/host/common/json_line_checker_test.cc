// JsonLineChecker: one valid JSON object per line, checked in full, by simdjson and its fallback.
#include "host/common/json_line_checker.h"

#include <gtest/gtest.h>

namespace planb {
namespace {

bool Check(JsonLineChecker& checker, const std::string& line, std::string* why) {
  return checker.Check(line, false, why);
}

TEST(JsonLineChecker, AcceptsObjectsWithAnyValidContent) {
  JsonLineChecker checker;
  std::string why;
  for (const char* good : {"{}", "{\"a\":1.50,\"b\":-0,\"c\":1e2}", "{\"big\":123456789012345678901234567890}",
                           "{\"x\":1e400}", "{\"u\":\"caf\\u00e9 \xF0\x9F\x98\x80\"}", " {\"a\":1} \r"}) {
    EXPECT_TRUE(Check(checker, good, &why)) << good << ": " << why;
  }
}

TEST(JsonLineChecker, RefusesWhatIsNotOneObjectWhereverTheFaultIs) {
  JsonLineChecker checker;
  for (const char* bad : {"", "  ", "[1]", "\"a\"", "1", "{\"a\":1", "{\"a\":1}}", "{\"a\":1} {\"b\":2}",
                          "{\"a\":1,\"never_read\":tru}", "{\"a\":\"\xFF\"}", "{\"a\":\"\xC3\"}",
                          "{\"a\":1,\"b\":[1,2}", "{\"big\":123456789012345678901234567890,\"b\":x}",
                          "{\"a\":\"tab\there\"}"}) {
    std::string why;
    EXPECT_FALSE(Check(checker, bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(JsonLineChecker, FindsValuesInTheParsedDocument) {
  JsonLineChecker checker;
  std::string why;
  ASSERT_TRUE(checker.Check(R"({"a":{"b":"t\u00e9"},"n":1.50,"o":{},"a":{"b":"second"}})", false, &why)) << why;
  ASSERT_TRUE(checker.has_document());
  JsonPath path;
  std::string_view text;
  ASSERT_TRUE(ParseJsonPath("a.b", &path).ok());
  EXPECT_EQ(checker.Find(path, &text), JsonFind::kString);
  EXPECT_EQ(text, "t\xC3\xA9");  // unescaped, and the first of repeated names, as FindJsonValue
  ASSERT_TRUE(ParseJsonPath("n", &path).ok());
  EXPECT_EQ(checker.Find(path, &text), JsonFind::kNumber);
  ASSERT_TRUE(ParseJsonPath("o", &path).ok());
  EXPECT_EQ(checker.Find(path, &text), JsonFind::kOther);
  ASSERT_TRUE(ParseJsonPath("n.x", &path).ok());
  EXPECT_EQ(checker.Find(path, &text), JsonFind::kAbsent);
  // A line only the grammar fallback accepts has no document: callers read the text instead.
  ASSERT_TRUE(checker.Check(R"({"big":123456789012345678901234567890})", false, &why));
  EXPECT_FALSE(checker.has_document());
}

TEST(JsonLineChecker, ReadsOnlyTheLineWhenPadded) {
  JsonLineChecker checker;
  // The bytes after the line (the next line, here) do not count.
  const std::string block = "{\"a\":1}\n{broken" + std::string(JsonLineChecker::Padding(), 'x');
  std::string why;
  EXPECT_TRUE(checker.Check(std::string_view(block.data(), 7), true, &why)) << why;
  EXPECT_FALSE(checker.Check(std::string_view(block.data() + 8, 7), true, &why));
}

}  // namespace
}  // namespace planb
