// lookup --format wire (lookup_wire.h): what a node writes, the client decodes; anything else is refused.
#include "host/commands/lookup_wire.h"

#include <gtest/gtest.h>

#include <sstream>

namespace planb {
namespace {

std::string Write(LookupShape shape, bool with_missing) {
  std::ostringstream out;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(LookupFormat::kWire, shape, out);
  Row row;
  row.value = Bytes(std::string_view("v\0\n\xff", 4));
  row.session_start_ms = -5;
  row.session_end_ms = 1700000000000;
  writer->Found("a", 0, row);
  if (with_missing) writer->Missing("b", 0);
  writer->Finish();
  return out.str();
}

TEST(LookupWire, ValuesAndSessionsRoundTrip) {
  LookupShape shape;
  shape.batches = 42;
  const std::string values = Write(shape, true);
  WireAnswers answers;
  Status s = DecodeLookupWire(values, 2, &answers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(answers.session);
  EXPECT_EQ(answers.batches, 42u);
  ASSERT_EQ(answers.answers.size(), 2u);
  EXPECT_TRUE(answers.answers[0].found);
  EXPECT_EQ(answers.answers[0].value, std::string_view("v\0\n\xff", 4)) << "every byte, as stored";
  EXPECT_FALSE(answers.answers[1].found);

  shape.session = true;
  shape.number_keys = true;
  const std::string sessions = Write(shape, false);
  s = DecodeLookupWire(sessions, 1, &answers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(answers.session);
  EXPECT_TRUE(answers.number_keys);
  ASSERT_EQ(answers.answers.size(), 1u);
  EXPECT_EQ(answers.answers[0].start_ms, -5);
  EXPECT_EQ(answers.answers[0].end_ms, 1700000000000);
}

TEST(LookupWire, TruncatedExtraOrForeignBytesAreRefused) {
  const std::string bytes = Write(LookupShape(), true);
  WireAnswers answers;
  for (size_t size = 0; size < bytes.size(); ++size) {
    const Status s = DecodeLookupWire(bytes.substr(0, size), 2, &answers);
    EXPECT_EQ(s.code(), Code::kCorruption) << size;
  }
  EXPECT_EQ(DecodeLookupWire(bytes + "x", 2, &answers).code(), Code::kCorruption);
  EXPECT_EQ(DecodeLookupWire(bytes, 3, &answers).code(), Code::kCorruption) << "fewer answers than keys";
  EXPECT_EQ(DecodeLookupWire(bytes, 1, &answers).code(), Code::kCorruption) << "more answers than keys";
  EXPECT_EQ(DecodeLookupWire("Tirana\n", 1, &answers).code(), Code::kCorruption) << "text, from an old node";
  const Status huge = DecodeLookupWire(bytes, size_t{1} << 40, &answers);
  EXPECT_EQ(huge.code(), Code::kCorruption);
  EXPECT_NE(huge.message().find("bytes left for"), std::string::npos) << huge.message();
}

}  // namespace
}  // namespace planb
