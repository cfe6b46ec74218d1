#include "host/query/expression.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "host/query/parser.h"
#include "planb/value_type.h"

namespace planb {
namespace {

using query::CompareOp;
using query::Node;
using query::NodeKind;

// A field of the type's own; an entry the plugin's row lacks reads as its zero value.
FieldValue OwnOf(const Row& row, const Node& node) {
  return row.own_fields != nullptr && node.own_index < row.own_field_count ? row.own_fields[node.own_index]
                                                                          : FieldValue();
}

std::string_view TextOf(const Row& row, const Node& node) {
  switch (node.field) {
    // FieldKind::kAddress: the 16 address bytes, compared as bytes against the literals' (parser.cc).
    case RowField::kKeyStart:
      return std::string_view(reinterpret_cast<const char*>(row.address_from), sizeof(row.address_from));
    case RowField::kKeyEnd:
      return std::string_view(reinterpret_cast<const char*>(row.address_to), sizeof(row.address_to));
    case RowField::kKey:
      return row.key.view();
    case RowField::kValueType:
      return ValueTypeName(row.value_type);
    case RowField::kValue:
      return row.value.view();
    case RowField::kOwn:
      return OwnOf(row, node).text.view();
    default:
      return {};
  }
}

int64_t NumberOf(const Row& row, const Node& node) {
  switch (node.field) {
    case RowField::kKeyStart:
      return row.range_from;
    case RowField::kKeyEnd:
      return row.range_to;
    case RowField::kEffectiveTime:
      return row.effective_time_ms;
    case RowField::kStart:
      return row.session_start_ms;
    case RowField::kEnd:
      return row.session_end_ms;
    case RowField::kOwn: {
      const FieldValue v = OwnOf(row, node);
      return node.field_kind == FieldKind::kBool ? (v.flag ? 1 : 0) : v.number;
    }
    default:
      return 0;
  }
}

// `cmp` is the sign of (field value <=> literal).
bool Holds(CompareOp op, int cmp) {
  switch (op) {
    case CompareOp::kEq:
      return cmp == 0;
    case CompareOp::kNe:
      return cmp != 0;
    case CompareOp::kLt:
      return cmp < 0;
    case CompareOp::kLe:
      return cmp <= 0;
    case CompareOp::kGt:
      return cmp > 0;
    case CompareOp::kGe:
      return cmp >= 0;
  }
  return false;
}

int Sign(int64_t a, int64_t b) { return a < b ? -1 : a > b ? 1 : 0; }

bool MatchText(const Node& node, std::string_view v) {
  const std::vector<std::string>& t = node.texts;
  switch (node.kind) {
    case NodeKind::kCompare:
      return Holds(node.op, v.compare(t[0]));
    case NodeKind::kBetween:
      return v.compare(t[0]) >= 0 && v.compare(t[1]) <= 0;
    case NodeKind::kIn:
      for (const std::string& s : t) {
        if (v == s) return true;
      }
      return false;
    case NodeKind::kContains:
      // glibc's memmem is linear in the value and the needle (Two-Way); string_view::find is not, and a long
      // needle of repeats against a long value of the same repeats took minutes per row (a remote DoS).
      // An empty value may have no data pointer at all, which memmem must not get (the fuzzer found it).
      return t[0].empty() ||
             (v.size() >= t[0].size() && ::memmem(v.data(), v.size(), t[0].data(), t[0].size()) != nullptr);
    case NodeKind::kStartsWith:
      return v.substr(0, t[0].size()) == t[0];
    default:
      return false;
  }
}

bool MatchNumber(const Node& node, int64_t v) {
  const std::vector<int64_t>& n = node.numbers;
  switch (node.kind) {
    case NodeKind::kCompare:
      return Holds(node.op, Sign(v, n[0]));
    case NodeKind::kBetween:
      return n[0] <= v && v <= n[1];
    case NodeKind::kIn:
      for (int64_t x : n) {
        if (v == x) return true;
      }
      return false;
    default:
      return false;
  }
}

// A NaN (a plugin's, against the SDK's word) is unordered: it equals nothing and differs from everything.
bool MatchReal(const Node& node, double v) {
  const std::vector<double>& r = node.reals;
  if (std::isnan(v)) return node.kind == NodeKind::kCompare && node.op == CompareOp::kNe;
  switch (node.kind) {
    case NodeKind::kCompare:
      return Holds(node.op, v < r[0] ? -1 : v > r[0] ? 1 : 0);
    case NodeKind::kBetween:
      return r[0] <= v && v <= r[1];
    case NodeKind::kIn:
      for (double x : r) {
        if (v == x) return true;
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

Status Expression::Parse(std::string_view text, const FieldSpec* fields, uint32_t field_count,
                         std::unique_ptr<Expression>* out) {
  std::unique_ptr<Expression> e(new Expression());
  PLANB_RETURN_IF_ERROR(query::ParseExpression(text, fields, field_count, &e->nodes_, &e->root_));
  e->bounds_ = query::ComputeBounds(e->nodes_, e->root_);
  e->key_prefix_ = query::ComputeKeyPrefix(e->nodes_, e->root_);
  *out = std::move(e);
  return Status::Ok();
}

Expression::~Expression() = default;

bool Expression::Matches(const Row& row) const { return Eval(root_, row); }

bool Expression::Eval(uint32_t index, const Row& row) const {
  const Node& node = nodes_[index];
  switch (node.kind) {
    case NodeKind::kAnd:
      for (uint32_t child : node.children) {
        if (!Eval(child, row)) return false;
      }
      return true;
    case NodeKind::kOr:
      for (uint32_t child : node.children) {
        if (Eval(child, row)) return true;
      }
      return false;
    case NodeKind::kNot:
      return !Eval(node.children[0], row);
    default:
      switch (node.field_kind) {
        case FieldKind::kText:
        case FieldKind::kAddress:
          return MatchText(node, TextOf(row, node));
        case FieldKind::kDouble:
          return MatchReal(node, OwnOf(row, node).real);
        default:
          return MatchNumber(node, NumberOf(row, node));
      }
  }
}

}  // namespace planb
