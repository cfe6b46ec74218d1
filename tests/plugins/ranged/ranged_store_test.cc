// The Ranged State store type, loaded through the real registry, on real LMDB files: range edges, nesting and
// overlap (the narrowest containing range wins), signed 64-bit extremes, <key> as a point range, merges (twice
// = once, the index included), bad input, scans, and thousands of random ranges against a brute-force model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/ingest/load_job.h"
#include "host/storage/map_reader.h"
#include "planb/encoding.h"
#include "planb/plugin.h"
#include "support/heap_trap.h"
#include "support/map_fixture.h"
#include "support/ranged_fixture.h"
#include "support/test_env.h"

namespace planb {
namespace {

using ::planb::testing::CreateMapEnv;
using ::planb::testing::CreateMapPlugins;
using ::planb::testing::DumpRanged;
using ::planb::testing::DumpStoreTable;
using ::planb::testing::LookupRange;
using ::planb::testing::MakeMapConfig;
using ::planb::testing::MapTxn;
using ::planb::testing::MergeInto;
using ::planb::testing::OpenTestRuntime;
using ::planb::testing::Point;
using ::planb::testing::PutRanges;
using ::planb::testing::RangedHit;
using ::planb::testing::RangedRow;
using ::planb::testing::RangeInput;
using ::planb::testing::RangeModel;
using ::planb::testing::RangeRecord;
using ::planb::testing::RunWithoutHeap;
using ::planb::testing::Span;
using ::planb::testing::StoreTableBytes;
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

using Inputs = std::vector<RangeInput>;
using RawRows = std::vector<std::pair<std::string, std::string>>;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class RangedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = CreateMapPlugins(MakeMapConfig("m", "ranged", ""), &plugins_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  std::shared_ptr<MapEnv> NewEnv(const std::string& name) {
    std::shared_ptr<MapEnv> env;
    const Status s = CreateMapEnv(dir_ / name, plugins_, &env);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  std::shared_ptr<MapEnv> Batch(const std::string& name, const Inputs& inputs) {
    std::shared_ptr<MapEnv> env = NewEnv(name);
    const Status s = PutRanges(env, inputs);
    EXPECT_TRUE(s.ok()) << s.message();
    return env;
  }

  static std::vector<RangedRow> Data(const MapEnv& env) {
    std::vector<RangedRow> rows;
    const Status s = DumpRanged(env, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  static RawRows Index(const MapEnv& env) {
    RawRows rows;
    const Status s = DumpStoreTable(env, 0, &rows);
    EXPECT_TRUE(s.ok()) << s.message();
    return rows;
  }

  // The value found at `number`, "-" for a miss, "error: ..." otherwise.
  static std::string At(const MapEnv& env, int64_t number) {
    const RangedHit hit = LookupRange(env, number);
    if (hit.code == Code::kNotFound) return "-";
    if (hit.code != Code::kOk) return std::string("error: ") + CodeName(hit.code) + ": " + hit.value;
    return hit.value;
  }

  // The message of a refused Put of `input`, checking that nothing was written.
  std::string PutError(const RangeInput& input) { return PutError(RangeRecord(input)); }
  std::string PutError(const Record& record) {
    auto env = NewEnv("refused-" + std::to_string(++refused_));
    MapTxn txn;
    EXPECT_TRUE(txn.Begin(env, true).ok());
    ErrorBuffer error;
    EXPECT_EQ(plugins_->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
    EXPECT_TRUE(txn.Commit().ok());
    EXPECT_TRUE(Data(*env).empty());
    EXPECT_TRUE(Index(*env).empty());
    return error.message;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
  int refused_ = 0;
};

TEST_F(RangedStoreTest, DescribesItself) {
  const PluginDescriptor& d = plugins_->type_descriptor();
  EXPECT_STREQ(d.name, "ranged");
  EXPECT_FALSE(d.uses_key_scheme);
  EXPECT_EQ(d.lookup_key, LookupKeyKind::kNumber);
  EXPECT_FALSE(d.lookup_uses_time);
  EXPECT_EQ(plugins_->scheme(), nullptr);
  ASSERT_EQ(d.table_count, 1u);
  EXPECT_STREQ(d.tables[0], "range_index");
  ASSERT_EQ(d.field_count, 4u);
  const std::pair<const char*, FieldKind> expected[] = {{"KeyStart", FieldKind::kNumber},
                                                        {"KeyEnd", FieldKind::kNumber},
                                                        {"ValueType", FieldKind::kText},
                                                        {"Value", FieldKind::kText}};
  for (uint32_t i = 0; i < d.field_count; ++i) {
    EXPECT_STREQ(d.fields[i].name, expected[i].first);
    EXPECT_EQ(d.fields[i].kind, expected[i].second);
  }
}

TEST_F(RangedStoreTest, ARowWhoseFromIsAfterItsToIsCorruption) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, false).ok());
  uint8_t key[16];
  const std::string value = std::string(16, '\0') + "\x01v";  // a version, the type, the value
  PutOrderedI64(key, 5);
  PutOrderedI64(key + 8, 10);
  Row row;
  ErrorBuffer error;
  ASSERT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(key, 16), Bytes(value), &row, &error), Code::kOk)
      << error.message;
  PutOrderedI64(key, 11);  // what no writer produces and the merge refuses: the verifier must refuse it too
  EXPECT_EQ(plugins_->store()->DecodeRow(txn.table(), Bytes(key, 16), Bytes(value), &row, &error), Code::kCorruption);
  EXPECT_TRUE(Contains(error.message, "from 11 after to 10")) << error.message;
}

TEST_F(RangedStoreTest, RangeEdgesAreInclusive) {
  auto env = Batch("b", {Span(10, 20, "ten-twenty"), Span(30, 30, "thirty")});
  EXPECT_EQ(At(*env, 10), "ten-twenty");
  EXPECT_EQ(At(*env, 15), "ten-twenty");
  EXPECT_EQ(At(*env, 20), "ten-twenty");
  EXPECT_EQ(At(*env, 9), "-");
  EXPECT_EQ(At(*env, 21), "-");
  EXPECT_EQ(At(*env, 29), "-");
  EXPECT_EQ(At(*env, 30), "thirty");
  EXPECT_EQ(At(*env, 31), "-");
  const RangedHit hit = LookupRange(*env, 12);
  EXPECT_EQ(hit.from, 10);
  EXPECT_EQ(hit.to, 20);
}

TEST_F(RangedStoreTest, NestedRangesFindTheOuterOneOutsideTheInner) {
  // A "greatest from <= key" search lands on [10, 20] at 50 and misses [1, 100]; this must not.
  for (const Inputs& inputs :
       {Inputs{Span(1, 100, "outer"), Span(10, 20, "inner")}, Inputs{Span(10, 20, "inner"), Span(1, 100, "outer")}}) {
    auto env = Batch("b-" + inputs[0].value, inputs);
    EXPECT_EQ(At(*env, 50), "outer");
    EXPECT_EQ(At(*env, 15), "inner");
    EXPECT_EQ(At(*env, 5), "outer");
    EXPECT_EQ(At(*env, 101), "-");
    EXPECT_EQ(At(*env, 0), "-");
    EXPECT_EQ(At(*env, 1), "outer");
    EXPECT_EQ(At(*env, 9), "outer");
    EXPECT_EQ(At(*env, 10), "inner");
    EXPECT_EQ(At(*env, 20), "inner");
    EXPECT_EQ(At(*env, 21), "outer");
    EXPECT_EQ(At(*env, 100), "outer");
  }
}

TEST_F(RangedStoreTest, TheNarrowestContainingRangeWinsWithDeterministicTies) {
  auto env = Batch("b", {
                            Span(0, 1000, "widest"), Span(100, 300, "wide"),  // width 200
                            Span(200, 250, "narrow"),                         // width 50
                            Span(240, 290, "narrow2"),  // width 50, greater from: wins ties with "narrow"
                            Span(240, 240, "point"), Span(500, 600, "a"),  // width 100
                            Span(550, 650, "b"),                           // width 100, greater from
                        });
  EXPECT_EQ(At(*env, 150), "wide");
  EXPECT_EQ(At(*env, 210), "narrow");
  EXPECT_EQ(At(*env, 239), "narrow");
  EXPECT_EQ(At(*env, 240), "point");
  EXPECT_EQ(At(*env, 245), "narrow2");  // narrow and narrow2 tie: the greater from
  EXPECT_EQ(At(*env, 250), "narrow2");
  EXPECT_EQ(At(*env, 260), "narrow2");
  EXPECT_EQ(At(*env, 295), "wide");
  EXPECT_EQ(At(*env, 301), "widest");
  EXPECT_EQ(At(*env, 549), "a");
  EXPECT_EQ(At(*env, 575), "b");
  EXPECT_EQ(At(*env, 601), "b");
  EXPECT_EQ(At(*env, 651), "widest");
  EXPECT_EQ(At(*env, 1001), "-");
}

TEST_F(RangedStoreTest, NegativeNumbersAndTheInt64Extremes) {
  auto env = Batch("b", {
                            Span(kMin, -1, "negative"),
                            Span(0, kMax, "non-negative"),
                            Span(kMin, kMax, "everything"),
                            Span(-5, -5, "minus five"),
                            Span(-300, -200, "minus hundreds"),
                            Span(kMax, kMax, "max"),
                        });
  EXPECT_EQ(At(*env, kMin), "negative");
  EXPECT_EQ(At(*env, kMin + 1), "negative");
  EXPECT_EQ(At(*env, -301), "negative");
  EXPECT_EQ(At(*env, -300), "minus hundreds");
  EXPECT_EQ(At(*env, -200), "minus hundreds");
  EXPECT_EQ(At(*env, -199), "negative");
  EXPECT_EQ(At(*env, -6), "negative");
  EXPECT_EQ(At(*env, -5), "minus five");
  EXPECT_EQ(At(*env, -4), "negative");
  EXPECT_EQ(At(*env, -1), "negative");
  EXPECT_EQ(At(*env, 0), "non-negative");
  EXPECT_EQ(At(*env, kMax - 1), "non-negative");
  EXPECT_EQ(At(*env, kMax), "max");
  const RangedHit hit = LookupRange(*env, kMin);
  EXPECT_EQ(hit.from, kMin);
  EXPECT_EQ(hit.to, -1);

  // Only the two extreme points: everything between is a miss, and they are found.
  auto ends = Batch("ends", {Point(kMin, "min"), Point(kMax, "max")});
  EXPECT_EQ(At(*ends, kMin), "min");
  EXPECT_EQ(At(*ends, kMax), "max");
  EXPECT_EQ(At(*ends, kMin + 1), "-");
  EXPECT_EQ(At(*ends, kMax - 1), "-");
  EXPECT_EQ(At(*ends, 0), "-");

  // The whole line alone: its width (2^64 - 1) does not overflow the comparison with a narrower range.
  auto whole = Batch("whole", {Span(kMin, kMax, "all"), Span(kMax - 1, kMax, "top")});
  EXPECT_EQ(At(*whole, kMax), "top");
  EXPECT_EQ(At(*whole, kMin), "all");
  EXPECT_EQ(At(*whole, 0), "all");
}

TEST_F(RangedStoreTest, AKeyIsTheRangeFromKeyToKey) {
  RangeInput spaced = Point(0, "spaced");
  spaced.from = " \t-7\n";  // surrounding XML whitespace is not part of the number
  auto env = Batch("b", {Point(42, "forty-two"), spaced, Span(40, 50, "forties")});
  EXPECT_EQ(At(*env, 42), "forty-two");
  EXPECT_EQ(At(*env, 41), "forties");
  EXPECT_EQ(At(*env, 43), "forties");
  EXPECT_EQ(At(*env, -7), "spaced");
  EXPECT_EQ(At(*env, -8), "-");
  EXPECT_EQ(At(*env, -6), "-");
  const std::vector<RangedRow> rows = Data(*env);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].from, -7);
  EXPECT_EQ(rows[0].to, -7);
  EXPECT_EQ(rows[2].from, 42);
  EXPECT_EQ(rows[2].to, 42);
  // The LMDB key is from + to, big-endian with the sign bit flipped.
  uint8_t expected[16];
  PutOrderedI64(expected, 42);
  PutOrderedI64(expected + 8, 42);
  EXPECT_EQ(rows[2].lmdb_key, std::string(reinterpret_cast<const char*>(expected), 16));
}

