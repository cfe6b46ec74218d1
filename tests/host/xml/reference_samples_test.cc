// ReadReferenceDataFile on the real Stroom samples (shared data, never copied into the repo) and the exact
// fragments it makes of their values.
#include <expat.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

#include "host/xml/reference_reader.h"

#ifndef PLANB_SHARED_DATA_DIR
#define PLANB_SHARED_DATA_DIR "/work/shared/data"
#endif

namespace planb {
namespace {

const std::string kSamples = PLANB_SHARED_DATA_DIR "/stroom-samples";

struct Rec {
  std::string map, key, from, to, value;
  bool has_key = false, has_range = false;
  ValueType type = ValueType::kString;
};

bool SamplesPresent() {
  struct stat st;
  return stat(kSamples.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

#define SKIP_WITHOUT_SAMPLES() \
  if (!SamplesPresent()) GTEST_SKIP() << "Stroom samples not found at " << kSamples

std::vector<Rec> ReadSample(const std::string& file) {
  std::vector<Rec> out;
  Status s = ReadReferenceDataFile(kSamples + "/" + file, 0, [&out](const ParsedRecord& p) {
    Rec r;
    r.map = std::string(p.map);
    r.has_key = p.record.has_key;
    r.key = std::string(p.record.key.view());
    r.has_range = p.record.has_range;
    r.from = std::string(p.record.range_from.view());
    r.to = std::string(p.record.range_to.view());
    r.type = p.record.value_type;
    r.value = std::string(p.record.value.view());
    out.push_back(std::move(r));
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Expanded names ("{uri}local", attributes prefixed "@") of `fragment` parsed on its own, namespace-aware, inside
// an undeclared wrapper; an unbound prefix or any other well-formedness error fails the parse.
struct Reparse {
  bool ok = false;
  std::string error;
  std::vector<std::string> names;
};

std::string Expanded(const char* name) {
  const char* sep = std::strchr(name, '|');
  return sep == nullptr ? std::string(name) : "{" + std::string(name, sep - name) + "}" + std::string(sep + 1);
}

void XMLCALL CollectStart(void* data, const XML_Char* name, const XML_Char** attrs) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  names->push_back(Expanded(name));
  for (const XML_Char** a = attrs; *a != nullptr; a += 2) names->push_back("@" + Expanded(*a));
}

Reparse ReparseFragment(const std::string& fragment) {
  Reparse r;
  const std::string doc = "<w>" + fragment + "</w>";
  XML_Parser p = XML_ParserCreateNS(nullptr, '|');
  XML_SetUserData(p, &r.names);
  XML_SetStartElementHandler(p, &CollectStart);
  r.ok = XML_Parse(p, doc.data(), static_cast<int>(doc.size()), 1) == XML_STATUS_OK;
  if (!r.ok) r.error = XML_ErrorString(XML_GetErrorCode(p));
  XML_ParserFree(p);
  if (r.ok) r.names.erase(r.names.begin());  // the wrapper
  return r;
}

TEST(ReferenceSamples, ReadsEverySampleAndEveryFragmentReparsesAlone) {
  SKIP_WITHOUT_SAMPLES();
  const std::pair<const char*, size_t> kFiles[] = {
      {"BITMAP-REFERENCE_1.xml", 24},      {"IP_RANGE_TO_LOCATION-REFERENCE_1.xml", 5},
      {"input_FastInfosetValue_1.xml", 6}, {"input_FastInfosetValue_3.xml", 6},
      {"input_FastInfosetValue_6.xml", 1}, {"input_FastInfosetValue_7.xml", 1},
      {"input_FastInfosetValue_8.xml", 1}, {"input_StringValue_2.xml", 6},
  };
  for (const auto& [file, count] : kFiles) {
    SCOPED_TRACE(file);
    const std::vector<Rec> recs = ReadSample(file);
    EXPECT_EQ(recs.size(), count);
    for (const Rec& r : recs) {
      if (r.type != ValueType::kXmlFragment) continue;
      const Reparse again = ReparseFragment(r.value);
      EXPECT_TRUE(again.ok) << again.error << " in: " << r.value;
    }
  }
}

TEST(ReferenceSamples, ReadsXml11PrologKeysAndRangesOfIpToLocation) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("IP_RANGE_TO_LOCATION-REFERENCE_1.xml");
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].map, "iptolocation");
  EXPECT_TRUE(recs[0].has_key);
  EXPECT_EQ(recs[0].key, "3232235777");
  EXPECT_EQ(recs[0].type, ValueType::kString);
  EXPECT_EQ(recs[0].value, "Zone1");
  EXPECT_TRUE(recs[2].has_range);
  EXPECT_FALSE(recs[2].has_key);
  EXPECT_EQ(recs[2].from, "3232238337");
  EXPECT_EQ(recs[2].to, "3232239361");
  EXPECT_EQ(recs[4].value, "Zone5");
}

TEST(ReferenceSamples, ReadsIndentedRangesWithStringValues) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_StringValue_2.xml");
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[4].map, "map2");
  EXPECT_EQ(recs[4].from, "11");
  EXPECT_EQ(recs[4].to, "20");
  EXPECT_EQ(recs[4].type, ValueType::kString);
  EXPECT_EQ(recs[4].value, "value22");
}

TEST(ReferenceSamples, DeclaresAPrefixFromTheRootAndDropsTheComment) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_FastInfosetValue_1.xml");
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[0].type, ValueType::kXmlFragment);
  EXPECT_EQ(recs[0].value,
            "<evt:Location xmlns:evt=\"event-logging:3\">\n"
            "                <evt:Room>room11</evt:Room>\n"
            "                <evt:Desk>desk11</evt:Desk>\n"
            "                <evt:Value>value11</evt:Value>\n"
            "            </evt:Location>");
}

