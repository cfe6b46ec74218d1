// The Temporal Ranged State store type, loaded through the real registry, on real LMDB files: effective-time
// boundaries, the latest version among the ranges containing a number (ties: the narrowest), nesting, times
// before 1970 and at the int64 extremes, merges (twice = once, the index included), bad input, scans, and
// thousands of random versions and lookups against a brute-force model.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <map>

#include <cstdint>
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
using ::planb::testing::TempDir;
using ::planb::testing::WriteFile;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kT = 1704067200000;  // 2024-01-01T00:00:00.000Z

using Inputs = std::vector<RangeInput>;
using RawRows = std::vector<std::pair<std::string, std::string>>;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class TemporalRangedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status s = CreateMapPlugins(MakeMapConfig("m", "temporal_ranged", ""), &plugins_);
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

  // The value at `number` and `time`, "-" for a miss, "error: ..." otherwise.
  static std::string At(const MapEnv& env, int64_t number, int64_t time) {
    const RangedHit hit = LookupRange(env, number, time);
    if (hit.code == Code::kNotFound) return "-";
    if (hit.code != Code::kOk) return std::string("error: ") + CodeName(hit.code) + ": " + hit.value;
    return hit.value;
  }

  TempDir dir_;
  std::shared_ptr<const MapPlugins> plugins_;
};

TEST_F(TemporalRangedStoreTest, DescribesItself) {
  const PluginDescriptor& d = plugins_->type_descriptor();
  EXPECT_STREQ(d.name, "temporal_ranged");
  EXPECT_FALSE(d.uses_key_scheme);
  EXPECT_EQ(d.lookup_key, LookupKeyKind::kNumber);
  EXPECT_TRUE(d.lookup_uses_time);
  ASSERT_EQ(d.table_count, 1u);
  ASSERT_EQ(d.field_count, 5u);
  const std::pair<const char*, RowField> expected[] = {{"KeyStart", RowField::kKeyStart},
                                                       {"KeyEnd", RowField::kKeyEnd},
                                                       {"EffectiveTime", RowField::kEffectiveTime},
                                                       {"ValueType", RowField::kValueType},
                                                       {"Value", RowField::kValue}};
  for (uint32_t i = 0; i < d.field_count; ++i) {
    EXPECT_STREQ(d.fields[i].name, expected[i].first);
    EXPECT_EQ(d.fields[i].field, expected[i].second);
  }
  EXPECT_EQ(d.fields[2].kind, FieldKind::kDate);
}

TEST_F(TemporalRangedStoreTest, EffectiveTimeBoundaries) {
  auto env = Batch("b", {Span(10, 20, "v1", kT), Span(10, 20, "v2", kT + 1000)});
  EXPECT_EQ(At(*env, 15, kT - 1), "-");  // before the first version
  EXPECT_EQ(At(*env, 15, kT), "v1");     // the exact effective instant
  EXPECT_EQ(At(*env, 15, kT + 999), "v1");
  EXPECT_EQ(At(*env, 15, kT + 1000), "v2");
  EXPECT_EQ(At(*env, 15, kMax), "v2");
  EXPECT_EQ(At(*env, 15, kMin), "-");
  // Range edges at a time when the range exists.
  EXPECT_EQ(At(*env, 10, kT), "v1");
  EXPECT_EQ(At(*env, 20, kT), "v1");
  EXPECT_EQ(At(*env, 9, kT), "-");
  EXPECT_EQ(At(*env, 21, kT + 1000), "-");
  const RangedHit hit = LookupRange(*env, 12, kT + 5000);
  EXPECT_EQ(hit.time_ms, kT + 1000);
  EXPECT_EQ(hit.from, 10);
  EXPECT_EQ(hit.to, 20);
  const std::vector<RangedRow> rows = Data(*env);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].time_ms, kT);
  EXPECT_EQ(rows[1].time_ms, kT + 1000);
  EXPECT_EQ(rows[0].lmdb_key.size(), 24u);
  EXPECT_EQ(Index(*env).size(), 1u);  // versions share one range in the index
}