TEST_F(RangedStoreTest, KeepsTheValueTypeAndTheLastWriteOfARange) {
  RangeInput xml = Span(5, 6, "<a xmlns=\"n\"/>");
  xml.type = ValueType::kXmlFragment;
  auto env = Batch("b", {Span(1, 10, "first"), xml, Span(1, 10, "second")});
  const std::vector<RangedRow> rows = Data(*env);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].value, "second");
  EXPECT_EQ(rows[0].type, ValueType::kString);
  EXPECT_EQ(rows[1].type, ValueType::kXmlFragment);
  EXPECT_EQ(At(*env, 1), "second");
  EXPECT_EQ(At(*env, 5), "<a xmlns=\"n\"/>");
  EXPECT_EQ(Index(*env).size(), 2u);  // one group per distinct from
}

TEST_F(RangedStoreTest, MergeOfASecondBatchAddsNestsAndOverwrites) {
  auto shard = NewEnv("shard");
  MergeStats first;
  ASSERT_TRUE(MergeInto(Batch("b1", {Span(1, 100, "outer"), Span(200, 300, "right")}), shard, &first).ok());
  EXPECT_EQ(first.rows_read, 2u);
  EXPECT_EQ(first.rows_written, 2u);
  MergeStats second;
  const Status s = MergeInto(Batch("b2", {Span(10, 20, "inner"), Span(200, 300, "right v2"), Span(50, 250, "bridge")}),
                             shard, &second);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(second.rows_read, 3u);
  EXPECT_EQ(Data(*shard).size(), 4u);
  EXPECT_EQ(At(*shard, 15), "inner");
  EXPECT_EQ(At(*shard, 50), "outer");  // [1, 100] is narrower than [50, 250]
  EXPECT_EQ(At(*shard, 101), "bridge");
  EXPECT_EQ(At(*shard, 199), "bridge");
  EXPECT_EQ(At(*shard, 200), "right v2");  // [200, 300] is narrower than [50, 250]
  EXPECT_EQ(At(*shard, 300), "right v2");
  EXPECT_EQ(At(*shard, 301), "-");
  EXPECT_EQ(At(*shard, 0), "-");
}

