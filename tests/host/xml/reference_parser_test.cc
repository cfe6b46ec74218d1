// Streaming: arbitrary piece boundaries (ReferenceParser fed directly), files larger than the read chunk, and a
// large generated document.
#include "host/xml/reference_parser.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "host/xml/reference_reader.h"

namespace planb {
namespace {

// One line per record holding every field, so two reads can be compared exactly.
std::string Describe(const ParsedRecord& p) {
  const Record& r = p.record;
  std::string s = std::to_string(p.line) + ":" + std::to_string(p.column) + " " + std::string(p.map) + " " +
                  std::to_string(static_cast<int>(r.kind));
  s += r.has_key ? " key=" + std::string(r.key.view()) : " nokey";
  if (r.has_range) s += " range=" + std::string(r.range_from.view()) + ".." + std::string(r.range_to.view());
  s += " t=" + std::to_string(r.time_ms) + (r.time_given ? "!" : "");
  if (r.has_timeout) s += " timeout=" + std::to_string(r.timeout_ms);
  if (r.has_value) s += " " + std::string(ValueTypeName(r.value_type)) + "=" + std::string(r.value.view());
  return s;
}

RecordHandler Collector(std::vector<std::string>* out) {
  return [out](const ParsedRecord& p) {
    out->push_back(Describe(p));
    return Status::Ok();
  };
}

// Feeds `xml` to a ReferenceParser `piece` bytes at a time.
Status FeedInPieces(const std::string& xml, size_t piece, std::vector<std::string>* out) {
  const RecordHandler handler = Collector(out);
  ReferenceParser parser("doc", 7, handler);
  for (size_t at = 0; at < xml.size(); at += piece) {
    PLANB_RETURN_IF_ERROR(parser.Feed(xml.data() + at, std::min(piece, xml.size() - at), false));
  }
  return parser.Feed(nullptr, 0, true);
}

// `n` records of every shape, with multibyte UTF-8 throughout. Record i starts line LineOf(i), column 1.
std::string Generate(int n) {
  std::string doc =
      "<?xml version=\"1.1\" encoding=\"UTF-8\"?>\n"
      "<referenceData xmlns=\"reference-data:2\" xmlns:evt=\"event-logging:3\">\n";
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i);
    switch (i % 5) {
      case 0:
        doc += "<reference><map>Карта</map><key>ключ-" + id + "</key><value>значение ☺ " + id +
               " &amp; &#x1F600;</value></reference>\n";
        break;
      case 1:
        doc += "<Reference><MAP>Ranges</MAP><range><from>" + id + "</from><to>" + std::to_string(i + 1) +
               "</to></range><value><evt:Data Name=\"Ω " + id + "\"><![CDATA[<é>]]></evt:Data></value></Reference>\n";
        break;
      case 2:
        doc += "<session><map>Logins</map><key>user-ü-" + id + "</key><time>2024-01-01T00:00:00." +
               std::to_string(i % 1000 + 1000).substr(1) + "Z</time><timeout>PT15M</timeout></session>\n";
        break;
      case 3:
        doc += "<reference><map>Bare</map><time>1969-12-31</time><from> " + id + " </from><to>" + id +
               "</to><value>\n  <!-- c --> <a>ä</a> <b xmlns=\"urn:b\" x=\"&quot;\"/> </value></reference>\n";
        break;
      default:
        doc += "<reference><map>m</map><key>k" + id + "</key><value/></reference>\n";
        break;
    }
  }
  return doc + "</referenceData>\n";
}

// Every fifth record's value spans two lines.
uint64_t LineOf(int i) { return 3 + i + (i + 1) / 5; }

TEST(ReferenceParser, GivesTheSameRecordsWhateverThePieceSize) {
  const std::string doc = Generate(40);
  std::vector<std::string> whole;
  ASSERT_TRUE(ReadReferenceData("doc", doc, 7, Collector(&whole)).ok());
  ASSERT_EQ(whole.size(), 40u);
  for (size_t piece : {1, 2, 3, 5, 7, 64, 1000}) {
    SCOPED_TRACE(piece);
    std::vector<std::string> pieces;
    Status s = FeedInPieces(doc, piece, &pieces);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(pieces, whole);
  }
}

