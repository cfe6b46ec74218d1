#include "host/xml/xml_fragment_writer.h"

#include <expat.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/xml/reference_reader.h"

namespace planb {
namespace {

// The value of the single <reference> in a document whose root is `root_open` (without its '>').
std::string ValueOf(const std::string& root_open, const std::string& value, ValueType* type = nullptr) {
  const std::string root_name = root_open.substr(1, root_open.find(' ') - 1);
  const std::string p = root_name.find(':') == std::string::npos ? "" : root_name.substr(0, root_name.find(':') + 1);
  const std::string doc = root_open + "><" + p + "reference><" + p + "map>m</" + p + "map><" + p + "key>k</" + p +
                          "key>" + value + "</" + p + "reference></" + root_name + ">";
  std::string out;
  Status s = ReadReferenceData("doc", doc, 0, [&](const ParsedRecord& r) {
    out = std::string(r.record.value.view());
    if (type != nullptr) *type = r.record.value_type;
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message() << "\n" << doc;
  return out;
}

const std::string kRoot = "<referenceData xmlns='reference-data:2'";

bool ParsesAlone(const std::string& fragment) {
  const std::string doc = "<w>" + fragment + "</w>";
  XML_Parser p = XML_ParserCreateNS(nullptr, '|');
  const bool ok = XML_Parse(p, doc.data(), static_cast<int>(doc.size()), 1) == XML_STATUS_OK;
  XML_ParserFree(p);
  return ok;
}

TEST(XmlFragmentWriter, SplitsExpatNames) {
  const ExpatName full = SplitExpatName("urn:x\x01local\x01p");
  EXPECT_EQ(full.uri, "urn:x");
  EXPECT_EQ(full.local, "local");
  EXPECT_EQ(full.prefix, "p");
  const ExpatName no_prefix = SplitExpatName("urn:x\x01local");
  EXPECT_EQ(no_prefix.uri, "urn:x");
  EXPECT_EQ(no_prefix.local, "local");
  EXPECT_EQ(no_prefix.prefix, "");
  const ExpatName bare = SplitExpatName("local");
  EXPECT_EQ(bare.uri, "");
  EXPECT_EQ(bare.local, "local");
}

TEST(XmlFragmentWriter, EscapesTextAndAttributesAndWritesEmptyElementsShort) {
  XmlFragmentWriter w;
  w.Reset(" a<b ");
  const char* attrs[] = {"q", "say \"hi\" & <go>\n\tnow\r", nullptr};
  const char* none[] = {nullptr};
  w.StartElement("e", attrs, {});
  w.Text("x & y > z ]]> \r");
  w.StartElement("empty", none, {});
  w.EndElement();
  w.EndElement();
  w.Text("\n  ");
  EXPECT_EQ(w.Finish(),
            "a&lt;b <e q=\"say &quot;hi&quot; &amp; &lt;go&gt;&#10;&#9;now&#13;\">x &amp; y &gt; z ]]&gt; &#13;"
            "<empty/></e>");
  EXPECT_TRUE(ParsesAlone(std::string(w.Finish())));
}

TEST(XmlFragmentWriter, StartsAfreshOnReset) {
  XmlFragmentWriter w;
  const char* none[] = {nullptr};
  w.Reset("");
  w.StartElement("urn:a\x01x\x01p", none, {});
  w.EndElement();
  EXPECT_EQ(w.Finish(), "<p:x xmlns:p=\"urn:a\"/>");
  w.Reset("t");
  w.StartElement("urn:a\x01y\x01p", none, {});
  w.EndElement();
  EXPECT_EQ(w.Finish(), "t<p:y xmlns:p=\"urn:a\"/>");  // the old binding is gone with the old fragment
}

TEST(XmlFragment, IsUsedOnlyWhenTheValueHasChildElements) {
  ValueType type = ValueType::kXmlFragment;
  EXPECT_EQ(ValueOf(kRoot, "<value> plain &amp; text </value>", &type), " plain & text ");
  EXPECT_EQ(type, ValueType::kString);
  EXPECT_EQ(ValueOf(kRoot, "<value>\n  <a/>\n</value>", &type), "<a xmlns=\"reference-data:2\"/>");
  EXPECT_EQ(type, ValueType::kXmlFragment);
}

TEST(XmlFragment, KeepsMixedContentAndTrimsOnlyTheEnds) {
  const std::string v = ValueOf(kRoot, "<value>\n  Hello <b>big</b>  world &amp; &lt;more&gt;\n</value>");
  EXPECT_EQ(v, "Hello <b xmlns=\"reference-data:2\">big</b>  world &amp; &lt;more&gt;");
  EXPECT_TRUE(ParsesAlone(v));
}

TEST(XmlFragment, WritesCdataAsEscapedText) {
  const std::string v = ValueOf(kRoot, "<value><x><![CDATA[a < b && c]]></x></value>");
  EXPECT_EQ(v, "<x xmlns=\"reference-data:2\">a &lt; b &amp;&amp; c</x>");
}

TEST(XmlFragment, DropsCommentsAndProcessingInstructions) {
  const std::string v = ValueOf(kRoot, "<value><!-- c --><a><?pi data?>t<!-- d --></a><?pi2?></value>");
  EXPECT_EQ(v, "<a xmlns=\"reference-data:2\">t</a>");
}

TEST(XmlFragment, DeclaresPrefixesDeclaredOnTheRootOrOnValue) {
  EXPECT_EQ(ValueOf(kRoot + " xmlns:e='urn:e'", "<value><e:a><e:b/></e:a></value>"),
            "<e:a xmlns:e=\"urn:e\"><e:b/></e:a>");
  EXPECT_EQ(ValueOf(kRoot, "<value xmlns:e='urn:e'><e:a/><e:b/></value>"),
            "<e:a xmlns:e=\"urn:e\"/><e:b xmlns:e=\"urn:e\"/>");
}

TEST(XmlFragment, DeclaresNamespacesOfPrefixedAttributesOnly) {
  const std::string v = ValueOf(kRoot + " xmlns:e='urn:e'", "<value><a plain='1' e:q='2'/></value>");
  EXPECT_EQ(v, "<a xmlns=\"reference-data:2\" xmlns:e=\"urn:e\" plain=\"1\" e:q=\"2\"/>");
  EXPECT_TRUE(ParsesAlone(v));
}

TEST(XmlFragment, NeverDeclaresTheXmlPrefix) {
  EXPECT_EQ(ValueOf(kRoot, "<value><a xml:lang='en'/></value>"), "<a xmlns=\"reference-data:2\" xml:lang=\"en\"/>");
}

TEST(XmlFragment, LeavesNoNamespaceElementsUndeclaredWhenTheRootUsesAPrefix) {
  EXPECT_EQ(ValueOf("<rd:referenceData xmlns:rd='reference-data:2'", "<rd:value><a><b/></a></rd:value>"),
            "<a><b/></a>");
  EXPECT_EQ(ValueOf("<rd:referenceData xmlns:rd='reference-data:2'", "<rd:value><rd:a/></rd:value>"),
            "<rd:a xmlns:rd=\"reference-data:2\"/>");
}

TEST(XmlFragment, KeepsDeclarationsWrittenInsideIncludingUndeclaringTheDefault) {
  const std::string v = ValueOf(kRoot, "<value><a xmlns='urn:a'><b xmlns=''><c/></b><d/></a></value>");
  EXPECT_EQ(v, "<a xmlns=\"urn:a\"><b xmlns=\"\"><c/></b><d/></a>");
  EXPECT_TRUE(ParsesAlone(v));
}

TEST(XmlFragment, RedeclaresAPrefixBoundDifferentlyInside) {
  // p is rebound inside the value; the sibling outside that scope needs the outer binding declared again.
  const std::string v =
      ValueOf(kRoot + " xmlns:p='urn:outer'", "<value><w><p:a xmlns:p='urn:inner'/><p:b/></w></value>");
  EXPECT_EQ(v, "<w xmlns=\"reference-data:2\"><p:a xmlns:p=\"urn:inner\"/><p:b xmlns:p=\"urn:outer\"/></w>");
}

TEST(XmlFragment, ReturnsToTheOuterDefaultAfterAnInnerOne) {
  // <x> is in reference-data:2 (declared outside); the fragment writer must not leave it in urn:a.
  const std::string v = ValueOf(kRoot, "<value><a xmlns='urn:a'/><x/></value>");
  EXPECT_EQ(v, "<a xmlns=\"urn:a\"/><x xmlns=\"reference-data:2\"/>");
}

TEST(XmlFragment, TracksNestedValueElements) {
  const std::string v = ValueOf(kRoot, "<value><value><VALUE>in</VALUE></value></value>");
  EXPECT_EQ(v, "<value xmlns=\"reference-data:2\"><VALUE>in</VALUE></value>");
}

TEST(XmlFragment, KeepsNonAsciiTextAsUtf8) {
  const std::string v = ValueOf(kRoot, "<value><a t='\xCE\xA9'>caf\xC3\xA9 &#x263A;</a></value>");
  EXPECT_EQ(v, "<a xmlns=\"reference-data:2\" t=\"\xCE\xA9\">caf\xC3\xA9 \xE2\x98\xBA</a>");
}

TEST(XmlFragment, ConvertsOtherInputEncodingsToUtf8) {
  const std::string doc = "<?xml version='1.0' encoding='ISO-8859-1'?>" + kRoot +
                          "><reference><map>m</map><key>caf\xE9</key><value><a>\xE9</a></value></reference>"
                          "</referenceData>";
  std::string key, value;
  Status s = ReadReferenceData("doc", doc, 0, [&](const ParsedRecord& r) {
    key = std::string(r.record.key.view());
    value = std::string(r.record.value.view());
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(key, "caf\xC3\xA9");
  EXPECT_EQ(value, "<a xmlns=\"reference-data:2\">\xC3\xA9</a>");
}

}  // namespace
}  // namespace planb