TEST_F(RangedStoreTest, MergingTheSameBatchTwiceLeavesTheSameShardIndexIncluded) {
  Inputs first;
  Inputs second;
  for (int i = 0; i < 300; ++i) first.push_back(Span(i * 10, i * 10 + 15, "first-" + std::to_string(i)));
  for (int i = 0; i < 300; ++i) second.push_back(Span(i * 7 - 500, i * 7 + i % 50, "second-" + std::to_string(i)));
  second.push_back(Span(-10000, 10000, "all"));
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", first), shard).ok());
  auto batch = Batch("b2", second);
  ASSERT_TRUE(MergeInto(batch, shard).ok());
  const std::vector<RangedRow> data = Data(*shard);
  const RawRows index = Index(*shard);
  ASSERT_EQ(data.size(), 601u);
  ASSERT_GE(index.size(), 500u);

  MergeStats stats;
  ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
  EXPECT_EQ(stats.rows_read, 301u);
  EXPECT_EQ(Data(*shard), data);
  EXPECT_EQ(Index(*shard), index);

  // The index depends only on the set of ranges: merging in the other order builds the same bytes.
  auto other = NewEnv("other");
  ASSERT_TRUE(MergeInto(Batch("c2", second), other).ok());
  ASSERT_TRUE(MergeInto(Batch("c1", first), other).ok());
  EXPECT_EQ(Data(*other), data);
  EXPECT_EQ(Index(*other), index);
}

