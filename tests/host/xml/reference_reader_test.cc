#include "host/xml/reference_reader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace planb {
namespace {

constexpr int64_t kEffective = 1700000000000;

// An owned copy of a ParsedRecord (its views die with the callback).
struct Rec {
  std::string map;
  RecordKind kind = RecordKind::kReference;
  bool has_key = false;
  std::string key;
  bool has_range = false;
  std::string from, to;
  bool time_given = false;
  int64_t time_ms = 0;
  bool has_timeout = false;
  int64_t timeout_ms = 0;
  bool has_value = false;
  ValueType type = ValueType::kString;
  std::string value;
  uint64_t line = 0, column = 0;
};

Status Read(const std::string& xml, std::vector<Rec>* out) {
  return ReadReferenceData("doc", xml, kEffective, [out](const ParsedRecord& p) {
    const Record& r = p.record;
    Rec c;
    c.map = std::string(p.map);
    c.kind = r.kind;
    c.has_key = r.has_key;
    c.key = std::string(r.key.view());
    c.has_range = r.has_range;
    c.from = std::string(r.range_from.view());
    c.to = std::string(r.range_to.view());
    c.time_given = r.time_given;
    c.time_ms = r.time_ms;
    c.has_timeout = r.has_timeout;
    c.timeout_ms = r.timeout_ms;
    c.has_value = r.has_value;
    c.type = r.value_type;
    c.value = std::string(r.value.view());
    c.line = p.line;
    c.column = p.column;
    out->push_back(std::move(c));
    return Status::Ok();
  });
}

// The root on line 1, `body` from line 2 column 1, so error positions in the body are easy to read.
std::string Doc(const std::string& body) {
  return "<referenceData xmlns=\"reference-data:2\">\n" + body + "\n</referenceData>";
}

std::vector<Rec> ReadOk(const std::string& xml) {
  std::vector<Rec> out;
  Status s = Read(xml, &out);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Expects kInvalidArgument whose message starts with `position` and mentions `phrase`.
void ExpectError(const std::string& xml, const std::string& position, const std::string& phrase) {
  std::vector<Rec> out;
  Status s = Read(xml, &out);
  ASSERT_FALSE(s.ok()) << xml;
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.message();
  EXPECT_EQ(s.message().rfind(position, 0), 0u) << "message: " << s.message() << "\nwanted prefix: " << position;
  EXPECT_NE(s.message().find(phrase), std::string::npos) << "message: " << s.message() << "\nwanted: " << phrase;
}

TEST(ReferenceReader, ReadsAKeyedReferenceWithAStringValue) {
  auto recs = ReadOk(Doc("<reference><map>Colours</map><key>red</key><value>#f00</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  const Rec& r = recs[0];
  EXPECT_EQ(r.kind, RecordKind::kReference);
  EXPECT_EQ(r.map, "colours");
  EXPECT_TRUE(r.has_key);
  EXPECT_EQ(r.key, "red");
  EXPECT_FALSE(r.has_range);
  EXPECT_FALSE(r.time_given);
  EXPECT_EQ(r.time_ms, kEffective);
  EXPECT_FALSE(r.has_timeout);
  EXPECT_TRUE(r.has_value);
  EXPECT_EQ(r.type, ValueType::kString);
  EXPECT_EQ(r.value, "#f00");
  EXPECT_EQ(r.line, 2u);
  EXPECT_EQ(r.column, 1u);
}

TEST(ReferenceReader, ReadsTimeAsUtcMilliseconds) {
  auto recs =
      ReadOk(Doc("<reference><map>m</map><time> 2024-01-01T09:10:22.5+01:00 </time><key>k</key>"
                 "<value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_TRUE(recs[0].time_given);
  EXPECT_EQ(recs[0].time_ms, 1704067200000 + 29422500);
}

TEST(ReferenceReader, ReadsSessionsWithAndWithoutTimeout) {
  auto recs =
      ReadOk(Doc("<session><map>Logins</map><key>alice</key><time>2024-01-01T00:00:00Z</time>"
                 "<timeout>PT15M</timeout></session>\n"
                 "<session><map>Logins</map><key>bob</key><time>1969-12-31T23:59:59.999Z</time></session>"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, RecordKind::kSession);
  EXPECT_EQ(recs[0].map, "logins");
  EXPECT_EQ(recs[0].key, "alice");
  EXPECT_TRUE(recs[0].time_given);
  EXPECT_EQ(recs[0].time_ms, 1704067200000);
  EXPECT_TRUE(recs[0].has_timeout);
  EXPECT_EQ(recs[0].timeout_ms, 15 * 60000);
  EXPECT_FALSE(recs[0].has_value);
  EXPECT_EQ(recs[1].kind, RecordKind::kSession);
  EXPECT_EQ(recs[1].time_ms, -1);
  EXPECT_FALSE(recs[1].has_timeout);
  EXPECT_EQ(recs[1].line, 3u);
}

TEST(ReferenceReader, MatchesElementNamesCaseInsensitively) {
  auto recs = ReadOk(
      "<REFERENCEDATA xmlns='reference-data:2'><REFERENCE><MAP>M</MAP><KeY>k</KeY><VALUE>v</VALUE></REFERENCE>"
      "<Reference><Map>m</Map><Range><FROM>1</FROM><To>2</To></Range><Value>w</Value></Reference>"
      "<SESSION><map>s</map><KEY>k</KEY><TIME>2024-01-01</TIME><TimeOut>30s</TimeOut></SESSION></REFERENCEDATA>");
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].key, "k");
  EXPECT_EQ(recs[0].value, "v");
  EXPECT_EQ(recs[1].from, "1");
  EXPECT_EQ(recs[1].to, "2");
  EXPECT_EQ(recs[2].kind, RecordKind::kSession);
  EXPECT_EQ(recs[2].timeout_ms, 30000);
}

TEST(ReferenceReader, LowerCasesMapNamesButKeepsKeysExact) {
  auto recs =
      ReadOk(Doc("<reference><map> IPToLocation\xC3\x84 </map><key> Mixed Case </key>"
                 "<value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].map, "iptolocation\xC3\x84");  // ASCII folded, trimmed; UTF-8 bytes untouched
  EXPECT_EQ(recs[0].key, " Mixed Case ");
}

TEST(ReferenceReader, DecodesEntitiesAndCdataInKeysAndValues) {
  auto recs =
      ReadOk(Doc("<reference><map>m</map><key>a&amp;b&lt;c&#x263A;&quot;</key>"
                 "<value><![CDATA[<not> & xml]]> and &gt; more </value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].key, "a&b<c\xE2\x98\xBA\"");
  EXPECT_EQ(recs[0].type, ValueType::kString);
  EXPECT_EQ(recs[0].value, "<not> & xml and > more ");  // a string value is not trimmed
}

TEST(ReferenceReader, ReadsBothRangeFormsTrimmed) {
  auto recs =
      ReadOk(Doc("<reference><map>m</map><range>\n <from> 10 </from>\n <to>20\n</to></range>"
                 "<value>a</value></reference>\n"
                 "<reference><map>m</map><from>30</from><to>40</to><value>b</value></reference>"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_TRUE(recs[0].has_range);
  EXPECT_FALSE(recs[0].has_key);
  EXPECT_EQ(recs[0].from, "10");
  EXPECT_EQ(recs[0].to, "20");
  EXPECT_TRUE(recs[1].has_range);
  EXPECT_EQ(recs[1].from, "30");
  EXPECT_EQ(recs[1].to, "40");
}

TEST(ReferenceReader, PassesRangeTextThroughUnvalidated) {
  auto recs =
      ReadOk(Doc("<reference><map>m</map><range><from>abc</from><to>-5</to></range>"
                 "<value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].from, "abc");
  EXPECT_EQ(recs[0].to, "-5");
}

TEST(ReferenceReader, AcceptsAnXml11Prolog) {
  // Expat reads the 1.1 declaration as is (it applies 1.0 rules), so no rewriting is needed.
  auto recs = ReadOk("<?xml version=\"1.1\" encoding=\"UTF-8\"?>" +
                     Doc("<reference><map>m</map><key>k</key><value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value, "v");
}

TEST(ReferenceReader, ReadsAReferenceWithoutValueForTheStoreTypeToJudge) {
  auto recs = ReadOk(Doc("<reference><map>m</map><key>k</key></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_FALSE(recs[0].has_value);
  EXPECT_EQ(recs[0].value, "");
}

TEST(ReferenceReader, ReadsAnEmptyValueAsAnEmptyString) {
  auto recs =
      ReadOk(Doc("<reference><map>m</map><key>k</key><value/></reference>"
                 "<reference><map>m</map><key>j</key><value>  </value></reference>"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_TRUE(recs[0].has_value);
  EXPECT_EQ(recs[0].type, ValueType::kString);
  EXPECT_EQ(recs[0].value, "");
  EXPECT_EQ(recs[1].value, "  ");
}

TEST(ReferenceReader, IgnoresAttributesCommentsAndWhitespaceAroundStructure) {
  auto recs = ReadOk(
      "<?xml version='1.0'?>\n<!-- head -->\n<referenceData xmlns='reference-data:2' version='2.0.1'>"
      "\n  <!-- c -->\n  <reference id='1'>\n    <map a='b'>m</map><?pi x?>\n    <key>k</key>\n"
      "    <value>v</value>\n  </reference>\n</referenceData>\n");
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].key, "k");
  EXPECT_EQ(recs[0].line, 5u);
  EXPECT_EQ(recs[0].column, 3u);
}

TEST(ReferenceReader, ReturnsHandlerErrorsWithTheRecordPositionAndStops) {
  int calls = 0;
  Status s = ReadReferenceData(
      "in.xml",
      Doc("<reference><map>m</map><key>a</key><value>1</value></reference>\n"
          "  <reference><map>m</map><key>b</key><value>2</value></reference>\n"
          "<reference><map>m</map><key>c</key><value>3</value></reference>"),
      0, [&calls](const ParsedRecord&) { return ++calls == 2 ? Status::NotSupported("store says no") : Status::Ok(); });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_EQ(s.message(), "in.xml:3:3: store says no");
}

TEST(ReferenceReader, TurnsHandlerExceptionsIntoInternalErrors) {
  Status s = ReadReferenceData("doc", Doc("<reference><map>m</map><key>a</key><value>1</value></reference>"), 0,
                               [](const ParsedRecord&) -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("boom"), std::string::npos) << s.message();
}

TEST(ReferenceReader, ReportsAMissingFileAsIOError) {
  Status s = ReadReferenceDataFile("/nonexistent/dir/ref.xml", 0, [](const ParsedRecord&) { return Status(); });
  EXPECT_EQ(s.code(), Code::kIOError);
  EXPECT_NE(s.message().find("/nonexistent/dir/ref.xml"), std::string::npos) << s.message();
}

TEST(ReferenceReaderErrors, ReportsMalformedXmlAtExpatsPosition) {
  ExpectError(Doc("<reference><map>m</map><key>k</key><value>v</reference>"),
              "doc:2:46: ", "malformed XML: mismatched tag");
  ExpectError("<referenceData xmlns='reference-data:2'>\n<reference>", "doc:2:12: ", "malformed XML");
  ExpectError(Doc("<reference><map>m</map><key>a & b</key><value>v</value></reference>"),
              "doc:2:32: ", "malformed XML");
  ExpectError(Doc("<reference><map>m</map><key>&undefined;</key><value>v</value></reference>"),
              "doc:2:29: ", "undefined entity");
  ExpectError("", "doc:1:1: ", "no element found");
  ExpectError(Doc("") + "<extra/>", "doc:3:17: ", "junk after document element");
}

TEST(ReferenceReaderErrors, RefusesAWrongRoot) {
  ExpectError("<?xml version='1.0'?>\n  <root xmlns='reference-data:2'/>", "doc:2:3: ", "root element is <root>");
  ExpectError("<referenceData xmlns='reference-data:1'/>", "doc:1:1: ",
              "root element is <referenceData> (namespace 'reference-data:1'); expected <referenceData> in "
              "namespace reference-data:2");
  ExpectError("<referenceData/>", "doc:1:1: ", "(no namespace)");
  ExpectError("<x:referenceData xmlns:x='other'/>", "doc:1:1: ", "<x:referenceData> (namespace 'other')");
}

TEST(ReferenceReaderErrors, RefusesReferencesMissingChildren) {
  ExpectError(Doc("<reference><key>k</key><value>v</value></reference>"), "doc:2:1: ", "<reference> without <map>");
  ExpectError(Doc("<reference><map>m</map><value>v</value></reference>"),
              "doc:2:1: ", "<reference> without <key> or <range>");
  ExpectError(Doc("<reference><map>m</map><from>1</from><value>v</value></reference>"),
              "doc:2:24: ", "<from> without <to>");
  ExpectError(Doc("<reference><map>m</map><to>1</to><value>v</value></reference>"),
              "doc:2:24: ", "<to> without <from>");
  ExpectError(Doc("<reference><map>m</map><range><from>1</from></range><value>v</value></reference>"),
              "doc:2:24: ", "<range> without <to>");
  ExpectError(Doc("<reference><map>m</map><range><to>1</to></range><value>v</value></reference>"),
              "doc:2:24: ", "<range> without <from>");
}

TEST(ReferenceReaderErrors, RefusesSessionsMissingChildren) {
  ExpectError(Doc("<session><map>m</map><key>k</key></session>"), "doc:2:1: ", "<session> without <time>");
  ExpectError(Doc("<session><map>m</map><time>2024-01-01</time></session>"), "doc:2:1: ", "<session> without <key>");
  ExpectError(Doc("<session><key>k</key><time>2024-01-01</time></session>"), "doc:2:1: ", "<session> without <map>");
}

TEST(ReferenceReaderErrors, RefusesKeyTogetherWithRange) {
  ExpectError(Doc("<reference><map>m</map><key>k</key><range><from>1</from><to>2</to></range>"
                  "<value>v</value></reference>"),
              "doc:2:36: ", "both a <key> and a range");
  ExpectError(Doc("<reference><map>m</map><from>1</from><to>2</to><key>k</key><value>v</value></reference>"),
              "doc:2:48: ", "both a range and a <key>");
  ExpectError(Doc("<reference><map>m</map><from>1</from><range><from>1</from><to>2</to></range>"
                  "<value>v</value></reference>"),
              "doc:2:38: ", "<range> given as well as a bare <from>/<to>");
}

TEST(ReferenceReaderErrors, RefusesEmptyKeysAndMaps) {
  ExpectError(Doc("<reference><map>m</map><key></key><value>v</value></reference>"), "doc:2:24: ", "empty <key>");
  ExpectError(Doc("<reference><map>m</map><key/><value>v</value></reference>"), "doc:2:24: ", "empty <key>");
  ExpectError(Doc("<reference><map> </map><key>k</key><value>v</value></reference>"), "doc:2:12: ", "empty <map>");
}

TEST(ReferenceReaderErrors, RefusesDuplicatedChildren) {
  ExpectError(Doc("<reference><map>m</map><key>a</key><key>b</key><value>v</value></reference>"),
              "doc:2:36: ", "duplicate <key> in <reference>");
  ExpectError(Doc("<reference><map>m</map><key>a</key><value>v</value><VALUE>w</VALUE></reference>"),
              "doc:2:52: ", "duplicate <value>");
  ExpectError(Doc("<session><map>m</map><map>n</map><key>k</key><time>2024-01-01</time></session>"),
              "doc:2:22: ", "duplicate <map> in <session>");
  ExpectError(Doc("<reference><map>m</map><range><from>1</from><from>2</from><to>3</to></range>"
                  "<value>v</value></reference>"),
              "doc:2:45: ", "duplicate <from> in <range>");
  ExpectError(Doc("<reference><map>m</map><time>2024-01-01</time><time>2024-01-01</time><key>k</key>"
                  "<value>v</value></reference>"),
              "doc:2:47: ", "duplicate <time>");
}

TEST(ReferenceReaderErrors, RefusesUnknownElements) {
  ExpectError(Doc("<reference><map>m</map><colour>red</colour></reference>"),
              "doc:2:24: ", "unknown element <colour> in <reference>");
  ExpectError(Doc("<session><map>m</map><key>k</key><value>v</value></session>"),
              "doc:2:34: ", "unknown element <value> in <session>");
  ExpectError(Doc("<reference><map>m</map><timeout>1s</timeout></reference>"),
              "doc:2:24: ", "unknown element <timeout> in <reference>");
  ExpectError(Doc("<references/>"), "doc:2:1: ", "unknown element <references> in <referenceData>");
  ExpectError(Doc("<x:reference xmlns:x='other'/>"),
              "doc:2:1: ", "unknown element <x:reference> (namespace 'other') in <referenceData>");
  ExpectError(Doc("<reference><map>m</map><range><from>1</from><middle/></range></reference>"),
              "doc:2:45: ", "unknown element <middle> in <range>");
  ExpectError(Doc("<reference><map>m</map><key>a<b/></key></reference>"),
              "doc:2:30: ", "<key> must hold only text, found <b>");
  ExpectError(Doc("<reference><map>m</map><range><from>1<i/></from></range></reference>"),
              "doc:2:38: ", "<from> must hold only text");
}

TEST(ReferenceReaderErrors, RefusesStrayText) {
  ExpectError(Doc("<reference><map>m</map>oops<key>k</key><value>v</value></reference>"),
              "doc:2:24: ", "unexpected text 'oops' in <reference>");
  ExpectError(Doc("hello<reference/>"), "doc:2:1: ", "unexpected text 'hello' in <referenceData>");
}

TEST(ReferenceReaderErrors, RefusesUnreadableTimesAndTimeouts) {
  ExpectError(Doc("<reference><map>m</map><time>yesterday</time><key>k</key><value>v</value></reference>"),
              "doc:2:24: ", "unreadable <time> 'yesterday'");
  ExpectError(Doc("<reference><map>m</map><time>2024-02-30T00:00:00Z</time><key>k</key><value>v</value>"
                  "</reference>"),
              "doc:2:24: ", "unreadable <time>");
  ExpectError(Doc("<session><map>m</map><key>k</key><time>2024-01-01</time><timeout>P1M</timeout></session>"),
              "doc:2:57: ", "unreadable <timeout> 'P1M'");
  ExpectError(Doc("<session><map>m</map><key>k</key><time>2024-01-01</time><timeout>-5m</timeout></session>"),
              "doc:2:57: ", "expected a duration");
}

TEST(ReferenceReaderErrors, StopsAtTheFirstErrorWithoutCallingTheHandlerAgain) {
  int calls = 0;
  Status s = ReadReferenceData("doc",
                               Doc("<reference><map>m</map><key>a</key><value>1</value></reference>\n"
                                   "<reference><map>m</map><value>2</value></reference>\n"
                                   "<reference><map>m</map><key>c</key><value>3</value></reference>"),
                               0, [&calls](const ParsedRecord&) {
                                 ++calls;
                                 return Status::Ok();
                               });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.message(), "doc:3:1: <reference> without <key> or <range>");
}

}  // namespace
}  // namespace planb

namespace planb {
namespace {

// A DOCTYPE on line 1 with `subset` as its internal subset (from line 2), the root on the line after it.
std::string WithDtd(const std::string& subset, const std::string& body) {
  return "<!DOCTYPE referenceData [\n" + subset + "\n]>\n" + Doc(body);
}

const char kValueWithEntity[] = "<reference><map>m</map><key>k</key><value>a&e;b</value></reference>";

// Issue 11: entities declared in a DTD were expanded (internal), or silently dropped (external: `a&ext;b`
// loaded as `ab`, a SYSTEM "file:///etc/hostname" as an empty value). Every entity declaration is refused, with
// its position, before any record is read.
TEST(ReferenceReaderErrors, RefusesEveryEntityDeclarationWithItsPosition) {
  // Positions are expat's: a token of the declaration, on its line.
  ExpectError(WithDtd("<!ENTITY e 'inner'>", kValueWithEntity), "doc:2:12: ",
              "entity declaration 'e' in the DTD");
  ExpectError(WithDtd("  <!ENTITY e SYSTEM 'file:///etc/hostname'>", kValueWithEntity), "doc:2:43: ",
              "entities are not supported");
  ExpectError(WithDtd("<!ELEMENT value ANY>\n<!ENTITY e PUBLIC '-//x//y' 'http://example.com/e'>", kValueWithEntity),
              "doc:3:51: ", "entity declaration 'e'");
  ExpectError(WithDtd("<!ENTITY % p SYSTEM 'file:///etc/hostname'>\n%p;", kValueWithEntity), "doc:2:43: ",
              "parameter entity declaration 'p'");
  ExpectError(WithDtd("<!ENTITY % p '<!ENTITY e \"x\">'>\n%p;", kValueWithEntity), "doc:2:14: ",
              "parameter entity declaration 'p'");
  ExpectError(WithDtd("<!ENTITY img SYSTEM 'x.gif' NDATA gif>", "<reference><map>m</map><key>k</key>"
                      "<value>v</value></reference>"), "doc:2:35: ", "entity declaration 'img'");
  // Billion laughs: refused at the first declaration, before anything is expanded.
  std::string laughs = "<!ENTITY l0 'ha'>";
  for (int i = 1; i <= 9; ++i) {
    laughs += "\n<!ENTITY l" + std::to_string(i) + " '";
    for (int j = 0; j < 10; ++j) laughs += "&l" + std::to_string(i - 1) + ";";
    laughs += "'>";
  }
  ExpectError(WithDtd(laughs, "<reference><map>m</map><key>k</key><value>&l9;</value></reference>"), "doc:2:13: ",
              "entity declaration 'l0'");
}

// An external DTD subset (or a parameter entity) is never read, so an entity it might declare would be skipped:
// refused as undefined where it is used.
TEST(ReferenceReaderErrors, RefusesEntitiesAnExternalSubsetWouldDeclare) {
  ExpectError("<!DOCTYPE referenceData SYSTEM 'file:///etc/refdata.dtd'>\n" + Doc(kValueWithEntity), "doc:3:44: ",
              "undefined entity 'e'");
  ExpectError("<!DOCTYPE referenceData SYSTEM 'refdata.dtd' [\n%ext;\n]>\n" + Doc(kValueWithEntity), "doc:5:44: ",
              "undefined entity 'e'");
}

// A DOCTYPE without entity declarations is harmless and accepted (documented in README "Input").
TEST(ReferenceReader, AcceptsADoctypeWithoutEntityDeclarations) {
  auto recs = ReadOk("<!DOCTYPE referenceData>\n" +
                     Doc("<reference><map>m</map><key>k&amp;&#65;</key><value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].key, "k&A");
  recs = ReadOk(WithDtd("<!ELEMENT referenceData ANY>\n<!-- no entities -->",
                        "<reference><map>m</map><key>k</key><value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
  recs = ReadOk("<!DOCTYPE referenceData SYSTEM 'refdata.dtd'>\n" +
                Doc("<reference><map>m</map><key>k</key><value>v</value></reference>"));
  ASSERT_EQ(recs.size(), 1u);
}

}  // namespace
}  // namespace planb