TEST(ReferenceParser, ReportsTheSameErrorWhateverThePieceSize) {
  const std::string doc = Generate(12) + "<late/>";  // junk after the root, on line 2 + 12 + 2 (values) + 2
  std::vector<std::string> ignored;
  const Status whole = ReadReferenceData("doc", doc, 7, Collector(&ignored));
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.message().find("doc:18:1: malformed XML"), std::string::npos) << whole.message();
  for (size_t piece : {1, 3, 17}) {
    ignored.clear();
    const Status s = FeedInPieces(doc, piece, &ignored);
    EXPECT_EQ(s.message(), whole.message()) << piece;
    EXPECT_EQ(ignored.size(), 12u);
  }
}

TEST(ReferenceParser, KeepsReturningTheFirstError) {
  std::vector<std::string> ignored;
  const RecordHandler handler = Collector(&ignored);
  ReferenceParser parser("doc", 0, handler);
  const std::string bad = "<wrong/>";
  const Status first = parser.Feed(bad.data(), bad.size(), false);
  ASSERT_FALSE(first.ok());
  const Status again = parser.Feed("<x/>", 4, true);
  EXPECT_EQ(again.message(), first.message());
  EXPECT_NE(first.message().find("root element is <wrong>"), std::string::npos) << first.message();
}

TEST(ReferenceParser, StreamsTwoHundredThousandRecordsFromMemoryAndFromAFile) {
  constexpr int kRecords = 200000;
  const std::string doc = Generate(kRecords);
  // The file read uses 64 KiB chunks; make sure some chunk boundary falls inside a multibyte character.
  bool splits_a_character = false;
  for (size_t at = 65536; at < doc.size(); at += 65536) {
    splits_a_character |= (static_cast<unsigned char>(doc[at]) & 0xC0) == 0x80;
  }
  ASSERT_TRUE(splits_a_character);

  std::vector<std::string> from_memory;
  Status s = ReadReferenceData("doc", doc, 7, Collector(&from_memory));
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(from_memory.size(), static_cast<size_t>(kRecords));
  EXPECT_EQ(from_memory[0], "3:1 Карта 1 key=ключ-0 t=7 string=значение ☺ 0 & \xF0\x9F\x98\x80");
  EXPECT_EQ(from_memory[kRecords - 1], std::to_string(LineOf(kRecords - 1)) + ":1 m 1 key=k199999 t=7 string=");
  EXPECT_EQ(from_memory[3],
            "6:1 bare 1 nokey range=3..3 t=-86400000! xml=<a xmlns=\"reference-data:2\">ä</a> "
            "<b xmlns=\"urn:b\" x=\"&quot;\"/>");
  EXPECT_EQ(from_memory[kRecords - 4], std::to_string(LineOf(kRecords - 4)) +
                                           ":1 ranges 1 nokey range=199996..199997 t=7 xml=<evt:Data "
                                           "xmlns:evt=\"event-logging:3\" Name=\"Ω 199996\">&lt;é&gt;</evt:Data>");

  const std::string path = testing::TempDir() + "/planb_reference_stream_" + std::to_string(getpid()) + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(doc.data(), 1, doc.size(), f), doc.size());
  ASSERT_EQ(std::fclose(f), 0);
  std::vector<std::string> from_file;
  s = ReadReferenceDataFile(path, 7, Collector(&from_file));
  std::remove(path.c_str());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(from_file, from_memory);
}

TEST(ReferenceParser, NamesTheFileInErrors) {
  const std::string path = testing::TempDir() + "/planb_reference_bad_" + std::to_string(getpid()) + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string doc = "<referenceData xmlns='reference-data:2'>\n <reference><map>m</map></reference>";
  std::fwrite(doc.data(), 1, doc.size(), f);
  std::fclose(f);
  std::vector<std::string> ignored;
  const Status s = ReadReferenceDataFile(path, 0, Collector(&ignored));
  std::remove(path.c_str());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), path + ":2:2: <reference> without <key> or <range>");
}

}  // namespace
}  // namespace planb
