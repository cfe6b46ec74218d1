#include "host/query/lexer.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace planb {
namespace query {
namespace {

std::vector<Token> Lex(const std::string& text) {
  std::vector<Token> tokens;
  Status s = Tokenize(text, &tokens);
  EXPECT_TRUE(s.ok()) << text << " -> " << s.message();
  return tokens;
}

std::string LexError(const std::string& text) {
  std::vector<Token> tokens;
  Status s = Tokenize(text, &tokens);
  EXPECT_FALSE(s.ok()) << text;
  return s.message();
}

TEST(Lexer, KindsAndColumns) {
  const std::string text = "Key = 'a' and (KeyStart>=-5, x) ";
  std::vector<Token> t = Lex(text);
  ASSERT_EQ(t.size(), 12u);
  const TokenKind kinds[] = {TokenKind::kWord,   TokenKind::kCompare, TokenKind::kText,    TokenKind::kWord,
                             TokenKind::kLParen, TokenKind::kWord,    TokenKind::kCompare, TokenKind::kNumber,
                             TokenKind::kComma,  TokenKind::kWord,    TokenKind::kRParen,  TokenKind::kEnd};
  const uint32_t columns[] = {1, 5, 7, 11, 15, 16, 24, 26, 28, 30, 31, 33};
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].kind, kinds[i]) << i;
    EXPECT_EQ(t[i].column, columns[i]) << i;
  }
  EXPECT_EQ(t[0].source, "Key");
  EXPECT_EQ(t[2].text, "a");
  EXPECT_EQ(t[2].source, "'a'");
  EXPECT_EQ(t[6].op, CompareOp::kGe);
  EXPECT_EQ(t[7].number, -5);
}

TEST(Lexer, EveryComparison) {
  std::vector<Token> t = Lex("= != <> < <= > >= <=>");
  const CompareOp ops[] = {CompareOp::kEq, CompareOp::kNe, CompareOp::kNe, CompareOp::kLt, CompareOp::kLe,
                           CompareOp::kGt, CompareOp::kGe, CompareOp::kLe, CompareOp::kGt};
  ASSERT_EQ(t.size(), 10u);
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(t[i].kind, TokenKind::kCompare) << i;
    EXPECT_EQ(t[i].op, ops[i]) << i;
  }
}

TEST(Lexer, QuotesEscapeByDoubling) {
  std::vector<Token> t = Lex("'it''s' '' ''''");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].text, "it's");
  EXPECT_EQ(t[1].text, "");
  EXPECT_EQ(t[2].text, "'");
  EXPECT_EQ(t[2].column, 12u);
}

TEST(Lexer, NumbersSpanInt64) {
  std::vector<Token> t = Lex("9223372036854775807 -9223372036854775808 0 -0 007");
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].number, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t[1].number, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(t[2].number, 0);
  EXPECT_EQ(t[3].number, 0);
  EXPECT_EQ(t[4].number, 7);
}

TEST(Lexer, Errors) {
  EXPECT_EQ(LexError("x = 9223372036854775808"),
            "--where: column 5: number 9223372036854775808 is out of range (numbers are signed 64-bit)");
  EXPECT_EQ(LexError("x = -9223372036854775809"),
            "--where: column 5: number -9223372036854775809 is out of range (numbers are signed 64-bit)");
  EXPECT_EQ(LexError("x = 99999999999999999999999"),
            "--where: column 5: number 99999999999999999999999 is out of range (numbers are signed 64-bit)");
  EXPECT_EQ(LexError("x = 12ab"), "--where: column 5: bad number '12ab'");
  EXPECT_EQ(LexError("x = 'abc"), "--where: column 5: unterminated quote (text literals end with ')");
  EXPECT_EQ(LexError("x = 'it''"), "--where: column 5: unterminated quote (text literals end with ')");
  EXPECT_EQ(LexError("x # 1"), "--where: column 3: unexpected character '#'");
  EXPECT_EQ(LexError("x ! 1"), "--where: column 3: unexpected character '!'");
  EXPECT_EQ(LexError("x - 1"), "--where: column 3: unexpected character '-'");
  EXPECT_EQ(LexError("x = \"a\""),
            "--where: column 5: unexpected '\"' (text literals take single quotes: 'like this')");
  EXPECT_EQ(LexError("x = \x01"), "--where: column 5: unexpected byte 1");
}

TEST(Lexer, EmptyIsJustTheEnd) {
  std::vector<Token> t = Lex("  ");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, TokenKind::kEnd);
  EXPECT_EQ(t[0].column, 3u);
  EXPECT_EQ(Describe(t[0]), "end of expression");
}

TEST(Lexer, EqualsIgnoreCase) {
  EXPECT_TRUE(EqualsIgnoreCase("startsWith", "STARTSWITH"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("and", "an"));
  EXPECT_FALSE(EqualsIgnoreCase("a_", "a-"));
}

}  // namespace
}  // namespace query
}  // namespace planb
