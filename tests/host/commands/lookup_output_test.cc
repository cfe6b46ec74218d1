// How `planb lookup` prints a type's fields flagged kFieldShownByLookup (lookup_output.h), in every format, for
// hits and misses, with one shown field and with several.
#include "host/commands/lookup_output.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace planb {
namespace {

// A histogram-like type: only Count is shown (and zero when absent).
const FieldSpec kCounter[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"BucketStart", FieldKind::kDate, RowField::kEffectiveTime},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup | kFieldZeroWhenAbsent},
};
// A metric-like type: several shown fields, of which only Count is zero when absent.
const FieldSpec kMetric[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"Count", FieldKind::kNumber, RowField::kOwn, kFieldShownByLookup | kFieldZeroWhenAbsent},
    {"Sum", FieldKind::kDouble, RowField::kOwn, kFieldShownByLookup},
    {"Seen", FieldKind::kDate, RowField::kOwn, kFieldShownByLookup},
    {"Up", FieldKind::kBool, RowField::kOwn, kFieldShownByLookup},
    {"Hidden", FieldKind::kNumber, RowField::kOwn},
};

template <size_t N>
LookupShape ShapeOf(const FieldSpec (&fields)[N], bool single) {
  PluginDescriptor d;
  d.fields = fields;
  d.field_count = N;
  LookupShape shape;
  shape.single = single;
  shape.shown = ShownFields(d);
  return shape;
}

// Found "a" with `own` values, then a miss of "zz".
std::string Print(LookupFormat format, const LookupShape& shape, FieldValue* own, uint32_t count) {
  std::ostringstream out;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(format, shape, out);
  Row row;
  row.key = Bytes(std::string_view("a"));
  row.value = Bytes(std::string_view("not printed"));
  row.own_fields = own;
  row.own_field_count = count;
  writer->Found("a", 0, row);
  writer->Missing("zz", 0);
  writer->Finish();
  return out.str();
}

TEST(LookupOutput, ShownFieldsAreLowerCasedInTheTypesOrder) {
  const LookupShape shape = ShapeOf(kMetric, true);
  ASSERT_EQ(shape.shown.size(), 4u);
  EXPECT_EQ(shape.shown[0].name, "count");
  EXPECT_EQ(shape.shown[1].name, "sum");
  EXPECT_EQ(shape.shown[1].index, 2u);
  EXPECT_TRUE(shape.shown[0].zero_when_absent);
  EXPECT_FALSE(shape.shown[1].zero_when_absent);
  const FieldSpec plain[] = {{"Key", FieldKind::kText, RowField::kKey}, {"Value", FieldKind::kText, RowField::kValue}};
  EXPECT_TRUE(ShapeOf(plain, true).shown.empty());
}

TEST(LookupOutput, OneShownFieldPrintsItsValueAloneAndZeroOnAMiss) {
  FieldValue own[3];
  own[2].number = 42;
  const LookupShape single = ShapeOf(kCounter, true);
  std::ostringstream hit;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(LookupFormat::kText, single, hit);
  Row row;
  row.own_fields = own;
  row.own_field_count = 3;
  writer->Found("a", 0, row);
  writer->Finish();
  EXPECT_EQ(hit.str(), "42\n");
  std::ostringstream miss;
  writer = LookupWriter::Create(LookupFormat::kText, single, miss);
  writer->Missing("zz", 0);
  writer->Finish();
  EXPECT_EQ(miss.str(), "0\n") << "a count of nothing";
  EXPECT_EQ(Print(LookupFormat::kText, ShapeOf(kCounter, false), own, 3), "a\t42\nzz\t0\n");
  EXPECT_EQ(Print(LookupFormat::kJson, single, own, 3),
            "[\n {\"key\":\"a\",\"count\":42,\"found\":true},\n {\"key\":\"zz\",\"count\":0,\"found\":false}\n]\n");
  EXPECT_EQ(Print(LookupFormat::kCsv, single, own, 3), "key,count,found\na,42,true\nzz,0,false\n");
}

TEST(LookupOutput, SeveralShownFieldsAsNameValuePairs) {
  FieldValue own[6];
  own[1].number = 3;
  own[2].real = 11498.189;
  own[3].number = 1704067200000;
  own[4].flag = true;
  own[5].number = 99;  // not shown
  const LookupShape shape = ShapeOf(kMetric, false);
  EXPECT_EQ(Print(LookupFormat::kText, shape, own, 6),
            "a\tcount=3 sum=11498.189 seen=2024-01-01T00:00:00.000Z up=true\n")
      << "a miss prints nothing: sum is not zero-when-absent";
  EXPECT_EQ(Print(LookupFormat::kJson, shape, own, 6),
            "[\n {\"key\":\"a\",\"count\":3,\"sum\":11498.189,\"seen\":\"2024-01-01T00:00:00.000Z\",\"up\":true,"
            "\"found\":true},\n {\"key\":\"zz\",\"count\":0,\"sum\":null,\"seen\":null,\"up\":null,\"found\":false}\n]\n");
  EXPECT_EQ(Print(LookupFormat::kCsv, shape, own, 6),
            "key,count,sum,seen,up,found\na,3,11498.189,2024-01-01T00:00:00.000Z,true,true\nzz,0,,,,false\n");
}

TEST(LookupOutput, DoublesPrintInTheirShortestRoundTripForm) {
  FieldValue own[6];
  own[2].real = 0.1 + 0.2;  // 0.30000000000000004: exact, not 0.3
  own[3].real = 1e300;
  const LookupShape shape = ShapeOf(kMetric, true);
  EXPECT_EQ(Print(LookupFormat::kText, shape, own, 6),
            "count=0 sum=0.30000000000000004 seen=1970-01-01T00:00:00.000Z up=false\n");
  own[2].real = -1500;
  EXPECT_EQ(Print(LookupFormat::kCsv, shape, own, 6),
            "key,count,sum,seen,up,found\na,0,-1500,1970-01-01T00:00:00.000Z,false,true\nzz,0,,,,false\n");
}

TEST(LookupOutput, ARowWithoutTheArrayPrintsZeroValues) {
  EXPECT_EQ(Print(LookupFormat::kText, ShapeOf(kCounter, true), nullptr, 0), "0\n0\n");
}

}  // namespace
}  // namespace planb
