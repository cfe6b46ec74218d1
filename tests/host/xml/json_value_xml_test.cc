// <value type="json">: JSON text in reference-data XML, checked once at load and stored minified as a JSON value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/xml/reference_reader.h"
#include "planb/value_type.h"

namespace planb {
namespace {

struct Seen {
  ValueType type;
  std::string value;
};

Status Read(const std::string& values, std::vector<Seen>* out) {
  const std::string doc = "<referenceData xmlns=\"reference-data:2\">\n" + values + "</referenceData>\n";
  return ReadReferenceData("geo.xml", doc, 0, [out](const ParsedRecord& p) {
    out->push_back(Seen{p.record.value_type, std::string(p.record.value.view())});
    return Status::Ok();
  });
}

std::string Ref(const std::string& value_element) {
  return "<reference><map>geo</map><key>k</key>" + value_element + "</reference>\n";
}

TEST(XmlJsonValue, IsStoredAsJsonWithoutWhiteSpaceBetweenTokens) {
  std::vector<Seen> seen;
  const Status s = Read(Ref("<value type=\"json\">\n  {\"country\": {\"iso_code\": \"GB\"},\n   \"pop\": 1.50,"
                            " \"tags\": [\"a b\", 1e3]}\n</value>") +
                            Ref("<value type=\"json\"><![CDATA[\"x < y & z\"]]></value>") +
                            Ref("<value type=\"json\">  42 </value>") + Ref("<value>{\"a\": 1}</value>"),
                        &seen);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].type, ValueType::kJson);
  EXPECT_EQ(seen[0].value, R"({"country":{"iso_code":"GB"},"pop":1.50,"tags":["a b",1e3]})");
  EXPECT_EQ(seen[1].type, ValueType::kJson);
  EXPECT_EQ(seen[1].value, "\"x < y & z\"");
  EXPECT_EQ(seen[2].value, "42");
  // Without the attribute a value is text, whatever it looks like.
  EXPECT_EQ(seen[3].type, ValueType::kString);
  EXPECT_EQ(seen[3].value, "{\"a\": 1}");
}

TEST(XmlJsonValue, RefusesTextThatIsNotOneJsonValueNamingThePlace) {
  for (const std::string& bad : {std::string("{\"a\": }"), std::string(""), std::string("{} {}"),
                                 std::string("[1, 2"), std::string("'single'")}) {
    std::vector<Seen> seen;
    const Status s = Read(Ref("<value type=\"json\">" + bad + "</value>"), &seen);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("geo.xml:2:"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("<value type=\"json\"> is not one JSON value"), std::string::npos) << s.message();
    EXPECT_TRUE(seen.empty());
  }
}

TEST(XmlJsonValue, RefusesElementsInsideAndUnknownTypes) {
  std::vector<Seen> seen;
  Status s = Read(Ref("<value type=\"json\">{\"a\": <b/>}</value>"), &seen);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("holds JSON text, found element <b>"), std::string::npos) << s.message();
  s = Read(Ref("<value type=\"yaml\">a: 1</value>"), &seen);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("<value type='yaml'>: unknown value type"), std::string::npos) << s.message();
  EXPECT_TRUE(seen.empty());
  // Other attributes change nothing.
  s = Read(Ref("<value lang=\"en\">x</value>"), &seen);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, ValueType::kString);
}

}  // namespace
}  // namespace planb
