// A parsed `--where` filter of `planb query`: which rows of a map to print, and what that implies for the LMDB
// key range a scan must visit.
//
//   Key = 'a' and (EffectiveTime >= '2024-01-01' or not Value contains 'x')
//   KeyStart between 10 and 20 and ValueType in ('string', 'xml')
//
// Comparisons = != (or <>) < <= > >=; `F between A and B` (inclusive); `F in (A, B, ...)`; `F contains 'x'`,
// `F startsWith 'x'` (text fields only); `and`, `or`, `not` with precedence not > and > or; parentheses.
// Keywords and field names are case-insensitive. Literals: 'text' ('' for a quote), signed 64-bit integers,
// for date fields quoted ISO-8601 times ('2024-01-01T08:10:22.023Z', '2024-01-01' = midnight UTC), for double
// fields integers and decimals (0.25, -1.5e3; finite), for boolean fields true and false (=, != and in only).
// A store type's own fields (RowField::kOwn) filter like any other but never narrow a scan. KeyStart / KeyEnd of
// a map with key_format ipv4 or ip are FieldKind::kAddress: literals are quoted addresses ('10.0.0.0',
// '2001:db8::'), compared in address order (IPv4 as ::ffff:a.b.c.d, so below every other IPv6 address but ::/96).
// A store type's own fields (RowField::kOwn) filter like any other but never narrow a scan.
// Text compares as bytes (std::string_view order); ValueType compares as its name, "string" or "xml".
//
// Thread-safety: immutable after Parse; Matches and Bounds may run on many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "host/query/ast.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

class Expression {
 public:
  // Parses and type-checks `text` against a store type's fields (`fields[0..field_count)`, which need only
  // live during the call). Errors are kInvalidArgument naming the 1-based column and what is wrong:
  //   "--where: column 7: unknown field 'Kye' (fields: Key, ValueType, Value)"
  //   "--where: column 13: KeyStart is a number; 'abc' is text"
  static Status Parse(std::string_view text, const FieldSpec* fields, uint32_t field_count,
                      std::unique_ptr<Expression>* out);

  Expression(const Expression&) = delete;
  Expression& operator=(const Expression&) = delete;
  ~Expression();

  // Whether `row` satisfies the expression. Allocates nothing; reads only the Row members of the fields used.
  bool Matches(const Row& row) const;

  // What the top-level AND-ed conditions imply for a scan (conditions under `or` or `not` imply nothing):
  //   Key = 'x' (or Key in ('x'))                     -> has_key, key
  //   KeyStart = < <= > >= between in                 -> number_min..number_max (address_min..address_max
  //                                                      for an IP address map, FieldKind::kAddress)
  //   EffectiveTime / Start = < <= > >= between in     -> time_min..time_max
  // Several conditions on one field intersect. When that intersection is empty (e.g. `KeyStart > 5 and
  // KeyStart < 3`, or `KeyStart < -9223372036854775808`) the bounds are still set, with min > max: callers
  // should then read no rows at all rather than hand inverted bounds to a store. Two different exact keys
  // (`Key = 'a' and Key = 'b'`) cannot be expressed in ScanBounds: the first is kept, and Matches still
  // rejects every row. The bounds only narrow a scan; every row read must still pass Matches.
  // The key view points into this object: valid while it lives.
  ScanBounds Bounds() const { return bounds_; }
  // The longest `Key startsWith 'p'` among the top-level AND-ed conditions ("" = none); narrows a scan where
  // LMDB keys are the key bytes themselves (ScanRequest::key_prefix). Points into this object.
  std::string_view KeyPrefix() const { return key_prefix_; }

 private:
  Expression() = default;
  bool Eval(uint32_t index, const Row& row) const;

  std::vector<query::Node> nodes_;
  uint32_t root_ = 0;
  ScanBounds bounds_;
  std::string_view key_prefix_;
};

namespace query {
// The bounds Expression::Bounds() reports for the expression rooted at `nodes[root]` (host/query/bounds.cc).
// The key view points into `nodes`.
ScanBounds ComputeBounds(const std::vector<Node>& nodes, uint32_t root);
// The longest text a top-level `Key startsWith` condition requires ("" = none); views into `nodes`.
std::string_view ComputeKeyPrefix(const std::vector<Node>& nodes, uint32_t root);
}  // namespace query

}  // namespace planb
