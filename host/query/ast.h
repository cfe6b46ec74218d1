// The parsed form of a `--where` expression: a flat vector of nodes that refer to each other by index. Built once
// by the parser, read by Expression::Matches and the bounds computation; immutable after parsing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planb/store.h"

namespace planb {
namespace query {

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

enum class NodeKind : uint8_t {
  kAnd,         // every child holds (children: 2 or more; nested ands are flattened into one)
  kOr,          // some child holds (likewise flattened)
  kNot,         // children[0] does not hold
  kCompare,     // field `op` value[0]
  kBetween,     // value[0] <= field <= value[1]
  kIn,          // field equals one of value[...]
  kContains,    // text field contains texts[0]
  kStartsWith,  // text field starts with texts[0]
};

// A condition's literals live in `texts` (kText fields), `numbers` (kNumber and kDate fields, dates as
// milliseconds since the epoch; kBool fields as 0 and 1) or `reals` (kDouble fields), in the order written.
// A field of the type's own (RowField::kOwn) is Row::own_fields[own_index].
struct Node {
  NodeKind kind = NodeKind::kAnd;
  CompareOp op = CompareOp::kEq;
  FieldKind field_kind = FieldKind::kText;
  RowField field = RowField::kKey;
  uint32_t own_index = 0;  // RowField::kOwn: the field's position in the type's fields
  std::vector<uint32_t> children;
  std::vector<std::string> texts;
  std::vector<int64_t> numbers;
  std::vector<double> reals;
};

}  // namespace query
}  // namespace planb
