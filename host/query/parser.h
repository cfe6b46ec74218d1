// Parses a `--where` expression into nodes (host/query/ast.h), resolving field names and type-checking literals.
//
//   or        := and ('or' and)*
//   and       := unary ('and' unary)*
//   unary     := 'not' unary | '(' or ')' | condition
//   condition := FIELD op literal | FIELD 'between' literal 'and' literal
//              | FIELD 'in' '(' literal (',' literal)* ')' | FIELD ('contains' | 'startsWith') text
//
// Keywords and field names match case-insensitively. Literals must suit the field: 'text' for kText, integers
// for kNumber, quoted ISO-8601 times for kDate.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "host/query/ast.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {
namespace query {

// On success fills `nodes` and sets `*root` to the index of the top node. Errors are kInvalidArgument
// "--where: column N: ..." (N is the 1-based column of the offending token).
Status ParseExpression(std::string_view text, const FieldSpec* fields, uint32_t field_count, std::vector<Node>* nodes,
                       uint32_t* root);

}  // namespace query
}  // namespace planb