TEST_F(TemporalRangedStoreTest, TheLatestVersionAmongContainingRangesWinsThenTheNarrowest) {
  auto env = Batch(
      "b", {
               Span(1, 100, "outer old", kT), Span(10, 20, "inner", kT + 2000), Span(1, 100, "outer new", kT + 3000),
               Span(30, 40, "thirties", kT + 3000),  // same instant as "outer new": narrower
           });
  EXPECT_EQ(At(*env, 15, kT - 1), "-");
  EXPECT_EQ(At(*env, 15, kT), "outer old");  // inner has no version yet: the outer one answers
  EXPECT_EQ(At(*env, 15, kT + 1999), "outer old");
  EXPECT_EQ(At(*env, 15, kT + 2000), "inner");  // the later effective time
  EXPECT_EQ(At(*env, 15, kT + 2999), "inner");
  EXPECT_EQ(At(*env, 15, kT + 3000), "outer new");  // later than inner, though wider
  EXPECT_EQ(At(*env, 50, kT + 2500), "outer old");  // nested: found outside the inner range
  EXPECT_EQ(At(*env, 35, kT + 3000), "thirties");   // a tie in time: the narrowest
  EXPECT_EQ(At(*env, 35, kT + 2999), "outer old");
  EXPECT_EQ(At(*env, 101, kMax), "-");
}

TEST_F(TemporalRangedStoreTest, NegativeNumbersAndTimesAndTheExtremes) {
  auto env = Batch("b", {
                            Span(kMin, -1, "negative, since 1900", -2208988800000),
                            Span(kMin, kMax, "everything, always", kMin),
                            Span(-5, -5, "minus five, until max", kMax),
                            Point(kMax, "max", 0),
                        });
  EXPECT_EQ(At(*env, kMin, kMin), "everything, always");
  EXPECT_EQ(At(*env, kMin, -2208988800001), "everything, always");
  EXPECT_EQ(At(*env, kMin, -2208988800000), "negative, since 1900");
  EXPECT_EQ(At(*env, -5, kMax - 1), "negative, since 1900");
  EXPECT_EQ(At(*env, -5, kMax), "minus five, until max");
  EXPECT_EQ(At(*env, 0, kMax), "everything, always");
  EXPECT_EQ(At(*env, kMax, -1), "everything, always");
  EXPECT_EQ(At(*env, kMax, 0), "max");
  EXPECT_EQ(At(*env, kMax, kMax), "max");
  const RangedHit hit = LookupRange(*env, -5, kMax);
  EXPECT_EQ(hit.time_ms, kMax);
}

TEST_F(TemporalRangedStoreTest, MergeAddsVersionsAndTwiceEqualsOnce) {
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b1", {Span(1, 100, "outer", kT), Span(10, 20, "inner", kT)}), shard).ok());
  Inputs second = {Span(10, 20, "inner v2", kT + 100), Span(1, 100, "outer rewritten", kT),
                   Span(50, 60, "fifties", kT + 50)};
  for (int i = 0; i < 200; ++i) second.push_back(Span(i * 3, i * 3 + i % 11, "s" + std::to_string(i), kT + i));
  auto batch = Batch("b2", second);
  MergeStats stats;
  ASSERT_TRUE(MergeInto(batch, shard, &stats).ok());
  EXPECT_EQ(stats.rows_read, 203u);
  EXPECT_EQ(At(*shard, 15, kT), "inner");
  EXPECT_EQ(At(*shard, 15, kT + 100), "inner v2");
  EXPECT_EQ(At(*shard, 5, kT - 1), "-");
  EXPECT_EQ(At(*shard, 99, kT), "outer rewritten");  // same range and instant: the later write
  EXPECT_EQ(At(*shard, 55, kT + 49), "s18");         // [54, 61] at kT+18: later than "outer rewritten"
  const std::vector<RangedRow> data = Data(*shard);
  const RawRows index = Index(*shard);
  ASSERT_EQ(data.size(), 204u);

  ASSERT_TRUE(MergeInto(batch, shard).ok());
  EXPECT_EQ(Data(*shard), data);
  EXPECT_EQ(Index(*shard), index);
}

TEST_F(TemporalRangedStoreTest, RefusesBadInput) {
  auto env = NewEnv("b");
  MapTxn txn;
  ASSERT_TRUE(txn.Begin(env, true).ok());
  auto put_error = [&](const Record& record) {
    ErrorBuffer error;
    EXPECT_EQ(plugins_->store()->Put(txn.table(), record, &error), Code::kInvalidArgument);
    return std::string(error.message);
  };
  RangeInput text = Span(1, 2, "v", kT);
  text.to = "2x";
  std::string m = put_error(RangeRecord(text));
  EXPECT_TRUE(Contains(m, "<to> '2x' is not a whole number")) << m;
  m = put_error(RangeRecord(Span(3, 2, "v", kT)));
  EXPECT_TRUE(Contains(m, "<from> 3 is greater than <to> 2")) << m;
  Record session = RangeRecord(Span(1, 2, "v", kT));
  session.kind = RecordKind::kSession;
  m = put_error(session);
  EXPECT_TRUE(Contains(m, "<session>") && Contains(m, "Temporal Ranged State")) << m;
  Record no_value = RangeRecord(Span(1, 2, "v", kT));
  no_value.has_value = false;
  EXPECT_TRUE(Contains(put_error(no_value), "no <value>"));
  MDB_val k;
  MDB_val v;
  EXPECT_EQ(mdb_cursor_get(txn.table().cursor, &k, &v, MDB_FIRST), MDB_NOTFOUND);  // nothing written
  MDB_stat stat;
  ASSERT_EQ(mdb_stat(txn.table().txn, txn.table().store_tables[0], &stat), MDB_SUCCESS);
  EXPECT_EQ(stat.ms_entries, 0u);
}

