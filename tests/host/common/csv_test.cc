#include "host/common/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/heap_trap.h"

namespace planb {
namespace {

using ::testing::HasSubstr;

using Rows = std::vector<std::vector<std::string>>;

// Every record of `text`, with the line each started on; fails the test on an error.
Rows ReadAll(const std::string& text, std::vector<uint64_t>* lines = nullptr, bool comments = false) {
  std::istringstream in(text);
  CsvReader reader(in, "t.csv");
  reader.SkipCommentLines(comments);
  Rows rows;
  std::vector<std::string_view> fields;
  bool got = false;
  while (true) {
    const Status s = reader.Next(&fields, &got);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok() || !got) break;
    rows.emplace_back(fields.begin(), fields.end());
    if (lines != nullptr) lines->push_back(reader.line());
  }
  return rows;
}

// The error reading `text` (after any good records), or "" when it reads cleanly.
std::string ErrorOf(const std::string& text, size_t max_record_bytes = 16 << 20) {
  std::istringstream in(text);
  CsvReader reader(in, "t.csv", max_record_bytes);
  std::vector<std::string_view> fields;
  bool got = false;
  while (true) {
    const Status s = reader.Next(&fields, &got);
    if (!s.ok()) {
      // The reader stops there: the same error again.
      const Status again = reader.Next(&fields, &got);
      EXPECT_EQ(again.message(), s.message());
      EXPECT_FALSE(got);
      return s.message();
    }
    if (!got) return "";
  }
}

TEST(CsvReader, ReadsPlainRecords) {
  std::vector<uint64_t> lines;
  EXPECT_EQ(ReadAll("a,b,c\n1,2,3\n", &lines), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(lines, (std::vector<uint64_t>{1, 2}));
}

TEST(CsvReader, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  std::vector<uint64_t> lines;
  EXPECT_EQ(ReadAll("\"a,b\",\"say \"\"hi\"\"\",\"x\r\ny\"\n\"p\nq\",z\nlast,1\n", &lines),
            (Rows{{"a,b", "say \"hi\"", "x\r\ny"}, {"p\nq", "z"}, {"last", "1"}}));
  EXPECT_EQ(lines, (std::vector<uint64_t>{1, 3, 5}));  // lines inside quotes count
}

TEST(CsvReader, CrlfLineEndsAndNoFinalNewline) {
  EXPECT_EQ(ReadAll("a,b\r\n1,2\r\n3,4"), (Rows{{"a", "b"}, {"1", "2"}, {"3", "4"}}));
  EXPECT_EQ(ReadAll("a,\"b\""), (Rows{{"a", "b"}}));
  EXPECT_EQ(ReadAll("a,b\r"), (Rows{{"a", "b"}}));
}

TEST(CsvReader, EmptyFields) {
  EXPECT_EQ(ReadAll(",\n,,x\n\"\",\"\"\n"), (Rows{{"", ""}, {"", "", "x"}, {"", ""}}));
  EXPECT_EQ(ReadAll("a,"), (Rows{{"a", ""}}));
}

TEST(CsvReader, SkipsEmptyLinesButNotAnEmptyQuotedField) {
  std::vector<uint64_t> lines;
  EXPECT_EQ(ReadAll("\na\n\r\n\nb\n\"\"\n\n", &lines), (Rows{{"a"}, {"b"}, {""}}));
  EXPECT_EQ(lines, (std::vector<uint64_t>{2, 5, 6}));
  EXPECT_EQ(ReadAll(""), Rows{});
  EXPECT_EQ(ReadAll("\n\n"), Rows{});
}

TEST(CsvReader, CommentLinesOnlyWhenAsked) {
  const std::string text = "# a \"comment, with an odd quote\n#\n1,2\n";
  std::vector<uint64_t> lines;
  EXPECT_EQ(ReadAll(text, &lines, true), (Rows{{"1", "2"}}));
  EXPECT_EQ(lines, (std::vector<uint64_t>{3}));
  EXPECT_THAT(ErrorOf(text), HasSubstr("t.csv:1: a quote inside an unquoted field"));
  EXPECT_EQ(ReadAll("#x,y\n", nullptr, false), (Rows{{"#x", "y"}}));
  EXPECT_EQ(ReadAll("a,#b\n", nullptr, true), (Rows{{"a", "#b"}}));  // only at a record's start
}

TEST(CsvReader, SkipsAUtf8ByteOrderMark) {
  EXPECT_EQ(ReadAll("\xEF\xBB\xBFname,id\nZ\xC3\xBCrich,1\n"), (Rows{{"name", "id"}, {"Z\xC3\xBCrich", "1"}}));
  // Only at the very start.
  EXPECT_EQ(ReadAll("a\n\xEF\xBB\xBF"
                    "b\n"),
            (Rows{{"a"},
                  {"\xEF\xBB\xBF"
                   "b"}}));
}

TEST(CsvReader, RecordsSpanningBlocks) {
  // Fields longer than the reader's 64 KiB block, quoted and not, with a doubled quote on the boundary.
  std::string big(70000, 'x');
  std::string quoted(65535, 'q');
  const std::string text = big + ",\"" + quoted + "\"\"" + "tail\"\n2,3\n";
  const Rows rows = ReadAll(text);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], big);
  EXPECT_EQ(rows[0][1], quoted + "\"tail");
  EXPECT_EQ(rows[1], (std::vector<std::string>{"2", "3"}));
}

TEST(CsvReader, UnterminatedQuoteNamesTheLineItOpens) {
  EXPECT_EQ(ErrorOf("a,b\n1,\"open\nmore\nstill\n"), "t.csv:2: unterminated quoted field (its quote opens here)");
}

