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

// A condition's literals live in `texts` (kText fields) or `numbers` (kNumber and kDate fields, dates as
// milliseconds since the epoch), in the order written.
struct Node {
  NodeKind kind = NodeKind::kAnd;
  CompareOp op = CompareOp::kEq;
  FieldKind field_kind = FieldKind::kText;
  RowField field = RowField::kKey;
  std::vector<uint32_t> children;
  std::vector<std::string> texts;
  std::vector<int64_t> numbers;
};

}  // namespace query
}  // namespace planb
