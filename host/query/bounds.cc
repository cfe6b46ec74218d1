// Expression::Bounds(): the scan range implied by the conditions that must all hold.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "host/query/expression.h"

namespace planb {
namespace query {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// An inclusive interval of T (int64_t; unsigned 128-bit for addresses); lo > hi when no value fits.
template <typename T>
struct Span {
  T lo;
  T hi;
};
using Interval = Span<int64_t>;

// The values of a field that `node` admits, as one interval, given its literals as values of T and T's range;
// false when it admits no such single interval worth using (!=).
template <typename T>
bool SpanOf(const Node& node, const std::vector<T>& v, T min, T max, Span<T>* out) {
  const Span<T> empty{max, min};
  switch (node.kind) {
    case NodeKind::kCompare:
      switch (node.op) {
        case CompareOp::kEq:
          *out = {v[0], v[0]};
          return true;
        case CompareOp::kLe:
          *out = {min, v[0]};
          return true;
        case CompareOp::kGe:
          *out = {v[0], max};
          return true;
        // < and > become <= and >= one step in; nothing is below the least value or above the greatest.
        case CompareOp::kLt:
          *out = v[0] == min ? empty : Span<T>{min, static_cast<T>(v[0] - 1)};
          return true;
        case CompareOp::kGt:
          *out = v[0] == max ? empty : Span<T>{static_cast<T>(v[0] + 1), max};
          return true;
        case CompareOp::kNe:
          return false;
      }
      return false;
    case NodeKind::kBetween:
      *out = {v[0], v[1]};
      return true;
    case NodeKind::kIn: {
      Span<T> hull = empty;
      for (const T& x : v) {
        if (x < hull.lo) hull.lo = x;
        if (x > hull.hi) hull.hi = x;
      }
      *out = hull;
      return true;
    }
    default:
      return false;
  }
}

bool IntervalOf(const Node& node, Interval* out) { return SpanOf(node, node.numbers, kMin, kMax, out); }

void Intersect(const Interval& in, bool* has, int64_t* lo, int64_t* hi) {
  if (!*has) {
    *has = true;
    *lo = in.lo;
    *hi = in.hi;
    return;
  }
  if (in.lo > *lo) *lo = in.lo;
  if (in.hi < *hi) *hi = in.hi;
}

// FieldKind::kAddress: literals are 16-byte big-endian addresses (parser.cc), here as unsigned 128-bit numbers.
using Address = unsigned __int128;
constexpr Address kAddressMax = ~Address{0};

Address AddressOf(std::string_view bytes) {
  Address v = 0;
  for (char c : bytes) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}
Address AddressOf(const uint8_t* bytes) { return AddressOf(std::string_view(reinterpret_cast<const char*>(bytes), 16)); }

void PutAddress(Address v, uint8_t* out) {
  for (int i = 15; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}

// As IntervalOf, for an address field; lo > hi when no address fits.
bool AddressIntervalOf(const Node& node, Address* lo, Address* hi) {
  std::vector<Address> addresses;
  for (const std::string& text : node.texts) addresses.push_back(AddressOf(text));
  Span<Address> span{0, kAddressMax};
  if (!SpanOf(node, addresses, Address{0}, kAddressMax, &span)) return false;
  *lo = span.lo;
  *hi = span.hi;
  return true;
}

void IntersectAddresses(Address lo, Address hi, ScanBounds* bounds) {
  if (bounds->has_address_bounds) {
    lo = std::max(lo, AddressOf(bounds->address_min));
    hi = std::min(hi, AddressOf(bounds->address_max));
  }
  bounds->has_address_bounds = true;
  PutAddress(lo, bounds->address_min);
  PutAddress(hi, bounds->address_max);
}

void AddCondition(const Node& node, ScanBounds* bounds) {
  if (node.kind == NodeKind::kAnd || node.kind == NodeKind::kOr || node.kind == NodeKind::kNot) {
    return;  // an `or` or `not` says nothing about what every matching row has
  }
  switch (node.field) {
    case RowField::kKey: {
      if (node.field_kind != FieldKind::kText || bounds->has_key) return;
      const bool exact = (node.kind == NodeKind::kCompare && node.op == CompareOp::kEq) ||
                         (node.kind == NodeKind::kIn && node.texts.size() == 1);
      if (exact) {
        bounds->has_key = true;
        bounds->key = Bytes(node.texts[0]);
      }
      return;
    }
    case RowField::kKeyStart: {
      Address lo = 0;
      Address hi = 0;
      if (node.field_kind == FieldKind::kAddress && AddressIntervalOf(node, &lo, &hi)) IntersectAddresses(lo, hi, bounds);
      Interval in;
      if (node.field_kind == FieldKind::kNumber && IntervalOf(node, &in)) {
        Intersect(in, &bounds->has_number_bounds, &bounds->number_min, &bounds->number_max);
      }
      return;
    }
    // A range starts at or before it ends, and so does a session: an upper bound on the end bounds the start
    // too (`KeyStart <= N and KeyEnd >= N`, "ranges holding N", then scans only ranges starting at or before N).
    case RowField::kKeyEnd: {
      Address lo = 0;
      Address hi = 0;
      if (node.field_kind == FieldKind::kAddress && AddressIntervalOf(node, &lo, &hi) && hi != kAddressMax) {
        IntersectAddresses(0, hi, bounds);
      }
      Interval in;
      if (node.field_kind == FieldKind::kNumber && IntervalOf(node, &in) && in.hi != kMax) {
        Intersect(Interval{kMin, in.hi}, &bounds->has_number_bounds, &bounds->number_min, &bounds->number_max);
      }
      return;
    }
    case RowField::kEnd: {
      Interval in;
      if (node.field_kind == FieldKind::kDate && IntervalOf(node, &in) && in.hi != kMax) {
        Intersect(Interval{kMin, in.hi}, &bounds->has_time_bounds, &bounds->time_min, &bounds->time_max);
      }
      return;
    }
    case RowField::kEffectiveTime:
    case RowField::kStart: {
      Interval in;
      if (node.field_kind != FieldKind::kText && IntervalOf(node, &in)) {
        Intersect(in, &bounds->has_time_bounds, &bounds->time_min, &bounds->time_max);
      }
      return;
    }
    default:
      return;
  }
}

// `Key startsWith 'p'` on a text key: its prefix, else "".
std::string_view PrefixOf(const Node& node) {
  if (node.kind != NodeKind::kStartsWith || node.field != RowField::kKey || node.field_kind != FieldKind::kText) {
    return std::string_view();
  }
  return node.texts[0];
}

}  // namespace

std::string_view ComputeKeyPrefix(const std::vector<Node>& nodes, uint32_t root) {
  const Node& top = nodes[root];
  if (top.kind != NodeKind::kAnd) return PrefixOf(top);
  // Every conjunct must hold, so the longest prefix narrows most (the filter still checks the others).
  std::string_view longest;
  for (uint32_t child : top.children) {
    const std::string_view prefix = PrefixOf(nodes[child]);
    if (prefix.size() > longest.size()) longest = prefix;
  }
  return longest;
}

ScanBounds ComputeBounds(const std::vector<Node>& nodes, uint32_t root) {
  ScanBounds bounds;
  const Node& top = nodes[root];
  if (top.kind == NodeKind::kAnd) {  // the parser flattened nested ands, so every conjunct is a child
    for (uint32_t child : top.children) AddCondition(nodes[child], &bounds);
  } else {
    AddCondition(top, &bounds);
  }
  return bounds;
}

}  // namespace query
}  // namespace planb