TEST(CsvReader, QuoteInsideAnUnquotedField) {
  EXPECT_EQ(ErrorOf("a,b\nx\"y,2\n"), "t.csv:2: a quote inside an unquoted field");
}

TEST(CsvReader, TextAfterAClosingQuote) {
  EXPECT_EQ(ErrorOf("a\n\"x\"y\n"), "t.csv:2: text after a closing quote (a quote inside a field must be doubled)");
  EXPECT_THAT(ErrorOf("\"x\" ,1\n"), HasSubstr("t.csv:1: text after a closing quote"));
}

TEST(CsvReader, LoneCarriageReturn) {
  EXPECT_EQ(ErrorOf("a\rb\n"), "t.csv:1: a CR not followed by LF outside quotes");
  EXPECT_EQ(ErrorOf("a\n\rb\n"), "t.csv:2: a CR not followed by LF outside quotes");
}

TEST(CsvReader, InvalidUtf8NamesLineAndField) {
  EXPECT_EQ(ErrorOf("a,b\nok,bad\xFF\n"), "t.csv:2: invalid UTF-8 in field 2");
  // Halves of one character in two fields are invalid in each.
  EXPECT_EQ(ErrorOf("\xC3,\xA9\n"), "t.csv:1: invalid UTF-8 in field 1");
  EXPECT_EQ(ErrorOf("\"\xED\xA0\x80\"\n"), "t.csv:1: invalid UTF-8 in field 1");  // a surrogate
}

TEST(CsvReader, OverLongRecord) {
  EXPECT_EQ(ErrorOf("short\n" + std::string(200, 'x') + "\n", 100), "t.csv:2: record longer than 100 bytes");
  EXPECT_EQ(ErrorOf("\"" + std::string(200, 'x') + "\"\n", 100), "t.csv:1: record longer than 100 bytes");
  EXPECT_EQ(ErrorOf(std::string(100, 'x') + "\n", 100), "");
}

TEST(CsvReader, FieldsAreViewsReusedAcrossRecords) {
  std::istringstream in("a,b\nc,d\n");
  CsvReader reader(in, "t.csv");
  std::vector<std::string_view> fields;
  bool got = false;
  ASSERT_TRUE(reader.Next(&fields, &got).ok());
  ASSERT_TRUE(got);
  const char* first = fields[0].data();
  ASSERT_TRUE(reader.Next(&fields, &got).ok());
  ASSERT_TRUE(got);
  EXPECT_EQ(fields[0].data(), first);  // the same buffer: nothing allocated per record
  ASSERT_TRUE(reader.Next(&fields, &got).ok());
  EXPECT_FALSE(got);
  EXPECT_TRUE(fields.empty());
}

// Once its buffers have grown to the longest record, the reader allocates nothing per record, block reads
// included: the rest of a 300 KB input (several blocks) is read in a child that cannot allocate.
TEST(CsvReader, AllocatesNothingPerRecordOnceWarm) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  std::string text = "key,value,note\n";
  for (int i = 0; i < 6000; ++i) {
    text += "key-" + std::to_string(i) + ",\"v, \"\"" + std::to_string(i) + "\"\"\",\"line\r\nbreak\"\r\n";
  }
  std::istringstream in(text);
  CsvReader reader(in, "t.csv");
  std::vector<std::string_view> fields;
  fields.reserve(8);
  bool got = false;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(reader.Next(&fields, &got).ok() && got);
  const auto result = testing::RunWithoutHeap([&] {
    int records = 10;
    while (true) {
      if (!reader.Next(&fields, &got).ok()) return 3;
      if (!got) break;
      ++records;
    }
    return records == 6001 && reader.line() == 12000 ? 0 : 4;
  });
  ASSERT_TRUE(result.forked);
  EXPECT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0) << "SIGABRT: an allocation";
  EXPECT_EQ(result.exit_code, 0) << "3: a read error, 4: records or lines miscounted";
}

TEST(AppendCsvField, QuotesOnlyWhenNeeded) {
  auto field = [](std::string_view f) {
    std::string out;
    AppendCsvField(f, &out);
    return out;
  };
  EXPECT_EQ(field("plain"), "plain");
  EXPECT_EQ(field(""), "");
  EXPECT_EQ(field("in side"), "in side");
  EXPECT_EQ(field("a,b"), "\"a,b\"");
  EXPECT_EQ(field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(field("x\ny"), "\"x\ny\"");
  EXPECT_EQ(field("x\ry"), "\"x\ry\"");
  EXPECT_EQ(field(" lead"), "\" lead\"");
  EXPECT_EQ(field("trail "), "\"trail \"");
}

TEST(AppendCsvField, RoundTripsThroughTheReader) {
  std::mt19937 random(17);
  const std::string alphabet = "ab ,\"\r\n\xC3\xA9#";
  Rows expected;
  std::string text;
  for (int r = 0; r < 200; ++r) {
    std::vector<std::string> row;
    const int columns = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < columns; ++c) {
      std::string f;
      const int n = static_cast<int>(random() % 8);
      for (int i = 0; i < n; ++i) {
        const size_t k = random() % (alphabet.size() - 1);
        if (alphabet[k] == '\xC3') {
          f += "\xC3\xA9";
        } else if (alphabet[k] != '\xA9') {
          f += alphabet[k];
        }
      }
      if (c > 0) text += ',';
      AppendCsvField(f, &text);
      row.push_back(f);
    }
    if (row.size() == 1 && row[0].empty()) {
      text += "\"\"";  // a lone empty field must be quoted, or the line is an empty line (skipped)
    }
    text += (r % 2 == 0) ? "\n" : "\r\n";
    expected.push_back(row);
  }
  EXPECT_EQ(ReadAll(text), expected);
}

}  // namespace
}  // namespace planb