// The winner under the documented rule among `ranges` containing x, or false.
bool BruteWinner(const std::vector<std::pair<int64_t, int64_t>>& ranges, int64_t x, std::pair<int64_t, int64_t>* out) {
  bool found = false;
  for (const auto& r : ranges) {
    if (r.first > x || x > r.second) continue;
    const auto width = [](std::pair<int64_t, int64_t> p) { return static_cast<uint64_t>(p.second - p.first); };
    if (!found || width(r) < width(*out) || (width(r) == width(*out) && (r.first > out->first ||
                                                                         (r.first == out->first && r.second < out->second)))) {
      *out = r;
      found = true;
    }
  }
  return found;
}

TEST_F(RangedStoreTest, TheIndexHoldsTheWinnerSegmentsOfEachFrom) {
  // Checks the documented layout (segment_index.h) against a brute-force listing, so that a lookup that happens
  // to be right cannot hide a wrong index: per from F, the maximal runs of equal winners over [F, next from).
  const Inputs inputs = {Span(1, 100, "a"), Span(10, 20, "b"), Span(15, 15, "c"), Span(20, 40, "d"),
                         Span(-5, 12, "e"), Span(10, 11, "f"), Span(99, 200, "g"), Span(30, 35, "h")};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const RangeInput& in : inputs) ranges.emplace_back(std::stoll(in.from), std::stoll(in.to));
  std::vector<int64_t> froms;
  for (const auto& r : ranges) froms.push_back(r.first);
  std::sort(froms.begin(), froms.end());
  froms.erase(std::unique(froms.begin(), froms.end()), froms.end());
  for (bool reversed : {false, true}) {
    Inputs order = inputs;
    if (reversed) std::reverse(order.begin(), order.end());
    auto env = Batch(reversed ? "reversed" : "forward", order);
    const RawRows index = Index(*env);
    ASSERT_EQ(index.size(), froms.size());
    for (size_t g = 0; g < index.size(); ++g) {
      ASSERT_EQ(index[g].first.size(), 8u);
      const int64_t from = GetOrderedI64(reinterpret_cast<const uint8_t*>(index[g].first.data()));
      EXPECT_EQ(from, froms[g]);
      const int64_t group_end = g + 1 < froms.size() ? froms[g + 1] - 1 : 1000;
      std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> expected;  // (end, winner)
      std::pair<int64_t, int64_t> winner;
      for (int64_t x = from; x <= group_end && BruteWinner(ranges, x, &winner); ++x) {
        if (!expected.empty() && expected.back().second == winner) {
          expected.back().first = x;
        } else {
          expected.emplace_back(x, winner);
        }
      }
      const std::string& value = index[g].second;
      ASSERT_EQ(value.size(), expected.size() * 24) << "group " << from;
      for (size_t i = 0; i < expected.size(); ++i) {
        const auto* segment = reinterpret_cast<const uint8_t*>(value.data()) + i * 24;
        EXPECT_EQ(GetOrderedI64(segment), expected[i].first) << "group " << from << " segment " << i;
        EXPECT_EQ(GetOrderedI64(segment + 8), expected[i].second.first) << "group " << from << " segment " << i;
        EXPECT_EQ(GetOrderedI64(segment + 16), expected[i].second.second) << "group " << from << " segment " << i;
      }
    }
  }
}