TEST_F(TemporalRangedStoreTest, ScanRangeUsesKeyStartAndIgnoresTime) {
  auto env = Batch("b", {Span(-10, 10, "a", kT), Span(0, 5, "b", kT), Span(0, 5, "c", kMax), Span(6, 6, "d", kMin),
                         Span(7, 9, "e", kT)});
  Txn txn;
  ASSERT_TRUE(txn.Begin(env->env(), MDB_RDONLY).ok());
  Cursor cursor;
  ASSERT_TRUE(cursor.Open(txn.get(), env->data()).ok());
  const Table table = env->MakeTable(txn.get(), cursor.get());
  ScanBounds bounds;
  bounds.has_number_bounds = true;
  bounds.number_min = 0;
  bounds.number_max = 6;
  bounds.has_time_bounds = true;  // cannot narrow: time is not a leading key part
  bounds.time_min = kT;
  bounds.time_max = kT;
  KeyRange range;
  ErrorBuffer error;
  ASSERT_EQ(plugins_->store()->ScanRange(table, bounds, &range, &error), Code::kOk);
  ASSERT_TRUE(range.has_lower && range.has_upper);
  EXPECT_EQ(range.lower.size, 24u);
  std::string visited;
  for (const RangedRow& row : Data(*env)) {
    if (row.lmdb_key >= std::string(range.lower.view().view()) &&
        row.lmdb_key <= std::string(range.upper.view().view())) {
      visited += row.value;
    }
  }
  EXPECT_EQ(visited, "bcd");  // every time of from 0..6, and nothing else
}

