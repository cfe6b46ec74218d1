#include "host/query/parser.h"

#include <string>
#include <utility>

#include "host/common/iso_time.h"
#include "host/query/lexer.h"
#include "planb/ip_address.h"

namespace planb {
namespace query {
namespace {

// Parentheses and `not` recurse; a bound keeps a hostile expression from exhausting the stack (here and in
// Expression::Matches, whose recursion follows the same nesting).
constexpr int kMaxDepth = 200;

const char* KindPhrase(FieldKind kind) {
  switch (kind) {
    case FieldKind::kText:
      return "text";
    case FieldKind::kNumber:
      return "a number";
    case FieldKind::kDate:
      return "a date";
    case FieldKind::kDouble:
      return "a decimal number";
    case FieldKind::kBool:
      return "a boolean";
    case FieldKind::kAddress:
      return "an IP address";
  }
  return "unknown";
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const FieldSpec* fields, uint32_t field_count, std::vector<Node>* nodes)
      : tokens_(std::move(tokens)), fields_(fields), field_count_(field_count), nodes_(nodes) {}

  Status Run(uint32_t* root) {
    if (Peek().kind == TokenKind::kEnd) return ExpressionError(1, "empty expression");
    PLANB_RETURN_IF_ERROR(ParseOr(root));
    const Token& t = Peek();
    if (t.kind == TokenKind::kRParen) return ExpressionError(t.column, "unbalanced ')': no '(' to close");
    if (t.kind != TokenKind::kEnd) {
      return ExpressionError(t.column, "unexpected " + Describe(t) +
                                           " after a complete condition (join "
                                           "conditions with 'and' or 'or')");
    }
    return Status::Ok();
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool PeekKeyword(std::string_view word) const {
    return Peek().kind == TokenKind::kWord && EqualsIgnoreCase(Peek().source, word);
  }
  static bool IsKeyword(std::string_view w) {
    for (const char* k : {"and", "or", "not", "between", "in", "contains", "startsWith"}) {
      if (EqualsIgnoreCase(w, k)) return true;
    }
    return false;
  }

  uint32_t Add(Node node) {
    nodes_->push_back(std::move(node));
    return static_cast<uint32_t>(nodes_->size() - 1);
  }

  // Parses operands joined by `keyword` (and/or) into one flattened node of `kind`.
  template <typename ParseOperand>
  Status ParseChain(std::string_view keyword, NodeKind kind, ParseOperand parse_operand, uint32_t* out) {
    uint32_t first;
    PLANB_RETURN_IF_ERROR((this->*parse_operand)(&first));
    if (!PeekKeyword(keyword)) {
      *out = first;
      return Status::Ok();
    }
    Node chain;
    chain.kind = kind;
    auto append = [&](uint32_t index) {
      // `(a and b) and c` is one conjunction: flattening lets Bounds() see every condition that must hold.
      if ((*nodes_)[index].kind == kind) {
        const std::vector<uint32_t> children = (*nodes_)[index].children;
        chain.children.insert(chain.children.end(), children.begin(), children.end());
      } else {
        chain.children.push_back(index);
      }
    };
    append(first);
    while (PeekKeyword(keyword)) {
      Next();
      uint32_t operand;
      PLANB_RETURN_IF_ERROR((this->*parse_operand)(&operand));
      append(operand);
    }
    *out = Add(std::move(chain));
    return Status::Ok();
  }

  Status ParseOr(uint32_t* out) { return ParseChain("or", NodeKind::kOr, &Parser::ParseAnd, out); }
  Status ParseAnd(uint32_t* out) { return ParseChain("and", NodeKind::kAnd, &Parser::ParseUnary, out); }

  Status ParseUnary(uint32_t* out) {
    const Token& t = Peek();
    const bool nests = PeekKeyword("not") || t.kind == TokenKind::kLParen;
    if (nests && depth_ >= kMaxDepth) {
      return ExpressionError(t.column, "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                                           " levels of parentheses and 'not')");
    }
    if (PeekKeyword("not")) {
      Next();
      ++depth_;
      uint32_t operand;
      PLANB_RETURN_IF_ERROR(ParseUnary(&operand));
      --depth_;
      Node node;
      node.kind = NodeKind::kNot;
      node.children.push_back(operand);
      *out = Add(std::move(node));
      return Status::Ok();
    }
    if (t.kind == TokenKind::kLParen) {
      const uint32_t open_column = t.column;
      Next();
      ++depth_;
      PLANB_RETURN_IF_ERROR(ParseOr(out));
      --depth_;
      if (Peek().kind != TokenKind::kRParen) {
        return ExpressionError(Peek().column, "expected ')' to close the '(' at column " + std::to_string(open_column) +
                                                  ", found " + Describe(Peek()));
      }
      Next();
      return Status::Ok();
    }
    if (t.kind == TokenKind::kWord && !IsKeyword(t.source)) return ParseCondition(out);
    if (t.kind == TokenKind::kRParen) return ExpressionError(t.column, "expected a condition before ')'");
    return ExpressionError(t.column, "expected a field name, 'not' or '(', found " + Describe(t));
  }

  Status FindField(const Token& name, const FieldSpec** field) const {
    for (uint32_t i = 0; i < field_count_; ++i) {
      if (EqualsIgnoreCase(name.source, fields_[i].name)) {
        *field = &fields_[i];
        return Status::Ok();
      }
    }
    std::string known;
    for (uint32_t i = 0; i < field_count_; ++i) known += (i == 0 ? "" : ", ") + std::string(fields_[i].name);
    return ExpressionError(name.column, "unknown field '" + std::string(name.source) + "' (" +
                                            (field_count_ == 0 ? "this map has no fields" : "fields: " + known) + ")");
  }

  Status ParseCondition(uint32_t* out) {
    const FieldSpec* field = nullptr;
    PLANB_RETURN_IF_ERROR(FindField(Peek(), &field));
    const Token& field_token = Next();
    Node node;
    node.field = field->field;
    node.field_kind = field->kind;
    node.own_index = static_cast<uint32_t>(field - fields_);
    const Token& op = Peek();
    if (field->kind == FieldKind::kBool &&
        ((op.kind == TokenKind::kCompare && op.op != CompareOp::kEq && op.op != CompareOp::kNe) ||
         PeekKeyword("between"))) {
      return ExpressionError(op.column, std::string(field->name) +
                                            " is a boolean: only =, != and in apply to it, not " + Describe(op));
    }
    if (op.kind == TokenKind::kCompare) {
      Next();
      node.kind = NodeKind::kCompare;
      node.op = op.op;
      PLANB_RETURN_IF_ERROR(ParseLiteral(*field, op, &node));
    } else if (PeekKeyword("between")) {
      Next();
      node.kind = NodeKind::kBetween;
      PLANB_RETURN_IF_ERROR(ParseLiteral(*field, op, &node));
      if (!PeekKeyword("and")) {
        return ExpressionError(Peek().column, "'between' (column " + std::to_string(op.column) +
                                                  ") needs 'and' before its second value, found " + Describe(Peek()));
      }
      const Token& and_token = Next();
      PLANB_RETURN_IF_ERROR(ParseLiteral(*field, and_token, &node));
    } else if (PeekKeyword("in")) {
      Next();
      node.kind = NodeKind::kIn;
      PLANB_RETURN_IF_ERROR(ParseList(*field, &node));
    } else if (PeekKeyword("contains") || PeekKeyword("startsWith")) {
      Next();
      node.kind = EqualsIgnoreCase(op.source, "contains") ? NodeKind::kContains : NodeKind::kStartsWith;
      if (field->kind != FieldKind::kText) {
        return ExpressionError(op.column, std::string(op.source) + " applies to text fields; " + field->name + " is " +
                                              KindPhrase(field->kind));
      }
      PLANB_RETURN_IF_ERROR(ParseLiteral(*field, op, &node));
    } else {
      return ExpressionError(op.column, "expected an operator after '" + std::string(field_token.source) +
                                            "' (= != < <= > >= between in contains startsWith), found " + Describe(op));
    }
    *out = Add(std::move(node));
    return Status::Ok();
  }

  Status ParseList(const FieldSpec& field, Node* node) {
    const Token& in = tokens_[pos_ - 1];
    if (Peek().kind != TokenKind::kLParen) {
      return ExpressionError(Peek().column, "expected '(' after 'in', found " + Describe(Peek()));
    }
    const Token& open = Next();
    if (Peek().kind == TokenKind::kRParen) {
      return ExpressionError(open.column, "empty 'in ()' list: give at least one value");
    }
    const Token* previous = &open;
    while (true) {
      PLANB_RETURN_IF_ERROR(ParseLiteral(field, *previous, node));
      if (Peek().kind == TokenKind::kRParen) break;
      if (Peek().kind != TokenKind::kComma) {
        return ExpressionError(Peek().column, "expected ',' or ')' in the 'in' list (column " +
                                                  std::to_string(in.column) + "), found " + Describe(Peek()));
      }
      previous = &Next();
    }
    Next();
    return Status::Ok();
  }

  // Reads one literal for `field` (after `previous`, for messages) into node->texts, numbers or reals.
  Status ParseLiteral(const FieldSpec& field, const Token& previous, Node* node) {
    const Token& t = Peek();
    const std::string name = field.name;
    const bool boolean_word = t.kind == TokenKind::kWord &&
                              (EqualsIgnoreCase(t.source, "true") || EqualsIgnoreCase(t.source, "false"));
    if (t.kind == TokenKind::kText && field.kind == FieldKind::kText) {
      node->texts.push_back(t.text);
    } else if (t.kind == TokenKind::kNumber && !t.decimal && field.kind == FieldKind::kNumber) {
      node->numbers.push_back(t.number);
    } else if (t.kind == TokenKind::kNumber && field.kind == FieldKind::kDouble) {
      node->reals.push_back(t.real);
    } else if (boolean_word && field.kind == FieldKind::kBool) {
      node->numbers.push_back(EqualsIgnoreCase(t.source, "true") ? 1 : 0);
    } else if (t.kind == TokenKind::kText && field.kind == FieldKind::kDate) {
      int64_t ms = 0;
      if (!ParseIsoTime(t.text, &ms)) {
        return ExpressionError(t.column, Describe(t) + " is not an ISO-8601 time (" + name +
                                             " is a date, e.g. '2024-01-01T08:10:22.023Z')");
      }
      node->numbers.push_back(ms);
    } else if (t.kind == TokenKind::kText && field.kind == FieldKind::kAddress) {
      // Kept as the 16 address bytes, which compare as bytes in address order (Expression::Matches, Bounds).
      ip::Address address;
      bool ipv4 = false;
      if (ip::ParseAddress(t.text, &address, &ipv4) != nullptr) {
        return ExpressionError(t.column, Describe(t) + " is not an IP address (" + name +
                                             " is an IP address, e.g. '10.0.0.0' or '2001:db8::')");
      }
      node->texts.emplace_back(reinterpret_cast<const char*>(address.bytes), sizeof(address.bytes));
    } else if (t.kind == TokenKind::kText) {
      return ExpressionError(t.column, name + " is " + KindPhrase(field.kind) + "; " + Describe(t) + " is text" +
                                           (field.kind == FieldKind::kBool ? " (write true or false, unquoted)" : ""));
    } else if (t.kind == TokenKind::kNumber) {
      const char* hint = field.kind == FieldKind::kDate     ? " (write dates quoted, e.g. '2024-01-01T08:10:22.023Z')"
                         : field.kind == FieldKind::kNumber ? " (a whole number is needed)"
                         : field.kind == FieldKind::kBool   ? " (write true or false)"
                         : field.kind == FieldKind::kAddress ? " (write addresses quoted, e.g. '10.0.0.0')"
                                                            : "";
      return ExpressionError(t.column, name + " is " + KindPhrase(field.kind) + "; " + Describe(t) + " is " +
                                           (t.decimal ? "a decimal number" : "a number") + hint +
                                           (field.kind == FieldKind::kText
                                                ? " (quote text: '" + std::string(t.source) + "')"
                                                : ""));
    } else {
      const char* wanted = field.kind == FieldKind::kText     ? "a text literal ('...')"
                           : field.kind == FieldKind::kNumber ? "a number"
                           : field.kind == FieldKind::kDouble ? "a number (e.g. 0.25 or -1.5e3)"
                           : field.kind == FieldKind::kBool   ? "true or false"
                           : field.kind == FieldKind::kAddress ? "an IP address ('10.0.0.0')"
                                                              : "a date ('2024-01-01T08:10:22.023Z')";
      return ExpressionError(
          t.column, std::string("expected ") + wanted + " after " + Describe(previous) + ", found " + Describe(t));
    }
    Next();
    return Status::Ok();
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  const FieldSpec* fields_;
  uint32_t field_count_;
  std::vector<Node>* nodes_;
};

}  // namespace

Status ParseExpression(std::string_view text, const FieldSpec* fields, uint32_t field_count, std::vector<Node>* nodes,
                       uint32_t* root) {
  std::vector<Token> tokens;
  PLANB_RETURN_IF_ERROR(Tokenize(text, &tokens));
  nodes->clear();
  return Parser(std::move(tokens), fields, field_count, nodes).Run(root);
}

}  // namespace query
}  // namespace planb