TEST_F(RangedStoreTest, BroadRangesOverManySmallOnesKeepTheIndexSmall) {
  // Version 1 listed every range containing each from: 30 broad ranges over 100k small ones made it 30 times
  // larger. Winner segments grow by at most a segment per range, whichever order the ranges come in.
  Inputs small;
  for (int i = 0; i < 100000; ++i) small.push_back(Span(i * 10, i * 10 + 4, "s"));
  Inputs broad;
  for (int k = 0; k < 30; ++k) broad.push_back(Span(k * 9973, 1000000 - k * 7919, "broad-" + std::to_string(k)));
  auto plain = Batch("plain", small);
  uint64_t plain_bytes = 0;
  ASSERT_TRUE(StoreTableBytes(*plain, 0, &plain_bytes).ok());
  Inputs broad_last = small;
  broad_last.insert(broad_last.end(), broad.begin(), broad.end());
  Inputs broad_first = broad;
  broad_first.insert(broad_first.end(), small.begin(), small.end());
  for (const Inputs* inputs : {&broad_last, &broad_first}) {
    auto env = Batch(inputs == &broad_last ? "broad-last" : "broad-first", *inputs);
    uint64_t bytes = 0;
    ASSERT_TRUE(StoreTableBytes(*env, 0, &bytes).ok());
    EXPECT_LE(bytes, 3 * plain_bytes) << "broad ranges made the index " << bytes << " bytes, not ~" << plain_bytes;
    EXPECT_EQ(At(*env, 12), "s");
    EXPECT_EQ(At(*env, 16), "broad-0");
    EXPECT_EQ(At(*env, 500006), "broad-29");
    EXPECT_EQ(At(*env, 999995), "broad-0");
    EXPECT_EQ(At(*env, 1000001), "-");
  }
}

TEST_F(RangedStoreTest, ThousandsOfMutuallyNestedRangesInEitherOrderMatchAModel) {
  // [i, 4000 - i] and [2000 + i, 6000 + 2 * i]: each set nested, the two overlapping, loaded widest first and
  // widest last. Version 1 grew quadratically in space (and cubically in time) here.
  Inputs inputs;
  RangeModel model;
  for (int i = 0; i < 1000; ++i) {
    for (auto [from, to] : {std::pair<int64_t, int64_t>{i, 4000 - i}, {2000 + 3 * i, 6000 - i}}) {
      inputs.push_back(Span(from, to, std::to_string(from) + ".." + std::to_string(to)));
      model.Add(from, to, 0, inputs.back().value);
    }
  }
  Inputs reversed(inputs.rbegin(), inputs.rend());
  auto widest_first = Batch("widest-first", inputs);
  auto widest_last = Batch("widest-last", reversed);
  EXPECT_EQ(Index(*widest_first), Index(*widest_last));
  const RawRows index = Index(*widest_first);
  size_t segments = 0;
  for (const auto& row : index) segments += row.second.size() / 24;
  EXPECT_LE(segments, 2 * inputs.size());
  for (int64_t x = -2; x <= 6002; ++x) {
    const RangedHit expected = model.Lookup(x, 0);
    for (const auto* env : {&widest_first, &widest_last}) {
      const RangedHit hit = LookupRange(**env, x);
      ASSERT_EQ(hit.code, expected.code) << x;
      if (hit.code == Code::kOk) {
        ASSERT_EQ(hit.value, expected.value) << x;
      }
    }
  }
}

TEST_F(RangedStoreTest, RefusesBadInputNamingIt) {
  auto bad = [](std::string from, std::string to) {
    RangeInput input = Span(0, 0, "v");
    input.from = std::move(from);
    input.to = std::move(to);
    return input;
  };
  std::string m = PutError(bad("12x", "20"));
  EXPECT_TRUE(Contains(m, "<from> '12x' is not a whole number")) << m;
  m = PutError(bad("1", "abc"));
  EXPECT_TRUE(Contains(m, "<to> 'abc' is not a whole number")) << m;
  m = PutError(bad("", "5"));
  EXPECT_TRUE(Contains(m, "<from> '' is not a whole number")) << m;
  for (const char* text : {"1.5", "0x10", "1e3", "--1", "+-1", "- 1", "١٢"}) {
    m = PutError(bad(text, "9"));
    EXPECT_TRUE(Contains(m, "is not a whole number")) << text << ": " << m;
  }
  m = PutError(bad("9223372036854775808", "9223372036854775809"));
  EXPECT_TRUE(Contains(m, "<from> '9223372036854775808' is out of range")) << m;
  EXPECT_TRUE(Contains(m, "signed 64-bit")) << m;
  m = PutError(bad("-9223372036854775809", "0"));
  EXPECT_TRUE(Contains(m, "'-9223372036854775809' is out of range")) << m;
  m = PutError(bad("20", "10"));
  EXPECT_TRUE(Contains(m, "<from> 20 is greater than <to> 10")) << m;
  m = PutError(bad("-1", "-2"));
  EXPECT_TRUE(Contains(m, "<from> -1 is greater than <to> -2")) << m;
  RangeInput key = Point(0, "v");
  key.from = "forty";
  m = PutError(key);
  EXPECT_TRUE(Contains(m, "<key> 'forty' is not a whole number")) << m;
  m = PutError(bad(std::string(200, '7'), "1"));
  EXPECT_TRUE(Contains(m, "out of range")) << m;
  EXPECT_LT(m.size(), 300u) << "a long text is shortened in the message";

  Record session = RangeRecord(Span(1, 2, "v"));
  session.kind = RecordKind::kSession;
  m = PutError(session);
  EXPECT_TRUE(Contains(m, "<session>")) << m;
  Record no_value = RangeRecord(Span(1, 2, "v"));
  no_value.has_value = false;
  m = PutError(no_value);
  EXPECT_TRUE(Contains(m, "no <value>")) << m;
  Record neither = RangeRecord(Span(1, 2, "v"));
  neither.has_range = false;
  m = PutError(neither);
  EXPECT_TRUE(Contains(m, "no <key> or <from>/<to>")) << m;
  Record both = RangeRecord(Span(1, 2, "v"));
  both.has_key = true;
  both.key = Bytes(std::string_view("1"));
  m = PutError(both);
  EXPECT_TRUE(Contains(m, "both a <key> and <from>/<to>")) << m;

  // Accepted spellings: a leading '+', leading zeros, the extremes.
  auto env = Batch("ok", {bad("+5", "0007"), bad("-9223372036854775808", "-9223372036854775807")});
  EXPECT_EQ(At(*env, 6), "v");
  EXPECT_EQ(At(*env, kMin + 1), "v");
}

