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

// A type's shown fields (kFieldShownByLookup) of every kind cross the wire with each found answer, so that
// lookup --remote prints what the node would.
const FieldSpec kShownFields[] = {
    {"Key", FieldKind::kText, RowField::kKey, kFieldShownByLookup},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup | kFieldZeroWhenAbsent},
    {"Ratio", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Active", FieldKind::kBool, RowField::kOwn, kFieldShownByLookup},
    {"Seen", FieldKind::kDate, RowField::kOwn, kFieldShownByLookup},
    {"Note", FieldKind::kText, RowField::kOwn, kFieldShownByLookup},
    {"Hidden", FieldKind::kNumber, RowField::kOwn},
};

std::string WriteWithFields() {
  PluginDescriptor d;
  d.fields = kShownFields;
  d.field_count = 7;
  LookupShape shape;
  shape.shown = ShownFields(d);
  shape.batches = 7;
  std::ostringstream out;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(LookupFormat::kWire, shape, out);
  FieldValue own[7];
  own[1].number = -3;
  own[2].real = 11498.189;
  own[3].flag = true;
  own[4].number = 1704067200000;
  own[5].text = Bytes(std::string_view("n\0te", 4));
  Row row;
  row.key = Bytes(std::string_view("a"));
  row.value = Bytes(std::string_view("v"));
  row.own_fields = own;
  row.own_field_count = 7;
  writer->Missing("b", 0);
  writer->Found("a", 0, row);
  writer->Finish();
  return out.str();
}

TEST(LookupWire, ShownFieldsRoundTrip) {
  const std::string bytes = WriteWithFields();
  WireAnswers answers;
  Status s = DecodeLookupWire(bytes, 2, &answers);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(answers.shown.size(), 6u);
  EXPECT_EQ(answers.shown[0].name, "key");
  EXPECT_EQ(answers.shown[2].name, "ratio");
  EXPECT_EQ(answers.shown[2].spec.kind, FieldKind::kDouble);
  EXPECT_EQ(answers.shown[2].spec.field, RowField::kOwn);
  EXPECT_EQ(answers.shown[2].index, 2u);
  EXPECT_TRUE(answers.shown[1].zero_when_absent);
  EXPECT_FALSE(answers.shown[5].zero_when_absent);
  ASSERT_EQ(answers.answers.size(), 2u);
  EXPECT_FALSE(answers.answers[0].found);
  ASSERT_TRUE(answers.answers[1].found);
  EXPECT_EQ(answers.answers[1].value, "v");
  const FieldValue* f = answers.fields.data() + answers.answers[1].first_field;
  ASSERT_EQ(answers.fields.size(), 6u);
  EXPECT_EQ(f[0].text.view(), "a");
  EXPECT_EQ(f[1].number, -3);
  EXPECT_EQ(f[2].real, 11498.189);
  EXPECT_TRUE(f[3].flag);
  EXPECT_EQ(f[4].number, 1704067200000);
  EXPECT_EQ(f[5].text.view(), std::string_view("n\0te", 4));
}

TEST(LookupWire, MalformedShownFieldsAreRefused) {
  const std::string bytes = WriteWithFields();
  WireAnswers answers;
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_EQ(DecodeLookupWire(bytes.substr(0, size), 2, &answers).code(), Code::kCorruption) << size;
  }
  const size_t count_at = 4 + 1 + 8;
  const auto patched = [&](size_t at, char byte) {
    std::string b = bytes;
    b[at] = byte;
    return DecodeLookupWire(b, 2, &answers);
  };
  EXPECT_EQ(patched(count_at, 0).code(), Code::kCorruption) << "no fields";
  EXPECT_EQ(patched(count_at, 65).code(), Code::kCorruption) << "too many fields";
  EXPECT_EQ(patched(count_at + 1, 9).code(), Code::kCorruption) << "unknown kind";
  EXPECT_EQ(patched(count_at + 2, 2).code(), Code::kCorruption) << "zero flag neither 0 nor 1";
  EXPECT_EQ(patched(count_at + 3, 0).code(), Code::kCorruption) << "empty name";
  const Status bad_name = patched(count_at + 4, 'K');
  EXPECT_EQ(bad_name.code(), Code::kCorruption);
  EXPECT_NE(bad_name.message().find("shown field 1 has a bad name"), std::string::npos) << bad_name.message();
  std::string session = bytes;
  session[4] |= 1;
  EXPECT_EQ(DecodeLookupWire(session, 2, &answers).code(), Code::kCorruption) << "sessions carry no fields";
  // The boolean, the last byte but the date and the note: 1 + 8 + 4 + 4 bytes from the end.
  EXPECT_EQ(patched(bytes.size() - 17, 2).code(), Code::kCorruption) << "a boolean of 2";
}

}  // namespace
}  // namespace planb
