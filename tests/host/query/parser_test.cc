// Parse errors (each with its column) through the public Expression::Parse, and the tree shape the parser builds.
#include "host/query/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/host/query/query_test_util.h"

namespace planb {
namespace query {
namespace {

using query_test::kAllFields;
using query_test::kRangedFields;
using query_test::kSessionFields;
using query_test::kStateFields;
using query_test::kTemporalFields;
using query_test::ParseError;

TEST(ParserErrors, UnknownField) {
  EXPECT_EQ(ParseError("not ( Kye = 'a')", kStateFields),
            "--where: column 7: unknown field 'Kye' (fields: Key, ValueType, Value)");
  EXPECT_EQ(ParseError("Key = 'a' and Kye = 'b'", kStateFields),
            "--where: column 15: unknown field 'Kye' (fields: Key, ValueType, Value)");
  EXPECT_EQ(ParseError("Key = 'a' or Key_ = 'b'", kSessionFields),
            "--where: column 14: unknown field 'Key_' (fields: Key, Start, End)");
}

TEST(ParserErrors, TypeMismatch) {
  EXPECT_EQ(ParseError("KeyStart >= 'abc'", kRangedFields), "--where: column 13: KeyStart is a number; 'abc' is text");
  EXPECT_EQ(ParseError("Key = 42", kStateFields), "--where: column 7: Key is text; 42 is a number (quote text: '42')");
  EXPECT_EQ(ParseError("EffectiveTime = 5", kTemporalFields),
            "--where: column 17: EffectiveTime is a date; 5 is a number (write dates quoted, e.g. "
            "'2024-01-01T08:10:22.023Z')");
  EXPECT_EQ(ParseError("KeyEnd in (1, 'x')", kRangedFields), "--where: column 15: KeyEnd is a number; 'x' is text");
  EXPECT_EQ(ParseError("KeyStart between 1 and '2'", kRangedFields),
            "--where: column 24: KeyStart is a number; '2' is text");
  EXPECT_EQ(ParseError("Value between 'a' and -1", kRangedFields),
            "--where: column 23: Value is text; -1 is a number (quote text: '-1')");
  EXPECT_EQ(ParseError("ValueType = 1", kRangedFields),
            "--where: column 13: ValueType is text; 1 is a number (quote text: '1')");
}

TEST(ParserErrors, BadDate) {
  EXPECT_EQ(ParseError("EffectiveTime > 'yesterday'", kTemporalFields),
            "--where: column 17: 'yesterday' is not an ISO-8601 time (EffectiveTime is a date, e.g. "
            "'2024-01-01T08:10:22.023Z')");
  EXPECT_EQ(ParseError("Start between '2024-01-01' and '2024-13-01'", kSessionFields),
            "--where: column 32: '2024-13-01' is not an ISO-8601 time (Start is a date, e.g. "
            "'2024-01-01T08:10:22.023Z')");
  EXPECT_EQ(ParseError("End in ('2024-01-01', '')", kSessionFields),
            "--where: column 23: '' is not an ISO-8601 time (End is a date, e.g. '2024-01-01T08:10:22.023Z')");
}

TEST(ParserErrors, ContainsAndStartsWithNeedText) {
  EXPECT_EQ(ParseError("KeyStart contains '1'", kRangedFields),
            "--where: column 10: contains applies to text fields; KeyStart is a number");
  EXPECT_EQ(ParseError("EffectiveTime STARTSWITH '2024'", kTemporalFields),
            "--where: column 15: STARTSWITH applies to text fields; EffectiveTime is a date");
  EXPECT_EQ(ParseError("Key contains 1", kStateFields),
            "--where: column 14: Key is text; 1 is a number (quote text: '1')");
}

TEST(ParserErrors, MissingOrBadLiteral) {
  EXPECT_EQ(ParseError("Key =", kStateFields),
            "--where: column 6: expected a text literal ('...') after '=', found end of expression");
  EXPECT_EQ(ParseError("Key = and Value = 'x'", kStateFields),
            "--where: column 7: expected a text literal ('...') after '=', found 'and'");
  EXPECT_EQ(ParseError("KeyStart < KeyEnd", kRangedFields),
            "--where: column 12: expected a number after '<', found 'KeyEnd'");
  EXPECT_EQ(ParseError("Start >= (", kSessionFields),
            "--where: column 10: expected a date ('2024-01-01T08:10:22.023Z') after '>=', found '('");
  EXPECT_EQ(ParseError("Key contains", kStateFields),
            "--where: column 13: expected a text literal ('...') after 'contains', found end of expression");
  EXPECT_EQ(ParseError("KeyStart between and 3", kRangedFields),
            "--where: column 18: expected a number after 'between', found 'and'");
  EXPECT_EQ(ParseError("KeyStart = 9223372036854775808", kRangedFields),
            "--where: column 12: number 9223372036854775808 is out of range (numbers are signed 64-bit)");
  EXPECT_EQ(ParseError("KeyStart = 1x", kRangedFields), "--where: column 12: bad number '1x'");
}

TEST(ParserErrors, UnterminatedQuote) {
  EXPECT_EQ(ParseError("Key = 'abc", kStateFields), "--where: column 7: unterminated quote (text literals end with ')");
  EXPECT_EQ(ParseError("Key = 'a' or Value = 'it''s", kStateFields),
            "--where: column 22: unterminated quote (text literals end with ')");
}

TEST(ParserErrors, UnbalancedParentheses) {
  EXPECT_EQ(ParseError("(Key = 'a'", kStateFields),
            "--where: column 11: expected ')' to close the '(' at column 1, found end of expression");
  EXPECT_EQ(ParseError("((Key = 'a') or Value = 'b'", kStateFields),
            "--where: column 28: expected ')' to close the '(' at column 1, found end of expression");
  EXPECT_EQ(ParseError("(Key = 'a' Value = 'b')", kStateFields),
            "--where: column 12: expected ')' to close the '(' at column 1, found 'Value'");
  EXPECT_EQ(ParseError("Key = 'a')", kStateFields), "--where: column 10: unbalanced ')': no '(' to close");
  EXPECT_EQ(ParseError("(Key = 'a'))", kStateFields), "--where: column 12: unbalanced ')': no '(' to close");
  EXPECT_EQ(ParseError("()", kStateFields), "--where: column 2: expected a condition before ')'");
  EXPECT_EQ(ParseError(")", kStateFields), "--where: column 1: expected a condition before ')'");
}

TEST(ParserErrors, TrailingJunk) {
  EXPECT_EQ(ParseError("Key = 'a' 'b'", kStateFields),
            "--where: column 11: unexpected 'b' after a complete condition (join conditions with 'and' or 'or')");
  EXPECT_EQ(ParseError("Key = 'a' Value = 'b'", kStateFields),
            "--where: column 11: unexpected 'Value' after a complete condition (join conditions with 'and' or "
            "'or')");
  EXPECT_EQ(ParseError("KeyStart = 1, 2", kRangedFields),
            "--where: column 13: unexpected ',' after a complete condition (join conditions with 'and' or 'or')");
}

TEST(ParserErrors, Empty) {
  EXPECT_EQ(ParseError("", kStateFields), "--where: column 1: empty expression");
  EXPECT_EQ(ParseError(" \t ", kStateFields), "--where: column 1: empty expression");
}

TEST(ParserErrors, BetweenWithoutAnd) {
  EXPECT_EQ(ParseError("KeyStart between 1 or 2", kRangedFields),
            "--where: column 20: 'between' (column 10) needs 'and' before its second value, found 'or'");
  EXPECT_EQ(ParseError("KeyStart between 1", kRangedFields),
            "--where: column 19: 'between' (column 10) needs 'and' before its second value, found end of "
            "expression");
  EXPECT_EQ(ParseError("KeyStart between 1, 2", kRangedFields),
            "--where: column 19: 'between' (column 10) needs 'and' before its second value, found ','");
  EXPECT_EQ(ParseError("KeyStart between 1 and", kRangedFields),
            "--where: column 23: expected a number after 'and', found end of expression");
}

TEST(ParserErrors, InLists) {
  EXPECT_EQ(ParseError("Key in ()", kStateFields), "--where: column 8: empty 'in ()' list: give at least one value");
  EXPECT_EQ(ParseError("Key in ( )", kStateFields), "--where: column 8: empty 'in ()' list: give at least one value");
  EXPECT_EQ(ParseError("Key in 'a'", kStateFields), "--where: column 8: expected '(' after 'in', found 'a'");
  EXPECT_EQ(ParseError("Key in ('a' 'b')", kStateFields),
            "--where: column 13: expected ',' or ')' in the 'in' list (column 5), found 'b'");
  EXPECT_EQ(ParseError("Key in ('a',", kStateFields),
            "--where: column 13: expected a text literal ('...') after ',', found end of expression");
  EXPECT_EQ(ParseError("Key in ('a',)", kStateFields),
            "--where: column 13: expected a text literal ('...') after ',', found ')'");
  EXPECT_EQ(ParseError("Key in ('a'", kStateFields),
            "--where: column 12: expected ',' or ')' in the 'in' list (column 5), found end of expression");
}

TEST(ParserErrors, MissingOperatorOrField) {
  EXPECT_EQ(ParseError("Key 'a'", kStateFields),
            "--where: column 5: expected an operator after 'Key' (= != < <= > >= between in contains "
            "startsWith), found 'a'");
  EXPECT_EQ(ParseError("key", kStateFields),
            "--where: column 4: expected an operator after 'key' (= != < <= > >= between in contains "
            "startsWith), found end of expression");
  EXPECT_EQ(ParseError("Key == 'a'", kStateFields),
            "--where: column 6: expected a text literal ('...') after '=', found '='");
  EXPECT_EQ(ParseError("and Key = 'a'", kStateFields),
            "--where: column 1: expected a field name, 'not' or '(', found 'and'");
  EXPECT_EQ(ParseError("Key = 'a' and", kStateFields),
            "--where: column 14: expected a field name, 'not' or '(', found end of expression");
  EXPECT_EQ(ParseError("Key = 'a' or or Key = 'b'", kStateFields),
            "--where: column 14: expected a field name, 'not' or '(', found 'or'");
  EXPECT_EQ(ParseError("5 = KeyStart", kRangedFields),
            "--where: column 1: expected a field name, 'not' or '(', found 5");
  EXPECT_EQ(ParseError("not", kStateFields),
            "--where: column 4: expected a field name, 'not' or '(', found end of expression");
  EXPECT_EQ(ParseError("Key not in ('a')", kStateFields),
            "--where: column 5: expected an operator after 'Key' (= != < <= > >= between in contains "
            "startsWith), found 'not'");
}

TEST(ParserErrors, NestingIsBounded) {
  const std::string deep = std::string(300, '(') + "Key = 'a'" + std::string(300, ')');
  EXPECT_EQ(ParseError(deep, kStateFields),
            "--where: column 201: expression nested too deeply (more than 200 levels of parentheses and 'not')");
  std::string nots;
  for (int i = 0; i < 300; ++i) nots += "not ";
  EXPECT_EQ(ParseError(nots + "Key = 'a'", kStateFields),
            "--where: column 801: expression nested too deeply (more than 200 levels of parentheses and 'not')");
  // 200 levels are fine.
  const std::string ok = std::string(200, '(') + "Key = 'a'" + std::string(200, ')');
  EXPECT_EQ(ParseError(ok, kStateFields), "");
}

std::vector<Node> Nodes(const std::string& text, uint32_t* root) {
  std::vector<Node> nodes;
  Status s = ParseExpression(text, kAllFields, 8, &nodes, root);
  EXPECT_TRUE(s.ok()) << s.message();
  return nodes;
}

TEST(Parser, FlattensAndAndOrChains) {
  uint32_t root = 0;
  std::vector<Node> n = Nodes("(Key = 'a' and (KeyStart = 1 and KeyEnd = 2)) and Value = 'v'", &root);
  ASSERT_EQ(n[root].kind, NodeKind::kAnd);
  ASSERT_EQ(n[root].children.size(), 4u);
  EXPECT_EQ(n[n[root].children[0]].field, RowField::kKey);
  EXPECT_EQ(n[n[root].children[1]].field, RowField::kKeyStart);
  EXPECT_EQ(n[n[root].children[2]].field, RowField::kKeyEnd);
  EXPECT_EQ(n[n[root].children[3]].field, RowField::kValue);

  n = Nodes("Key = 'a' or (Value = 'b' or Value = 'c') or Key = 'd' and Value = 'e'", &root);
  ASSERT_EQ(n[root].kind, NodeKind::kOr);
  ASSERT_EQ(n[root].children.size(), 4u);
  EXPECT_EQ(n[n[root].children[3]].kind, NodeKind::kAnd);
}

TEST(Parser, ConditionsKeepTheirLiterals) {
  uint32_t root = 0;
  std::vector<Node> n = Nodes("KeyStart between -3 and 7", &root);
  EXPECT_EQ(n[root].kind, NodeKind::kBetween);
  EXPECT_EQ(n[root].field_kind, FieldKind::kNumber);
  EXPECT_EQ(n[root].numbers, (std::vector<int64_t>{-3, 7}));

  n = Nodes("Value in ('a', 'b''c', '')", &root);
  EXPECT_EQ(n[root].kind, NodeKind::kIn);
  EXPECT_EQ(n[root].texts, (std::vector<std::string>{"a", "b'c", ""}));

  n = Nodes("Start <> '1970-01-01T00:00:01Z'", &root);
  EXPECT_EQ(n[root].kind, NodeKind::kCompare);
  EXPECT_EQ(n[root].op, CompareOp::kNe);
  EXPECT_EQ(n[root].field_kind, FieldKind::kDate);
  EXPECT_EQ(n[root].numbers, (std::vector<int64_t>{1000}));
}

}  // namespace
}  // namespace query
}  // namespace planb