TEST_F(TemporalRangedStoreTest, WarmLookupsAllocateNothing) {
  PLANB_SKIP_HEAP_TRAP_UNDER_SANITIZER();
  Inputs inputs;
  for (int i = 0; i < 300; ++i) {
    for (int64_t t : {100, 200, 300}) {
      inputs.push_back(Span(i * 100, i * 100 + 49, "v" + std::to_string(i) + "@" + std::to_string(t), t));
    }
    if (i % 4 == 0) inputs.push_back(Span(i * 100 + 10, i * 100 + 20, "nested-" + std::to_string(i), 250));
  }
  auto shard = NewEnv("shard");
  ASSERT_TRUE(MergeInto(Batch("b", inputs), shard).ok());
  MapReader reader;
  ASSERT_TRUE(reader.Open(shard).ok());
  struct Probe {
    int64_t number;
    int64_t time;
    Code code;
    std::string value;
  };
  std::vector<Probe> probes;
  for (int64_t n = -50; n < 30100; n += 13) {
    for (int64_t t : {99, 100, 250, 301}) {
      LookupKey lookup;
      lookup.number = n;
      lookup.time_ms = t;
      Row row;
      ErrorBuffer error;
      const Code code = reader.Lookup(lookup, &row, &error);
      probes.push_back({n, t, code, std::string(row.value.view())});
    }
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
        lookup.time_ms = probe.time;
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

TEST_F(TemporalRangedStoreTest, ThousandsOfRandomVersionsMatchAModel) {
  constexpr int64_t kSpan = 50000;
  std::mt19937_64 random(424242);
  auto pick = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int i = 0; i < 1500; ++i) {
    const int64_t from = pick(-kSpan, kSpan);
    const int kind = static_cast<int>(pick(0, 9));
    const int64_t width = kind < 6 ? pick(0, 30) : kind < 9 ? pick(0, 2000) : pick(0, kSpan / 2);
    ranges.emplace_back(from, from + width);
  }
  // One range and time given two values: in one batch the later record wins, between batches the higher hash of
  // the value (plugins/ranged/ranged_rows.h: merges commute).
  using Version = std::pair<std::pair<int64_t, int64_t>, int64_t>;
  std::map<Version, std::string> winners;
  const auto hash = [](const std::string& value) {
    return XXH3_64bits_withSeed(value.data(), value.size(), static_cast<uint8_t>(ValueType::kString));
  };
  auto shard = NewEnv("shard");
  for (int b = 0; b < 4; ++b) {
    Inputs inputs;
    std::map<Version, std::string> batch;
    for (int i = 0; i < 1000; ++i) {
      const auto [from, to] = ranges[static_cast<size_t>(pick(0, static_cast<int64_t>(ranges.size()) - 1))];
      const int64_t time = kT + pick(-100, 100) * 1000;  // few instants: ties in time happen
      const std::string value = "b" + std::to_string(b) + "-" + std::to_string(i);
      inputs.push_back(from == to && i % 2 == 0 ? Point(from, value, time) : Span(from, to, value, time));
      batch[{{from, to}, time}] = value;
    }
    for (const auto& [version, value] : batch) {
      auto [it, inserted] = winners.emplace(version, value);
      if (!inserted && hash(value) > hash(it->second)) it->second = value;
    }
    const Status s = MergeInto(Batch("b" + std::to_string(b), inputs), shard);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  RangeModel model;
  for (const auto& [version, value] : winners) model.Add(version.first.first, version.first.second, version.second, value);
  EXPECT_EQ(Data(*shard).size(), model.size());

  size_t wrong = 0;
  size_t hits = 0;
  constexpr int kLookups = 6000;
  for (int i = 0; i < kLookups && wrong < 10; ++i) {
    const auto [from, to] = ranges[static_cast<size_t>(pick(0, static_cast<int64_t>(ranges.size()) - 1))];
    const int64_t number = i % 3 == 0 ? pick(-kSpan - 100, kSpan * 3 / 2) : i % 3 == 1 ? from - 1 + pick(0, 2) : to;
    const int64_t time = kT + pick(-110, 110) * 1000 + pick(-1, 1);
    const RangedHit want = model.Lookup(number, time);
    const RangedHit got = LookupRange(*shard, number, time);
    hits += want.code == Code::kOk ? 1 : 0;
    if (got.code != want.code || got.value != want.value || got.from != want.from || got.to != want.to ||
        got.time_ms != want.time_ms) {
      ++wrong;
      ADD_FAILURE() << "lookup " << number << " at " << time << ": got " << ::testing::PrintToString(got) << ", want "
                    << ::testing::PrintToString(want);
    }
  }
  EXPECT_GT(hits, kLookups / 4u);
  EXPECT_LT(hits, static_cast<size_t>(kLookups));
}

TEST_F(TemporalRangedStoreTest, LoadsRangesAtTheirTimesThroughTheWholePath) {
  TempDir dir;
  std::unique_ptr<Runtime> runtime;
  Status s = OpenTestRuntime(dir.path(), "[map.ips]\ntype = temporal_ranged\nmax_store_size = 1GiB\n", &runtime);
  ASSERT_TRUE(s.ok()) << s.message();
  WriteFile(dir / "a.xml",
            "<referenceData xmlns=\"reference-data:2\">\n"
            "<reference><map>ips</map><time>2024-01-01T00:00:00.000Z</time><from>100</from><to>200</to>"
            "<value>first</value></reference>\n"
            "<reference><map>ips</map><time>2024-06-01T00:00:00.000Z</time><range><from>100</from><to>200</to>"
            "</range><value>second</value></reference>\n"
            "<reference><map>ips</map><from>150</from><to>150</to><value>stream time</value></reference>\n"
            "</referenceData>\n");
  LoadOptions options;
  options.effective_time_ms = kT + 1000;  // for the record without <time>
  LoadReport report;
  s = RunLoad(*runtime, {dir / "a.xml"}, options, &report);
  ASSERT_TRUE(s.ok()) << s.message();
  std::shared_ptr<MapEnv> shard;
  ASSERT_TRUE(runtime->OpenShard("ips", &shard).ok());
  const std::pair<std::pair<int64_t, int64_t>, const char*> expected[] = {
      {{150, kT - 1}, "-"},
      {{150, kT}, "first"},
      {{150, kT + 1000}, "stream time"},
      {{151, kT + 1000}, "first"},
      {{150, 1717200000000}, "second"},
      {{201, 1717200000000}, "-"},
  };
  for (const auto& [at, value] : expected) EXPECT_EQ(At(*shard, at.first, at.second), value) << at.first;
}

}  // namespace
}  // namespace planb