TEST_F(RangedStoreTest, ScanRangeNarrowsToKeyStartBounds) {
  Inputs inputs;
  for (int i = -20; i <= 20; ++i) inputs.push_back(Span(i * 10, i * 10 + (i % 3 == 0 ? 100 : 5), "v"));
  inputs.push_back(Span(kMin, kMax, "all"));
  auto env = Batch("b", inputs);
  Txn txn;
  ASSERT_TRUE(txn.Begin(env->env(), MDB_RDONLY).ok());
  Cursor cursor;
  ASSERT_TRUE(cursor.Open(txn.get(), env->data()).ok());
  const Table table = env->MakeTable(txn.get(), cursor.get());
  // The rows a scan of `range` visits (memcmp order, both ends inclusive).
  auto visited = [&](const KeyRange& range) {
    std::vector<std::pair<int64_t, int64_t>> rows;
    for (const RangedRow& row : Data(*env)) {
      const Bytes key(row.lmdb_key);
      if (range.has_lower && key.view() < range.lower.view().view()) continue;
      if (range.has_upper && key.view() > range.upper.view().view()) continue;
      rows.emplace_back(row.from, row.to);
    }
    return rows;
  };
  ScanBounds bounds;
  bounds.has_number_bounds = true;
  bounds.number_min = -30;
  bounds.number_max = 30;
  KeyRange range;
  ErrorBuffer error;
  ASSERT_EQ(plugins_->store()->ScanRange(table, bounds, &range, &error), Code::kOk);
  EXPECT_TRUE(range.has_lower && range.has_upper);
  EXPECT_EQ(visited(range), (std::vector<std::pair<int64_t, int64_t>>{
                                {-30, 70}, {-20, -15}, {-10, -5}, {0, 100}, {10, 15}, {20, 25}, {30, 130}}));
  bounds.number_min = bounds.number_max = kMin;
  ASSERT_EQ(plugins_->store()->ScanRange(table, bounds, &range, &error), Code::kOk);
  EXPECT_EQ(visited(range), (std::vector<std::pair<int64_t, int64_t>>{{kMin, kMax}}));
  bounds.number_min = 5;
  bounds.number_max = 4;
  EXPECT_EQ(plugins_->store()->ScanRange(table, bounds, &range, &error), Code::kNotFound);
  // No number bounds (a time bound means nothing here): the whole table.
  ScanBounds time_only;
  time_only.has_time_bounds = true;
  time_only.time_min = 0;
  time_only.time_max = 1;
  ASSERT_EQ(plugins_->store()->ScanRange(table, time_only, &range, &error), Code::kOk);
  EXPECT_FALSE(range.has_lower);
  EXPECT_FALSE(range.has_upper);
}

TEST_F(RangedStoreTest, AMissingIndexGroupIsCorruptionNotAMiss) {
  auto env = Batch("b", {Span(1, 100, "outer")});
  {
    MapTxn txn;
    ASSERT_TRUE(txn.Begin(env, true).ok());
    ASSERT_EQ(mdb_drop(txn.table().txn, txn.table().store_tables[0], 0), MDB_SUCCESS);  // empty the index
    ASSERT_TRUE(txn.Commit().ok());
  }
  const RangedHit hit = LookupRange(*env, 50);
  EXPECT_EQ(hit.code, Code::kCorruption);
  EXPECT_TRUE(Contains(hit.value, "range index")) << hit.value;
}

