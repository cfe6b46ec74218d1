// Splits a `--where` expression into tokens, each with its 1-based column, for the parser (host/query/parser.h).
// Keywords (and, or, not, between, in, contains, startsWith) and field names are both kWord: the parser tells
// them apart, case-insensitively.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/query/ast.h"
#include "planb/status.h"

namespace planb {
namespace query {

enum class TokenKind : uint8_t {
  kWord,     // [A-Za-z_][A-Za-z0-9_]*
  kText,     // '...' with '' for a quote; `text` holds the unescaped value
  kNumber,   // -?[0-9]+ within signed 64 bits (`number`), or a decimal -?[0-9]+(.[0-9]+)?(e[+-]?[0-9]+)? (`real`)
  kCompare,  // = != <> < <= > >=; `op` says which
  kLParen,
  kRParen,
  kComma,
  kEnd,  // after the last token; its column is one past the expression
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  uint32_t column = 0;            // 1-based byte column of the token's first character
  std::string_view source;        // the token as written (a view into the expression)
  std::string text;               // kText: the unescaped value
  int64_t number = 0;             // kNumber, not decimal
  bool decimal = false;           // kNumber written with a fraction or an exponent
  double real = 0;                // kNumber: the value as a double (finite), decimal or not
  CompareOp op = CompareOp::kEq;  // kCompare
};

// Fills `tokens` (ending with one kEnd) or returns kInvalidArgument "--where: column N: ...".
// `text` must outlive the tokens (they view into it).
Status Tokenize(std::string_view text, std::vector<Token>* tokens);

// "--where: column N: message": the form of every expression error.
Status ExpressionError(uint32_t column, const std::string& message);

// How a token reads in an error: 'abc', 42, end of expression.
std::string Describe(const Token& token);

// ASCII case-insensitive equality, for keywords and field names.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace query
}  // namespace planb
