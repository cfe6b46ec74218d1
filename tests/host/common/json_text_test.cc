// Reading and editing JSON object text in place (host/common/json_text.h): paths, finds, writes, string text.
#include "host/common/json_text.h"

#include <gtest/gtest.h>

namespace planb {
namespace {

JsonPath Path(const std::string& text) {
  JsonPath path;
  EXPECT_TRUE(ParseJsonPath(text, &path).ok()) << text;
  return path;
}

std::string Find(const std::string& json, const std::string& path) {
  std::string_view raw;
  return FindJsonValue(json, Path(path), &raw) ? std::string(raw) : "<absent>";
}

std::string Write(const std::string& json, const std::string& path, const std::string& value,
                  JsonWrite expected) {
  std::string out;
  EXPECT_EQ(WriteJsonValue(json, Path(path), value, &out), expected) << json << " " << path;
  EXPECT_TRUE(IsJsonGrammar(out, true)) << out;
  return out;
}

TEST(JsonPath, SplitsOnDotsAndRefusesEmptyParts) {
  EXPECT_EQ(Path("client.ip").parts, (std::vector<std::string>{"client", "ip"}));
  EXPECT_EQ(Path("ip").parts, (std::vector<std::string>{"ip"}));
  for (const char* bad : {"", ".", "a.", ".a", "a..b"}) {
    JsonPath path;
    const Status s = ParseJsonPath(bad, &path);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string("'") + bad + "' is not a field path"), std::string::npos) << s.message();
  }
}

TEST(JsonPath, ABackslashEscapesADotOrABackslash) {
  EXPECT_EQ(Path(R"(a\.b)").parts, (std::vector<std::string>{"a.b"}));
  EXPECT_EQ(Path(R"(x.a\.b.c)").parts, (std::vector<std::string>{"x", "a.b", "c"}));
  EXPECT_EQ(Path(R"(a\\.b)").parts, (std::vector<std::string>{R"(a\)", "b"}));
  EXPECT_EQ(Path(R"(a\.b)").text, R"(a\.b)");
  for (const std::vector<std::string>& parts :
       {std::vector<std::string>{"a.b"}, {"x", R"(y\)", ".z."}, {"plain", "names"}}) {
    EXPECT_EQ(Path(JsonPathText(parts)).parts, parts) << JsonPathText(parts);
  }
  for (const char* bad : {R"(a\)", R"(a\b)", R"(\)", R"(a.\)", R"(\x.y)"}) {
    JsonPath path;
    const Status s = ParseJsonPath(bad, &path);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("a backslash escapes only a dot or a backslash"), std::string::npos) << s.message();
  }
  EXPECT_EQ(Find(R"({"a.b":1,"a":{"b":2}})", R"(a\.b)"), "1");
  EXPECT_EQ(Find(R"({"a.b":1,"a":{"b":2}})", "a.b"), "2");
}

TEST(JsonText, FindsValuesAsWritten) {
  const std::string json = R"( { "a" : 1.50 , "b":{"c":[1,{"d":2}],"e":"x\"y"}, "big":123456789012345678901234567890 } )";
  EXPECT_EQ(Find(json, "a"), "1.50");
  EXPECT_EQ(Find(json, "b.e"), R"("x\"y")");
  EXPECT_EQ(Find(json, "b.c"), R"([1,{"d":2}])");
  EXPECT_EQ(Find(json, "big"), "123456789012345678901234567890");
  EXPECT_EQ(Find(json, "b"), R"({"c":[1,{"d":2}],"e":"x\"y"})");
  EXPECT_EQ(Find(json, "b.c.d"), "<absent>");  // c is an array, not an object
  EXPECT_EQ(Find(json, "a.x"), "<absent>");
  EXPECT_EQ(Find(json, "zz"), "<absent>");
  EXPECT_EQ(Find("{}", "a"), "<absent>");
}

TEST(JsonText, MatchesEscapedNamesAndTakesTheFirstOfRepeatedOnes) {
  EXPECT_EQ(Find(R"({"cl\u0069ent":{"ip":"1.2.3.4"}})", "client.ip"), R"("1.2.3.4")");
  EXPECT_EQ(Find(R"({"a":1,"a":2})", "a"), "1");
  // A name that only looks like the path inside a string value is not a member.
  EXPECT_EQ(Find(R"({"x":"\"a\":5","a":6})", "a"), "6");
}

