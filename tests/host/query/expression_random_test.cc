// Random expressions over random rows: Expression::Matches against a plain evaluator written here, and
// Expression::Bounds() checked to hold for every row that matches.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "host/common/iso_time.h"
#include "host/query/expression.h"
#include "tests/host/query/query_test_util.h"

namespace planb {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k2024 = 1704067200000;

const std::vector<std::string> kTexts = {"", "a", "ab", "abc", "b", "B", "a'b", "'", "\xff", "string", "xml", "x"};
const std::vector<int64_t> kNumbers = {kMin, kMin + 1, -2, -1, 0, 1, 2, 3, kMax - 1, kMax};
const std::vector<int64_t> kTimes = {-86400000, -1, 0, k2024 - 1, k2024, k2024 + 1, k2024 + 86400000};
const std::vector<double> kReals = {-1.5e3, -1, -0.5, -0.0, 0, 0.25, 0.5, 1, 11498.189, 0.1, 1e300, -2.5e-300};
const std::vector<int64_t> kBools = {0, 1};

// A type with fields of its own (RowField::kOwn) of every kind beside standard ones; own_fields is indexed by
// the field's position here.
constexpr FieldSpec kOwnFields[] = {
    {"Key", FieldKind::kText, RowField::kKey},
    {"EffectiveTime", FieldKind::kDate, RowField::kEffectiveTime},
    {"Count", FieldKind::kNumber, RowField::kOwn},
    {"Ratio", FieldKind::kDouble, RowField::kOwn},
    {"Active", FieldKind::kBool, RowField::kOwn},
    {"Seen", FieldKind::kDate, RowField::kOwn},
    {"Note", FieldKind::kText, RowField::kOwn},
};
constexpr size_t kOwnFieldCount = 7;

// The test's own model of an expression.
struct TNode {
  enum Kind { kAnd, kOr, kNot, kCond } kind = kCond;
  std::vector<TNode> kids;
  const FieldSpec* field = nullptr;
  std::string op;  // = != <> < <= > >= between in contains startsWith
  std::vector<std::string> texts;
  std::vector<int64_t> numbers;
  std::vector<double> reals;
};

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  size_t Below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool OneIn(size_t n) { return Below(n) == 0; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

  // Mixes the case of keywords and field names, which must not matter.
  std::string Case(const std::string& word) {
    std::string out = word;
    const size_t style = Below(4);
    for (char& c : out) {
      if (style == 1 || (style == 3 && OneIn(2))) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (style == 2) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  }
  std::string Space() { return OneIn(4) ? "  " : " "; }

 private:
  std::mt19937 rng_;
};

TNode RandomCondition(Random& r, const FieldSpec* fields, size_t field_count) {
  TNode n;
  n.field = &fields[r.Below(field_count)];
  static const std::vector<std::string> kCompare = {"=", "!=", "<>", "<", "<=", ">", ">=", "between", "in"};
  static const std::vector<std::string> kTextOnly = {"contains", "startsWith"};
  static const std::vector<std::string> kBoolOps = {"=", "!=", "<>", "in"};
  const bool text = n.field->kind == FieldKind::kText;
  n.op = text && r.OneIn(4)                       ? r.Pick(kTextOnly)
         : n.field->kind == FieldKind::kBool ? r.Pick(kBoolOps)
                                              : r.Pick(kCompare);
  const size_t count = n.op == "between" ? 2 : n.op == "in" ? 1 + r.Below(3) : 1;
  for (size_t i = 0; i < count; ++i) {
    if (text) {
      n.texts.push_back(r.Pick(kTexts));
    } else if (n.field->kind == FieldKind::kDouble) {
      n.reals.push_back(r.Pick(kReals));
    } else if (n.field->kind == FieldKind::kBool) {
      n.numbers.push_back(r.Pick(kBools));
    } else {
      n.numbers.push_back(r.Pick(n.field->kind == FieldKind::kNumber ? kNumbers : kTimes));
    }
  }
  return n;
}

TNode RandomNode(Random& r, const FieldSpec* fields, size_t field_count, int depth) {
  if (depth == 0 || r.OneIn(3)) return RandomCondition(r, fields, field_count);
  TNode n;
  const size_t kind = r.Below(5);
  n.kind = kind < 2 ? TNode::kAnd : kind < 4 ? TNode::kOr : TNode::kNot;
  const size_t kids = n.kind == TNode::kNot ? 1 : 2 + r.Below(2);
  for (size_t i = 0; i < kids; ++i) n.kids.push_back(RandomNode(r, fields, field_count, depth - 1));
  return n;
}

std::string Literal(const TNode& n, size_t i) {
  if (n.field->kind == FieldKind::kNumber) return std::to_string(n.numbers[i]);
  if (n.field->kind == FieldKind::kBool) return n.numbers[i] ? "true" : "FALSE";
  if (n.field->kind == FieldKind::kDouble) {
    char buffer[64];
    // Shortest round-trip text, exponents included (1e+300), or %.17g sometimes: both parse back exactly.
    if (n.reals[i] == 11498.189) return "11498.189";
    std::snprintf(buffer, sizeof buffer, "%.17g", n.reals[i]);
    return buffer;
  }
  std::string raw = n.field->kind == FieldKind::kDate ? FormatIsoTime(n.numbers[i]) : n.texts[i];
  std::string out = "'";
  for (char c : raw) out += c == '\'' ? "''" : std::string(1, c);
  return out + "'";
}

// Writes `n` as text; parentheses where precedence needs them, and sometimes where it does not.
std::string Render(Random& r, const TNode& n) {
  std::string out;
  if (n.kind == TNode::kCond) {
    out = r.Case(n.field->name) + r.Space();
    const bool word = n.op == "between" || n.op == "in" || n.op == "contains" || n.op == "startsWith";
    out += (word ? r.Case(n.op) : n.op) + r.Space();
    if (n.op == "between") {
      out += Literal(n, 0) + " " + r.Case("and") + " " + Literal(n, 1);
    } else if (n.op == "in") {
      out += "(";
      for (size_t i = 0; i < n.numbers.size() + n.texts.size() + n.reals.size(); ++i) out += (i ? "," + r.Space() : "") + Literal(n, i);
      out += ")";
    } else {
      out += Literal(n, 0);
    }
  } else if (n.kind == TNode::kNot) {
    const bool wrap = n.kids[0].kind == TNode::kAnd || n.kids[0].kind == TNode::kOr || r.OneIn(3);
    const std::string inner = Render(r, n.kids[0]);
    out = r.Case("not") + " " + (wrap ? "(" + inner + ")" : inner);
  } else {
    const std::string joiner = n.kind == TNode::kAnd ? "and" : "or";
    for (size_t i = 0; i < n.kids.size(); ++i) {
      const TNode& kid = n.kids[i];
      const bool wrap = (n.kind == TNode::kAnd && kid.kind == TNode::kOr) || r.OneIn(4);
      const std::string inner = Render(r, kid);
      if (i) out += r.Space() + r.Case(joiner) + r.Space();
      out += wrap ? "(" + inner + ")" : inner;
    }
  }
  return out;
}

int CompareBytes(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

struct TRow {
  std::string key, value;
  bool xml = false;
  int64_t from = 0, to = 0, effective = 0, start = 0, end = 0;
  int64_t count = 0, seen = 0;  // fields of the type's own (kOwnFields)
  double ratio = 0;
  bool active = false;
  std::string note;
};

template <typename T, typename Cmp>
bool Eval(const std::string& op, const T& v, const std::vector<T>& lits, Cmp cmp) {
  if (op == "=") return cmp(v, lits[0]) == 0;
  if (op == "!=" || op == "<>") return cmp(v, lits[0]) != 0;
  if (op == "<") return cmp(v, lits[0]) < 0;
  if (op == "<=") return cmp(v, lits[0]) <= 0;
  if (op == ">") return cmp(v, lits[0]) > 0;
  if (op == ">=") return cmp(v, lits[0]) >= 0;
  if (op == "between") return cmp(v, lits[0]) >= 0 && cmp(v, lits[1]) <= 0;
  if (op == "in") {
    for (const T& l : lits) {
      if (cmp(v, l) == 0) return true;
    }
    return false;
  }
  ADD_FAILURE() << "op " << op;
  return false;
}

bool Eval(const TNode& n, const TRow& row) {
  switch (n.kind) {
    case TNode::kAnd:
      for (const TNode& k : n.kids) {
        if (!Eval(k, row)) return false;
      }
      return true;
    case TNode::kOr:
      for (const TNode& k : n.kids) {
        if (Eval(k, row)) return true;
      }
      return false;
    case TNode::kNot:
      return !Eval(n.kids[0], row);
    case TNode::kCond:
      break;
  }
  const std::string name = n.field->name;
  if (n.field->kind == FieldKind::kDouble) {
    return Eval(n.op, row.ratio, n.reals, [](double a, double b) { return a < b ? -1 : a > b ? 1 : 0; });
  }
  if (n.field->kind == FieldKind::kText) {
    const std::string v = name == "Key"     ? row.key
                          : name == "Value" ? row.value
                          : name == "Note"  ? row.note
                          : row.xml         ? "xml"
                                            : "string";
    if (n.op == "contains") return v.find(n.texts[0]) != std::string::npos;
    if (n.op == "startsWith") return v.compare(0, n.texts[0].size(), n.texts[0]) == 0;
    return Eval(n.op, v, n.texts, CompareBytes);
  }
  const int64_t v = name == "KeyStart"        ? row.from
                    : name == "KeyEnd"        ? row.to
                    : name == "EffectiveTime" ? row.effective
                    : name == "Start"         ? row.start
                    : name == "Count"         ? row.count
                    : name == "Seen"          ? row.seen
                    : name == "Active"        ? int64_t{row.active}
                                              : row.end;
  return Eval(n.op, v, n.numbers, [](int64_t a, int64_t b) { return a < b ? -1 : a > b ? 1 : 0; });
}

TRow RandomRow(Random& r) {
  TRow t;
  t.key = r.Pick(kTexts);
  t.value = r.Pick(kTexts);
  t.xml = r.OneIn(2);
  t.from = r.Pick(kNumbers);
  t.to = r.Pick(kNumbers);
  t.effective = r.Pick(kTimes);
  t.start = r.Pick(kTimes);
  t.end = r.Pick(kTimes);
  // Stored rows always start at or before they end (stores refuse from > to); Bounds() relies on it.
  if (t.from > t.to) std::swap(t.from, t.to);
  if (t.start > t.end) std::swap(t.start, t.end);
  t.count = r.Pick(kNumbers);
  t.seen = r.Pick(kTimes);
  t.ratio = r.Pick(kReals);
  t.active = r.OneIn(2);
  t.note = r.Pick(kTexts);
  return t;
}

// `own` holds kOwnFieldCount entries, filled as a store type would (entries of standard fields left zero).
Row ToRow(const TRow& t, FieldValue* own) {
  Row row;
  own[2].number = t.count;
  own[3].real = t.ratio;
  own[4].flag = t.active;
  own[5].number = t.seen;
  own[6].text = Bytes(t.note);
  row.own_fields = own;
  row.own_field_count = kOwnFieldCount;
  row.key = Bytes(t.key);
  row.value = Bytes(t.value);
  row.value_type = t.xml ? ValueType::kXmlFragment : ValueType::kString;
  row.range_from = t.from;
  row.range_to = t.to;
  row.effective_time_ms = t.effective;
  row.session_start_ms = t.start;
  row.session_end_ms = t.end;
  return row;
}

struct FieldSet {
  const FieldSpec* fields;
  size_t count;
};

TEST(ExpressionRandom, MatchesAgreesWithASimpleEvaluatorAndBoundsHold) {
  const FieldSet sets[] = {{query_test::kStateFields, 3},
                           {query_test::kTemporalFields, 4},
                           {query_test::kRangedFields, 4},
                           {query_test::kSessionFields, 3},
                           {query_test::kAllFields, 8},
                           {kOwnFields, kOwnFieldCount}};
  Random r(20240101);
  uint64_t matched = 0, checked = 0, bounded = 0;
  for (int iteration = 0; iteration < 4800; ++iteration) {
    const FieldSet& set = sets[iteration % 6];
    bool has_effective = false, has_start = false;
    for (size_t i = 0; i < set.count; ++i) {
      has_effective |= set.fields[i].field == RowField::kEffectiveTime;
      has_start |= set.fields[i].field == RowField::kStart;
    }
    const TNode tree = RandomNode(r, set.fields, set.count, 1 + static_cast<int>(r.Below(4)));
    const std::string text = Render(r, tree);
    std::unique_ptr<Expression> e;
    Status s = Expression::Parse(text, set.fields, static_cast<uint32_t>(set.count), &e);
    ASSERT_TRUE(s.ok()) << text << " -> " << s.message();
    const ScanBounds b = e->Bounds();
    bounded += b.has_key || b.has_number_bounds || b.has_time_bounds;
    for (int k = 0; k < 40; ++k) {
      const TRow t = RandomRow(r);
      FieldValue own[kOwnFieldCount];
      const Row row = ToRow(t, own);
      const bool expected = Eval(tree, t);
      ASSERT_EQ(e->Matches(row), expected) << text << "\nrow key='" << t.key << "' value='" << t.value
                                           << "' from=" << t.from << " to=" << t.to << " eff=" << t.effective;
      ++checked;
      if (!expected) continue;
      ++matched;
      // Bounds may only narrow the scan to rows that can match.
      if (b.has_key) {
        EXPECT_EQ(b.key.view(), t.key) << text;
      }
      if (b.has_number_bounds) {
        EXPECT_TRUE(b.number_min <= t.from && t.from <= b.number_max) << text << " from=" << t.from;
      }
      if (b.has_time_bounds && !(has_effective && has_start)) {
        const int64_t time = has_effective ? t.effective : t.start;
        EXPECT_TRUE(b.time_min <= time && time <= b.time_max) << text << " time=" << time;
      }
    }
  }
  // The random mix must exercise both outcomes and produce bounds now and then.
  EXPECT_GT(matched, checked / 20);
  EXPECT_LT(matched, checked - checked / 20);
  EXPECT_GT(bounded, 200u);
  std::printf("checked %llu rows, %llu matched; %llu of 4800 expressions had bounds\n",
              static_cast<unsigned long long>(checked), static_cast<unsigned long long>(matched),
              static_cast<unsigned long long>(bounded));
}

}  // namespace
}  // namespace planb