TEST_F(RangedStoreTest, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  // Nested and disjoint ranges, so that lookups take every path: the landed-on row wins, another row wins, a
  // miss in a gap, a miss before every range. Answers are computed (and the reader warmed) before the trap.
  Inputs inputs;
  for (int i = 0; i < 500; ++i) {
    inputs.push_back(Span(i * 100, i * 100 + 49, "disjoint-" + std::to_string(i)));
    if (i % 5 == 0) inputs.push_back(Span(i * 100 + 10, i * 100 + 20, "nested-" + std::to_string(i)));
  }
  inputs.push_back(Span(20000, 40000, "wide"));
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b", inputs), shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  struct Probe {
    int64_t number;
    Code code;
    std::string value;
  };
  std::vector<Probe> probes;
  for (int64_t n = -50; n < 50000; n += 7) {
    LookupKey lookup;
    lookup.number = n;
    Row row;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookup, &row, &error);
    probes.push_back({n, code, std::string(row.value.view())});
  }
  size_t hits = 0;
  for (const Probe& probe : probes) hits += probe.code == Code::kOk ? 1 : 0;
  ASSERT_GT(hits, probes.size() / 3);
  ASSERT_LT(hits, probes.size());

  const auto result = RunWithoutHeap([&] {
    LookupKey lookup;
    Row row;
    ErrorBuffer error;
    for (int round = 0; round < 3; ++round) {
      for (const Probe& probe : probes) {
        lookup.number = probe.number;
        const Code code = reader.Lookup(lookup, &row, &error);
        if (code != probe.code) return 2;
        if (code == Code::kOk && row.value.view() != probe.value) return 3;
      }
    }
    return 0;
  });
  ASSERT_TRUE(result.forked);
  ASSERT_TRUE(result.armed);
  EXPECT_EQ(result.signal, 0) << "a lookup allocated (operator new threw)";
  EXPECT_EQ(result.exit_code, 0) << "2: a lookup failed (malloc returned null?), 3: a wrong answer";
}

// --- Many random ranges against a brute-force model ---

struct RandomRanges {
  explicit RandomRanges(uint32_t seed, int64_t span) : random(seed), span(span) {}
  // Mostly narrow ranges, some wide, a few huge; points; repeats of earlier ranges with new values.
  RangeInput Next(const std::string& value) {
    const int kind = Pick(0, 99);
    if (kind < 8 && !seen.empty()) {
      const auto [from, to] = seen[static_cast<size_t>(Pick(0, static_cast<int64_t>(seen.size()) - 1))];
      return Span(from, to, value);
    }
    const int64_t from = Pick(-span, span);
    int64_t width = kind < 60 ? Pick(0, 20) : kind < 90 ? Pick(0, span / 50) : Pick(0, span / 4);
    if (kind < 15) width = 0;
    const int64_t to = from + width;
    seen.emplace_back(from, to);
    if (width == 0 && kind % 2 == 0) return Point(from, value);
    return Span(from, to, value);
  }
  int64_t Pick(int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); }

  std::mt19937_64 random;
  int64_t span;
  std::vector<std::pair<int64_t, int64_t>> seen;
};