TEST(JsonText, ReplacesInsertsAndCreatesParents) {
  EXPECT_EQ(Write(R"({"a":1,"geo":{"country":"x"},"z":-0})", "geo.country", R"("GB")", JsonWrite::kReplaced),
            R"({"a":1,"geo":{"country":"GB"},"z":-0})");
  EXPECT_EQ(Write(R"({"a":1e2})", "geo.country", R"("GB")", JsonWrite::kInserted),
            R"({"a":1e2,"geo":{"country":"GB"}})");
  EXPECT_EQ(Write(R"({"geo":{"city":"c"}})", "geo.country", R"("GB")", JsonWrite::kInserted),
            R"({"geo":{"city":"c","country":"GB"}})");
  EXPECT_EQ(Write("{}", "a.b.c", "1", JsonWrite::kInserted), R"({"a":{"b":{"c":1}}})");
  EXPECT_EQ(Write(R"({ "geo" : { } })", "geo.x", "true", JsonWrite::kInserted), R"({ "geo" : { "x":true} })");
  EXPECT_EQ(Write(R"({"geo":5})", "geo.country", R"("GB")", JsonWrite::kBlocked), R"({"geo":5})");
  EXPECT_EQ(Write(R"({"geo":[{}]})", "geo.country", R"("GB")", JsonWrite::kBlocked), R"({"geo":[{}]})");
  // A replaced object value goes whole.
  EXPECT_EQ(Write(R"({"geo":{"a":[1,2]},"b":2})", "geo", R"("x")", JsonWrite::kReplaced), R"({"geo":"x","b":2})");
}

TEST(JsonText, InsertsAtTheTopLevelEndWithoutReadingMembers) {
  const auto insert = [](const std::string& json, const std::string& path) {
    std::string out;
    InsertAtTopLevelEnd(json, Path(path), "1", &out);
    EXPECT_TRUE(IsJsonGrammar(out, true)) << out;
    return out;
  };
  EXPECT_EQ(insert(R"({"a":{"b":{}}} )", "x.y"), R"({"a":{"b":{}},"x":{"y":1}} )");
  EXPECT_EQ(insert("{ }\r", "x"), "{ \"x\":1}\r");
  EXPECT_EQ(insert(R"( {"s":"}"} )", "x"), R"( {"s":"}","x":1} )");
}

TEST(JsonText, StringTextUnescapes) {
  std::string scratch;
  EXPECT_EQ(JsonStringText(R"("plain")", &scratch), "plain");
  EXPECT_EQ(JsonStringText(R"("a\"b\\c\/d\n\t")", &scratch), "a\"b\\c/d\n\t");
  EXPECT_EQ(JsonStringText(R"("caf\u00e9 \ud83d\ude00")", &scratch), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(JsonStringText(R"("\ud800x")", &scratch), "\xEF\xBF\xBDx");  // a lone surrogate
}

TEST(JsonText, AppendsStringsThatAreAlwaysValidJson) {
  std::string out;
  AppendJsonString("a\"b\\c\n\x01 caf\xC3\xA9", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001 caf\xC3\xA9\"");
  out.clear();
  AppendJsonString("bad \xFF\xC3 end", &out);  // not UTF-8: U+FFFD for each bad byte
  EXPECT_EQ(out, "\"bad \xEF\xBF\xBD\xEF\xBF\xBD end\"");
  out.clear();
  AppendJsonString("\xED\xA0\x80", &out);  // an encoded surrogate is not UTF-8 either
  EXPECT_EQ(out, "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(JsonText, GrammarCheck) {
  for (const char* good : {"{}", " {\"a\":[1,-0,1e2,1.5E-3,true,false,null,\"\\u00e9\"]} ", "{\"a\":{\"b\":{}}}",
                           "{\"n\":123456789012345678901234567890}", "{\"n\":1e400}"}) {
    EXPECT_TRUE(IsJsonGrammar(good, true)) << good;
  }
  for (const char* bad : {"", "[]", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}",
                          "{\"a\":.5}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}",
                          "{\"a\":1} x", "{\"a\":1}{}", "{a:1}", "{\"a\":\"\\u12\"}", "{\"a\":1e}"}) {
    EXPECT_FALSE(IsJsonGrammar(bad, true)) << bad;
  }
  EXPECT_TRUE(IsJsonGrammar("[1]", false));
  EXPECT_FALSE(IsJsonGrammar(std::string(5000, '[') + std::string(5000, ']'), false));  // past the depth bound
}

}  // namespace
}  // namespace planb
