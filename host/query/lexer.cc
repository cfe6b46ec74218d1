#include "host/query/lexer.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace planb {
namespace query {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsWordChar(char c) { return IsWordStart(c) || IsDigit(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Reads a decimal -?[0-9]+(.[0-9]+)?([eE][+-]?[0-9]+)? at `start` (for double fields) into `real`.
Status LexDecimal(std::string_view text, size_t start, size_t* end, double* real) {
  size_t i = start + (text[start] == '-' ? 1 : 0);
  auto digits = [&] {
    const size_t from = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    return i > from;
  };
  bool ok = digits();
  if (ok && i < text.size() && text[i] == '.') {
    ++i;
    ok = digits();
  }
  if (ok && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    ok = digits();
  }
  size_t j = i;
  while (j < text.size() && (IsWordChar(text[j]) || text[j] == '.')) ++j;
  const uint32_t column = static_cast<uint32_t>(start + 1);
  const std::string_view written = text.substr(start, j - start);
  if (!ok || j != i) return ExpressionError(column, "bad number '" + std::string(written) + "'");
  const auto result = std::from_chars(written.data(), written.data() + written.size(), *real);
  if (result.ec != std::errc() || result.ptr != written.data() + written.size() || !std::isfinite(*real)) {
    return ExpressionError(column, "number " + std::string(written) + " is out of range (decimal numbers are doubles)");
  }
  *end = i;
  return Status::Ok();
}

// Reads -?[0-9]+ at `start`; the magnitude accumulates unsigned so that INT64_MIN, whose magnitude is one more
// than INT64_MAX, is still representable.
Status LexNumber(std::string_view text, size_t start, size_t* end, int64_t* value) {
  size_t i = start;
  const bool negative = text[i] == '-';
  if (negative) ++i;
  const uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t magnitude = 0;
  bool overflow = false;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (limit - digit) / 10) overflow = true;
    if (!overflow) magnitude = magnitude * 10 + digit;
  }
  const uint32_t column = static_cast<uint32_t>(start + 1);
  if (i < text.size() && IsWordChar(text[i])) {
    size_t j = i;
    while (j < text.size() && IsWordChar(text[j])) ++j;
    return ExpressionError(column, "bad number '" + std::string(text.substr(start, j - start)) + "'");
  }
  if (overflow) {
    return ExpressionError(column, "number " + std::string(text.substr(start, i - start)) +
                                       " is out of range (numbers are signed 64-bit)");
  }
  *end = i;
  // -2^63 has no positive counterpart: negate in unsigned arithmetic, then convert (well-defined since C++20
  // and what GCC/Clang do in C++17).
  *value = negative ? static_cast<int64_t>(~magnitude + 1) : static_cast<int64_t>(magnitude);
  return Status::Ok();
}

// Reads a '...' literal at `start` ('' is a quote inside).
Status LexText(std::string_view text, size_t start, size_t* end, std::string* value) {
  value->clear();
  for (size_t i = start + 1; i < text.size(); ++i) {
    if (text[i] != '\'') {
      value->push_back(text[i]);
    } else if (i + 1 < text.size() && text[i + 1] == '\'') {
      value->push_back('\'');
      ++i;
    } else {
      *end = i + 1;
      return Status::Ok();
    }
  }
  return ExpressionError(static_cast<uint32_t>(start + 1), "unterminated quote (text literals end with ')");
}

}  // namespace

Status ExpressionError(uint32_t column, const std::string& message) {
  return Status::Invalid("--where: column " + std::to_string(column) + ": " + message);
}

std::string Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of expression";
    case TokenKind::kText:
    case TokenKind::kNumber:
      return std::string(token.source);
    default:
      return "'" + std::string(token.source) + "'";
  }
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

Status Tokenize(std::string_view text, std::vector<Token>* tokens) {
  tokens->clear();
  size_t i = 0;
  while (true) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    Token token;
    token.column = static_cast<uint32_t>(i + 1);
    if (i == text.size()) {
      tokens->push_back(std::move(token));
      return Status::Ok();
    }
    const size_t start = i;
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (IsWordStart(c)) {
      token.kind = TokenKind::kWord;
      while (i < text.size() && IsWordChar(text[i])) ++i;
    } else if (IsDigit(c) || (c == '-' && IsDigit(next))) {
      token.kind = TokenKind::kNumber;
      size_t after_digits = start + 1;
      while (after_digits < text.size() && IsDigit(text[after_digits])) ++after_digits;
      token.decimal = after_digits < text.size() &&
                      (text[after_digits] == '.' || text[after_digits] == 'e' || text[after_digits] == 'E');
      if (token.decimal) {
        PLANB_RETURN_IF_ERROR(LexDecimal(text, start, &i, &token.real));
      } else {
        PLANB_RETURN_IF_ERROR(LexNumber(text, start, &i, &token.number));
        token.real = static_cast<double>(token.number);
      }
    } else if (c == '\'') {
      token.kind = TokenKind::kText;
      PLANB_RETURN_IF_ERROR(LexText(text, start, &i, &token.text));
    } else if (c == '(' || c == ')' || c == ',') {
      token.kind = c == '(' ? TokenKind::kLParen : c == ')' ? TokenKind::kRParen : TokenKind::kComma;
      ++i;
    } else if (c == '<' && next == '>') {  // SQL's spelling of !=
      token.kind = TokenKind::kCompare;
      token.op = CompareOp::kNe;
      i += 2;
    } else if (c == '=' || c == '<' || c == '>' || (c == '!' && next == '=')) {
      token.kind = TokenKind::kCompare;
      const bool with_eq = next == '=' && c != '=';
      token.op = c == '='   ? CompareOp::kEq
                 : c == '!' ? CompareOp::kNe
                 : c == '<' ? (with_eq ? CompareOp::kLe : CompareOp::kLt)
                            : (with_eq ? CompareOp::kGe : CompareOp::kGt);
      i += with_eq ? 2 : 1;
    } else if (c == '"') {
      return ExpressionError(token.column, "unexpected '\"' (text literals take single quotes: 'like this')");
    } else {
      const bool printable = static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
      return ExpressionError(
          token.column,
          printable ? "unexpected character '" + std::string(1, c) + "'"
                    : "unexpected byte " + std::to_string(static_cast<unsigned>(static_cast<unsigned char>(c))));
    }
    token.source = text.substr(start, i - start);
    tokens->push_back(std::move(token));
  }
}

}  // namespace query
}  // namespace planb