TEST(ReferenceSamples, KeepsNonAsciiAttributesOfTheXml11Bitmap) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("BITMAP-REFERENCE_1.xml");
  ASSERT_EQ(recs.size(), 24u);
  EXPECT_EQ(recs[0].map, "greekalphabet");
  EXPECT_EQ(recs[0].key, "0");
  EXPECT_EQ(recs[0].value, "<evt:Data xmlns:evt=\"event-logging:3\" Name=\"\xCE\x91 \xCE\xB1\" Value=\"alpha\"/>");
  EXPECT_EQ(recs[17].value,
            "<evt:Data xmlns:evt=\"event-logging:3\" Name=\"\xCE\xA3 \xCF\x83\xCF\x82\" Value=\"sigma\"/>");
}

TEST(ReferenceSamples, KeepsDeclarationsWrittenInsideAndAddsThoseOfPrefixedAttributes) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_FastInfosetValue_6.xml");
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value,
            "<Location xmlns=\"stroom\" xmlns:s=\"stroom\" xmlns:xxx=\"extra-namespace\">\n"
            "                <s:Room xmlns:yyy=\"another-namespace\" attr1=\"123\" xxx:attr2=\"456\" "
            "yyy:attr3=\"789\">room11</s:Room>\n"
            "                <xxx:Desk>desk11</xxx:Desk>\n"
            "                <xxx:Value>value11</xxx:Value>\n"
            "            </Location>");
  const Reparse again = ReparseFragment(recs[0].value);
  ASSERT_TRUE(again.ok) << again.error;
  const std::vector<std::string> expected = {"{stroom}Location",
                                             "{stroom}Room",
                                             "@attr1",
                                             "@{extra-namespace}attr2",
                                             "@{another-namespace}attr3",
                                             "{extra-namespace}Desk",
                                             "{extra-namespace}Value"};
  EXPECT_EQ(again.names, expected);
}

TEST(ReferenceSamples, AddsTheOuterDefaultNamespaceAndKeepsNestedValueElements) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_FastInfosetValue_7.xml");
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value,
            "<Location xmlns=\"reference-data:2\">\n"
            "                <Room>room11</Room>\n"
            "                <Desk>desk11</Desk>\n"
            "                <Value><value><Value>nestedValue</Value></value></Value>\n"
            "            </Location>");
  const Reparse again = ReparseFragment(recs[0].value);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_EQ(again.names.front(), "{reference-data:2}Location");
  EXPECT_EQ(again.names.back(), "{reference-data:2}Value");
}

TEST(ReferenceSamples, ReadsMixedCaseElementNames) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_FastInfosetValue_8.xml");
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].map, "map1");
  EXPECT_EQ(recs[0].key, "key11");
  EXPECT_EQ(recs[0].value,
            "<Location xmlns=\"reference-data:2\">\n"
            "                <Room>room11</Room>\n"
            "                <Desk>desk11</Desk>\n"
            "                <value>value11</value>\n"
            "            </Location>");
}

TEST(ReferenceSamples, ReadsRangesWithFragmentValues) {
  SKIP_WITHOUT_SAMPLES();
  const std::vector<Rec> recs = ReadSample("input_FastInfosetValue_3.xml");
  ASSERT_EQ(recs.size(), 6u);
  EXPECT_EQ(recs[5].from, "21");
  EXPECT_EQ(recs[5].to, "30");
  EXPECT_EQ(recs[5].type, ValueType::kXmlFragment);
  EXPECT_EQ(recs[5].value.rfind("<evt:Location xmlns:evt=\"event-logging:3\">", 0), 0u) << recs[5].value;
}

}  // namespace
}  // namespace planb