void ExpectMatchesModel(const MapEnv& env, const RangeModel& model, const std::vector<int64_t>& numbers) {
  size_t wrong = 0;
  size_t hits = 0;
  for (int64_t n : numbers) {
    const RangedHit want = model.Lookup(n, 0);
    const RangedHit got = LookupRange(env, n);
    hits += want.code == Code::kOk ? 1 : 0;
    if (got.code != want.code || got.value != want.value || got.from != want.from || got.to != want.to) {
      ADD_FAILURE() << "lookup " << n << ": got " << ::testing::PrintToString(got) << ", want "
                    << ::testing::PrintToString(want);
      if (++wrong == 10) return;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(hits, numbers.size() / 10);
  EXPECT_LT(hits, numbers.size());
}

TEST_F(RangedStoreTest, ThousandsOfRandomRangesOverSeveralBatchesMatchAModel) {
  constexpr int64_t kSpan = 200000;
  RandomRanges maker(20240611, kSpan);
  RangeModel model;
  auto shard = NewEnv("shard");
  std::shared_ptr<MapEnv> first_batch;
  for (int b = 0; b < 5; ++b) {
    Inputs inputs;
    for (int i = 0; i < 1000; ++i) {
      inputs.push_back(maker.Next("b" + std::to_string(b) + "-" + std::to_string(i)));
      inputs.back().time_ms = b;  // each batch newer than the one before: its values win
    }
    for (const RangeInput& in : inputs) {
      model.Add(std::stoll(in.from), std::stoll(in.as_key ? in.from : in.to), 0, in.value);
    }
    auto batch = Batch("b" + std::to_string(b), inputs);
    const Status s = MergeInto(batch, shard);
    ASSERT_TRUE(s.ok()) << s.message();
    if (b == 0) first_batch = batch;
  }
  ASSERT_GT(model.size(), 4000u);
  EXPECT_EQ(Data(*shard).size(), model.size());

  std::vector<int64_t> numbers;
  RandomRanges probe(7, kSpan);
  for (int i = 0; i < 5000; ++i) numbers.push_back(probe.Pick(-kSpan - 1000, kSpan + kSpan / 4 + 1000));
  for (const auto& [from, to] : maker.seen) {
    if (numbers.size() > 12000) break;
    for (int64_t n : {from - 1, from, to, to + 1}) numbers.push_back(n);
  }
  ExpectMatchesModel(*shard, model, numbers);

  // The first batch, indexed by Put, answers like a shard (the first batch of a map becomes its shard as is).
  RangeModel first_model;
  RandomRanges again(20240611, kSpan);
  for (int i = 0; i < 1000; ++i) {
    const RangeInput in = again.Next("b0-" + std::to_string(i));
    first_model.Add(std::stoll(in.from), std::stoll(in.as_key ? in.from : in.to), 0, in.value);
  }
  ExpectMatchesModel(*first_batch, first_model, numbers);
}

TEST_F(RangedStoreTest, DenselyNestedAndOverlappingRangesMatchAModelAtEveryNumber) {
  // A small line crowded with ranges: every number from end to end, so every segment boundary is tried.
  RandomRanges maker(99, 60);
  RangeModel model;
  auto shard = NewEnv("shard");
  for (int b = 0; b < 4; ++b) {
    Inputs inputs;
    for (int i = 0; i < 150; ++i) {
      RangeInput in = maker.Next("b" + std::to_string(b) + "-" + std::to_string(i));
      in.time_ms = b;  // each batch newer than the one before: its values win
      inputs.push_back(in);
      model.Add(std::stoll(in.from), std::stoll(in.as_key ? in.from : in.to), 0, in.value);
    }
    ASSERT_TRUE(MergeInto(Batch("b" + std::to_string(b), inputs), shard).ok());
  }
  std::vector<int64_t> numbers;
  for (int64_t n = -70; n <= 90; ++n) numbers.push_back(n);
  ExpectMatchesModel(*shard, model, numbers);
}

// --- The whole path: XML -> batch -> staging -> merge -> MapReader ---

TEST(RangedStoreLoad, LoadsFromToRangeAndKeyElements) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), "[map.ids]\ntype = ranged\nmax_store_size = 1GiB\n", &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  WriteFile(dir / "a.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>ids</map><from>1001</from><to>1700</to><value>UK</value></reference>\n"
            "<reference><map>ids</map><range><from>1</from><to>5000</to></range><value>World</value></reference>\n"
            "<reference><map>ids</map><key>203</key><value>Home</value></reference>\n"
            "</referenceData>\n");
  WriteFile(dir / "b.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>ids</map><from>-10</from><to>-1</to><value>Negative</value></reference>\n"
            "<reference><map>ids</map><from>1200</from><to>1300</to><value>Wales</value></reference>\n"
            "</referenceData>\n");
  LoadOptions options;
  options.effective_time_ms = 1700000000000;
  for (const char* file : {"a.xml", "b.xml"}) {  // the second merges into the shard the first became
    LoadReport report;
    s = RunLoad(*runtime, {dir / file}, options, &report);
    ASSERT_TRUE(s.ok()) << file << ": " << s.message();
  }
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("ids", &shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  const std::pair<int64_t, const char*> expected[] = {{1001, "UK"},  {1700, "UK"},   {1250, "Wales"}, {1301, "UK"},
                                                      {203, "Home"}, {204, "World"}, {5000, "World"}, {-5, "Negative"}};
  for (const auto& [number, value] : expected) {
    LookupKey lookup;
    lookup.number = number;
    Row row;
    ErrorBuffer error;
    ASSERT_EQ(reader.Lookup(lookup, &row, &error), Code::kOk) << number << ": " << error.message;
    EXPECT_EQ(row.value.view(), value) << number;
  }
  for (int64_t number : {0, 5001, -11}) {
    LookupKey lookup;
    lookup.number = number;
    Row row;
    ErrorBuffer error;
    EXPECT_EQ(reader.Lookup(lookup, &row, &error), Code::kNotFound) << number;
  }

  // A bad record fails the whole load, naming the text, and changes nothing.
  WriteFile(dir / "bad.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>ids</map><from>7</from><to>8</to><value>fine</value></reference>\n"
            "<reference><map>ids</map><from>ten</from><to>20</to><value>bad</value></reference>\n"
            "</referenceData>\n");
  LoadReport report;
  s = RunLoad(*runtime, {dir / "bad.xml"}, options, &report);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "'ten'")) << s.message();
  ASSERT_TRUE(reader.Refresh().ok());
  LookupKey lookup;
  lookup.number = 7;
  Row row;
  ErrorBuffer error;
  ASSERT_EQ(reader.Lookup(lookup, &row, &error), Code::kOk);
  EXPECT_EQ(row.value.view(), "World");
}

}  // namespace
}  // namespace planb
