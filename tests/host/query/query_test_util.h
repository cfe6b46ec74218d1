// Field lists of the store types and small helpers shared by the query tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "host/query/expression.h"
#include "planb/store.h"

namespace planb {
namespace query_test {

inline constexpr FieldSpec kStateFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};
inline constexpr FieldSpec kTemporalFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};
inline constexpr FieldSpec kRangedFields[] = {
    {"KeyStart", FieldKind::kNumber, RowField::kKeyStart},
    {"KeyEnd", FieldKind::kNumber, RowField::kKeyEnd},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};
inline constexpr FieldSpec kSessionFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"Start", FieldKind::kDate, RowField::kStart},
    {"End", FieldKind::kDate, RowField::kEnd},
};
// Every field at once (no real store type has all of them), for tests that mix kinds.
inline constexpr FieldSpec kAllFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"KeyStart", FieldKind::kNumber, RowField::kKeyStart},
    {"KeyEnd", FieldKind::kNumber, RowField::kKeyEnd},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
    {"Start", FieldKind::kDate, RowField::kStart},
    {"End", FieldKind::kDate, RowField::kEnd},
    {"ValueType", FieldKind::kText, RowField::kValueType},
    {"Value", FieldKind::kText, RowField::kValue},
};

template <size_t N>
std::unique_ptr<Expression> MustParse(const std::string& text, const FieldSpec (&fields)[N]) {
  std::unique_ptr<Expression> e;
  Status s = Expression::Parse(text, fields, N, &e);
  EXPECT_TRUE(s.ok()) << text << " -> " << s.message();
  return e;
}

// The error message Parse gives for `text` ("" if it parsed).
template <size_t N>
std::string ParseError(const std::string& text, const FieldSpec (&fields)[N]) {
  std::unique_ptr<Expression> e;
  Status s = Expression::Parse(text, fields, N, &e);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
  EXPECT_EQ(e, nullptr) << text;
  return s.message();
}

}  // namespace query_test
}  // namespace planb
