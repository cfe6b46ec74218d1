// READ format 6 (lookup_answers.h), what the Reader's remote mode reads: every answer kind round-trips with every
// own field kind, and truncated, extended or altered bytes are refused naming what is wrong.
#include "host/commands/lookup_answers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace planb {
namespace {

using ::testing::HasSubstr;

// A type with a value, session bounds and one own field of each kind, between standard fields.
const FieldSpec kFields[] = {
    {"Key", FieldKind::kText, RowField::kKey, 0},       {"Label", FieldKind::kText, RowField::kOwn, 0},
    {"Count", FieldKind::kNumber, RowField::kOwn, 0},   {"Value", FieldKind::kText, RowField::kValue, 0},
    {"Seen", FieldKind::kDate, RowField::kOwn, 0},      {"Ratio", FieldKind::kDouble, RowField::kOwn, 0},
    {"Fresh", FieldKind::kBool, RowField::kOwn, 0},     {"Where", FieldKind::kAddress, RowField::kOwn, 0},
};

PluginDescriptor Type() {
  PluginDescriptor d;
  d.name = "fielded";
  d.fields = kFields;
  d.field_count = 8;
  return d;
}

std::string Write(const PluginDescriptor& type) {
  std::ostringstream out;
  LookupShape shape;
  shape.type = &type;
  shape.batches = 77;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(LookupFormat::kAnswers, shape, out);
  FieldValue own[8];
  own[1].text = Bytes(std::string_view("lbl"));
  own[2].number = -3;
  own[4].number = 1700000000123;
  own[5].real = 0.25;
  own[6].flag = true;
  own[7].number = 42;
  Row row;
  row.value = Bytes(std::string_view("v\0\xff", 3));
  row.value_type = ValueType::kJson;
  row.session_start_ms = -5;
  row.session_end_ms = 0;
  row.own_fields = own;
  row.own_field_count = 8;
  writer->Found("a", 0, row);
  writer->Missing("b", 0);
  EXPECT_TRUE(writer->Refuse("c", 0, Code::kInvalidArgument, "lookup key 'c' is not an IP address"));
  writer->Finish();
  return out.str();
}

TEST(LookupAnswers, EveryAnswerKindAndFieldKindRoundTrips) {
  const PluginDescriptor type = Type();
  const std::string bytes = Write(type);
  LookupAnswers answers;
  const Status s = DecodeLookupAnswers(bytes, 3, &answers);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(answers.no_data);
  EXPECT_EQ(answers.batches, 77u);
  ASSERT_EQ(answers.own.size(), 6u);
  EXPECT_EQ(answers.own[0].position, 1);
  EXPECT_EQ(answers.own[5].position, 7);
  EXPECT_EQ(answers.own[5].kind, FieldKind::kAddress);
  ASSERT_EQ(answers.answers.size(), 3u);
  const LookupAnswer& found = answers.answers[0];
  EXPECT_EQ(found.kind, LookupAnswer::Kind::kFound);
  EXPECT_EQ(found.value, std::string_view("v\0\xff", 3));
  EXPECT_EQ(found.value_type, ValueType::kJson);
  EXPECT_EQ(found.start_ms, -5);
  EXPECT_EQ(found.end_ms, 0);
  const FieldValue* f = answers.fields.data() + found.first_field;
  EXPECT_EQ(f[0].text.view(), "lbl");
  EXPECT_EQ(f[1].number, -3);
  EXPECT_EQ(f[2].number, 1700000000123);
  EXPECT_EQ(f[3].real, 0.25);
  EXPECT_TRUE(f[4].flag);
  EXPECT_EQ(f[5].number, 42);
  EXPECT_EQ(answers.answers[1].kind, LookupAnswer::Kind::kAbsent);
  EXPECT_EQ(answers.answers[2].kind, LookupAnswer::Kind::kRefused);
  EXPECT_EQ(answers.answers[2].code, Code::kInvalidArgument);
  EXPECT_EQ(answers.answers[2].message, "lookup key 'c' is not an IP address");
}

TEST(LookupAnswers, NoDataIsTheHeaderAlone) {
  std::ostringstream out;
  WriteNoDataAnswers(out);
  LookupAnswers answers;
  ASSERT_TRUE(DecodeLookupAnswers(out.str(), 5, &answers).ok());
  EXPECT_TRUE(answers.no_data);
  EXPECT_TRUE(answers.answers.empty());
  EXPECT_EQ(DecodeLookupAnswers(out.str() + "x", 5, &answers).code(), Code::kCorruption);
}

TEST(LookupAnswers, TruncatedExtraOrAlteredBytesAreRefused) {
  const PluginDescriptor type = Type();
  const std::string bytes = Write(type);
  LookupAnswers answers;
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_EQ(DecodeLookupAnswers(bytes.substr(0, size), 3, &answers).code(), Code::kCorruption) << size;
  }
  EXPECT_EQ(DecodeLookupAnswers(bytes + "x", 3, &answers).code(), Code::kCorruption);
  EXPECT_EQ(DecodeLookupAnswers(bytes, 4, &answers).code(), Code::kCorruption) << "fewer answers than keys";
  EXPECT_EQ(DecodeLookupAnswers(bytes, 2, &answers).code(), Code::kCorruption) << "more answers than keys";
  EXPECT_EQ(DecodeLookupAnswers("Tirana\n", 1, &answers).code(), Code::kCorruption) << "text";
  // Header: magic, flags, version (8), own count, then 6 x (position, kind).
  const auto altered = [&](size_t at, char to) {
    std::string b = bytes;
    b[at] = to;
    return DecodeLookupAnswers(b, 3, &answers);
  };
  EXPECT_THAT(altered(0, 'X').message(), HasSubstr("does not start with its header"));
  EXPECT_THAT(altered(4, 2).message(), HasSubstr("unknown flags 2"));
  EXPECT_THAT(altered(13, 65).message(), HasSubstr("65 own fields"));
  EXPECT_THAT(altered(15, 7).message(), HasSubstr("kind 7"));
  EXPECT_THAT(altered(16, 0).message(), HasSubstr("does not follow the one before"));
  const size_t first_answer = 14 + 12;
  EXPECT_THAT(altered(first_answer, 3).message(), HasSubstr("answer 1 has marker 3"));
  EXPECT_THAT(altered(first_answer + 1, 4).message(), HasSubstr("answer 1 has value type 4"));
  // A boolean field that is neither 0 nor 1: after the value (4 + 3 bytes), bounds (16), text (4 + 3), three i64.
  const size_t flag = first_answer + 2 + 4 + 3 + 16 + 4 + 3 + 8 + 8 + 8;
  ASSERT_EQ(bytes[flag], 1);
  EXPECT_THAT(altered(flag, 2).message(), HasSubstr("is malformed or cut short"));
  // The refusal's code: 0 (ok) and 1 (a miss) are not refusals.
  const size_t refusal = bytes.size() - std::string("lookup key 'c' is not an IP address").size() - 4;
  ASSERT_EQ(bytes[refusal], 2);
  EXPECT_THAT(altered(refusal + 1, 1).message(), HasSubstr("refusal with code 1"));
}

}  // namespace
}  // namespace planb
