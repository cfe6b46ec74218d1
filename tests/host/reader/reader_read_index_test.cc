// The Reader's read index of ranged maps (host/reader/range_answer_index.h):
// - it answers exactly what the store type answers (a second Reader on the same home with read_index_max_size = 0
//   asks the store type), for every address at and around every boundary of random nested and overlapping ranges
//   and for random addresses and numbers, in number, ipv4 and ip maps, IPv4 in its mapped forms, ranges across ::ffff:0:0/96, the
//   ends of the address space, and malformed keys (the same error);
// - it is never consulted for another version of the map: a merge is answered by the very next lookup, single and
//   batched, and maintenance builds a new index, which answers the same;
// - a map over its read_index_max_size answers without one and says why in Stats;
// - lookups on several threads while merges and rebuilds go on answer from one release or the other.
// Data is loaded by the real planb binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"
#include "support/reader_fixture.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;

constexpr char kMaps[] =
    "[map.geo4]\ntype = ranged\nkey_format = ipv4\n"
    "[map.geo]\ntype = ranged\nkey_format = ip\n"
    "[map.edge]\ntype = ranged\nkey_format = ip\n"
    "[map.high]\ntype = ranged\nkey_format = ip\n"
    "[map.num]\ntype = ranged\n";

using U128 = unsigned __int128;
constexpr U128 kMapped = U128{0xFFFF} << 32;

std::string V4(uint32_t a) {
  const uint32_t n = htonl(a);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &n, text, sizeof text);
  return text;
}

std::string V6(U128 a) {
  uint8_t bytes[16];
  for (int i = 15; i >= 0; --i) {
    bytes[i] = static_cast<uint8_t>(a);
    a >>= 8;
  }
  char text[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, bytes, text, sizeof text);
  return text;
}

struct Loaded {
  std::vector<std::string> v4_keys;  // addresses to ask geo4 (and geo)
  std::vector<std::string> v6_keys;  // addresses to ask geo
};

void LoadCsv(const CliEnv& env, const std::string& map, const std::string& name, const std::string& rows) {
  const std::string csv = env.Write(name, "from,to,value\n" + rows);
  const ProcessResult r = env.Run({"load", "--format", "csv", "--map", map, "--from", "from", "--to", "to", "--value",
                                   "value", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Random nested and overlapping ranges, and every address at and beside their bounds to ask about.
Loaded LoadRandomRanges(const CliEnv& env) {
  Loaded loaded;
  std::mt19937_64 random(7);
  std::string v4_rows, v6_rows;
  std::vector<std::pair<uint32_t, uint32_t>> v4 = {{0, 255}, {0xFFFFFF00u, 0xFFFFFFFFu}};
  for (int i = 0; i < 300; ++i) {
    const uint32_t from = 0x0A000000u + static_cast<uint32_t>(random() % 65536);
    const uint32_t length = static_cast<uint32_t>(1u << (random() % 13)) + static_cast<uint32_t>(random() % 7);
    v4.emplace_back(from, from + length);
  }
  v4.emplace_back(0x0A000100u, 0x0A0001FFu);  // the same range twice: the later record wins
  v4.emplace_back(0x0A000100u, 0x0A0001FFu);
  for (size_t i = 0; i < v4.size(); ++i) {
    v4_rows += V4(v4[i].first) + "," + V4(v4[i].second) + ",v4-" + std::to_string(i) + "\n";
    for (int64_t d : {-1, 0, 1}) {
      for (uint64_t edge : {uint64_t{v4[i].first}, uint64_t{v4[i].second}}) {
        const int64_t a = static_cast<int64_t>(edge) + d;
        if (a >= 0 && a <= 0xFFFFFFFFll) loaded.v4_keys.push_back(V4(static_cast<uint32_t>(a)));
      }
    }
  }
  for (int i = 0; i < 1000; ++i) loaded.v4_keys.push_back(V4(static_cast<uint32_t>(random())));
  for (int i = 0; i < 1000; ++i) loaded.v4_keys.push_back(V4(0x0A000000u + static_cast<uint32_t>(random() % 70000)));

  const U128 doc = U128{0x20010DB8} << 96;
  std::vector<std::pair<U128, U128>> v6 = {
      {0, 0xFF},                                           // the start of the address space
      {~U128{0} - 0xFF, ~U128{0}},                         // its end
      {0x100, 0x1FF},                                      // inside ::/96
      {kMapped - 0x100, kMapped + 0xFF},                   // across the start of ::ffff:0:0/96
      {kMapped + 0xFFFFFF00u, kMapped + 0xFFFFFFFFu + 0x100},  // across its end
  };
  for (int i = 0; i < 200; ++i) {
    const U128 from = doc + (random() % 65536);
    v6.emplace_back(from, from + (U128{1} << (random() % 13)));
  }
  for (size_t i = 0; i < v6.size(); ++i) {
    v6_rows += V6(v6[i].first) + "," + V6(v6[i].second) + ",v6-" + std::to_string(i) + "\n";
    for (int d : {-1, 0, 1}) {
      for (U128 edge : {v6[i].first, v6[i].second}) {
        const U128 a = edge + static_cast<U128>(static_cast<__int128>(d));
        if ((d < 0 && edge == 0) || (d > 0 && edge == ~U128{0})) continue;
        // Mapped addresses as IPv6 text too ("::ffff:10.0.0.1" is what inet_ntop writes).
        loaded.v6_keys.push_back(V6(a));
      }
    }
  }
  for (int i = 0; i < 1000; ++i) loaded.v6_keys.push_back(V6(doc + (random() % 70000)));
  LoadCsv(env, "geo4", "geo4.csv", v4_rows);
  LoadCsv(env, "geo", "geo4-in-ip.csv", v4_rows);
  LoadCsv(env, "geo", "geo6.csv", v6_rows);
  return loaded;
}

// A second config on the same home with no read indexes: its Reader asks the store type for every key.
std::unique_ptr<Reader> OpenWithoutIndex(const CliEnv& env) {
  std::string text = kMaps;
  for (const std::string section : {"[map.geo4]\n", "[map.geo]\n", "[map.edge]\n", "[map.high]\n", "[map.num]\n"}) {
    text.replace(text.find(section), section.size(), section + "read_index_max_size = 0\n");
  }
  return testing::OpenTestReader(env.Write("plain.ini", text), env.home());
}

std::string Answer(const LookupResult& r) {
  if (r.code == Code::kNotFound) return "<miss>";
  if (r.code != Code::kOk) return std::string("<error ") + CodeName(r.code) + "> " + r.error;
  return std::string(r.value.view()) + " (" + std::to_string(static_cast<int>(r.value_type)) + ")";
}

const MapStats& StatsOf(const ReaderStats& stats, const std::string& map) {
  for (const MapStats& m : stats.maps) {
    if (m.map == map) return m;
  }
  ADD_FAILURE() << "no stats for " << map;
  return stats.maps.front();
}

// Asks both Readers every key, one by one and in one batch; returns how many answers were found.
size_t ExpectSameAnswers(Reader& indexed, Reader& plain, const std::string& map, const std::vector<std::string>& keys) {
  size_t found = 0;
  std::vector<ReaderKey> batch(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string expected = Answer(plain.Lookup(map, keys[i]));
    EXPECT_EQ(Answer(indexed.Lookup(map, keys[i])), expected) << map << " " << keys[i];
    found += expected.rfind("<", 0) != 0;
    batch[i].key = keys[i];
  }
  std::vector<LookupResult> a(keys.size()), b(keys.size());
  EXPECT_EQ(indexed.LookupMany(map, batch.data(), batch.size(), a.data()),
            plain.LookupMany(map, batch.data(), batch.size(), b.data()));
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(Answer(a[i]), Answer(b[i])) << map << " batched " << keys[i];
  return found;
}

TEST(ReaderReadIndex, AnswersEveryAddressAsTheStoreTypeDoes) {
  CliEnv env(kMaps);
  const Loaded loaded = LoadRandomRanges(env);
  std::unique_ptr<Reader> indexed = testing::OpenTestReader(env.config(), env.home());
  std::unique_ptr<Reader> plain = OpenWithoutIndex(env);
  ASSERT_NE(indexed, nullptr);
  ASSERT_NE(plain, nullptr);
  ASSERT_TRUE(indexed->Prepare("geo4").ok());
  ASSERT_TRUE(indexed->Prepare("geo").ok());

  std::vector<std::string> odd = {"", "10.0.0", "10.0.0.1.", "010.0.0.1", "10.0.0.256", "1.2.3.4 ", " 1.2.3.4",
                                  "10.0.0.1/8", "167772161", "::ffff:10.0.1.5", "2001:db8::1%eth0", "2001:db8:::1",
                                  "::ffff:a00:105", "10.0.1.5\n", std::string("10.0.1.5\0", 9)};
  std::vector<std::string> v4_keys = loaded.v4_keys;
  v4_keys.insert(v4_keys.end(), odd.begin(), odd.end());
  std::vector<std::string> all = v4_keys;
  all.insert(all.end(), loaded.v6_keys.begin(), loaded.v6_keys.end());

  EXPECT_GT(ExpectSameAnswers(*indexed, *plain, "geo4", v4_keys), v4_keys.size() / 4);
  EXPECT_GT(ExpectSameAnswers(*indexed, *plain, "geo", all), all.size() / 4);

  // A range that ends where ::ffff:0:0/96 begins, and nothing after that block: the IPv6 addresses above it are
  // in no range (the IPv6 table must not let the range before the block run on past it).
  LoadCsv(env, "edge", "edge.csv", V6(kMapped - 0x100) + "," + V6(kMapped + 0xFF) + ",across\n");
  std::vector<std::string> edge;
  for (U128 a : {kMapped - 0x101, kMapped - 0x100, kMapped - 1, kMapped, kMapped + 0xFF, kMapped + 0x100,
                 kMapped + 0xFFFFFFFFu, kMapped + 0xFFFFFFFFu + 1, kMapped + 0xFFFFFFFFu + 0x1000, U128{1} << 64}) {
    edge.push_back(V6(a));
  }
  EXPECT_EQ(ExpectSameAnswers(*indexed, *plain, "edge", edge), 4u);

  // IPv6 ranges only above ::ffff:0:0/96 (as real IPv6 data, in 2000::/3) and IPv4 ones in it: no segment lies
  // below the block, so the IPv6 table has no barrier entry there (it would put every real start in one bucket).
  // Addresses below the first range, in ::/96, mapped, between and around the ranges answer as the store type.
  const U128 doc = U128{0x20010DB8} << 96;
  LoadCsv(env, "high", "high.csv",
          V6(doc + 0x10) + "," + V6(doc + 0x1F) + ",first\n" + V6(doc + (U128{1} << 64)) + "," +
              V6(doc + (U128{2} << 64)) + ",second\n" + V4(0x0A000000u) + "," + V4(0x0A0000FFu) + ",ten\n");
  std::vector<std::string> high;
  for (U128 a : {U128{0}, U128{1}, kMapped - 1, kMapped + 0x0A000000u, kMapped + 0x0A000100u, doc, doc + 0xF,
                 doc + 0x10, doc + 0x1F, doc + 0x20, doc + (U128{1} << 64) - 1, doc + (U128{1} << 64),
                 doc + (U128{2} << 64), doc + (U128{2} << 64) + 1, ~U128{0}}) {
    high.push_back(V6(a));
  }
  high.push_back("10.0.0.5");
  EXPECT_EQ(ExpectSameAnswers(*indexed, *plain, "high", high), 6u);

  // The answers above came from the index (and the other Reader's from the store type).
  const ReaderStats stats = indexed->Stats();
  for (const char* map : {"geo4", "geo", "edge", "high"}) {
    EXPECT_TRUE(StatsOf(stats, map).read_index_current) << map << ": " << StatsOf(stats, map).read_index_error;
    EXPECT_GT(StatsOf(stats, map).read_index_bytes, 0u) << map;
    EXPECT_EQ(StatsOf(plain->Stats(), map).read_index_bytes, 0u) << map;
  }
}

// Number maps (key_format = number): random nested ranges, and the ends of the signed 64-bit line.
TEST(ReaderReadIndex, AnswersEveryNumberAsTheStoreTypeDoes) {
  CliEnv env(kMaps);
  std::mt19937_64 random(11);
  std::vector<std::pair<int64_t, int64_t>> ranges = {{INT64_MIN, INT64_MIN + 10}, {INT64_MAX - 10, INT64_MAX},
                                                     {-5, 5}, {-1000000, 1000000}};
  for (int i = 0; i < 300; ++i) {
    const int64_t from = static_cast<int64_t>(random() % 200000) - 100000;
    ranges.emplace_back(from, from + static_cast<int64_t>(random() % 3000));
  }
  std::string rows;
  std::vector<int64_t> numbers = {INT64_MIN, INT64_MAX, 0};
  for (size_t i = 0; i < ranges.size(); ++i) {
    rows += std::to_string(ranges[i].first) + "," + std::to_string(ranges[i].second) + ",n" + std::to_string(i) + "\n";
    for (int64_t edge : {ranges[i].first, ranges[i].second}) {
      numbers.push_back(edge);
      if (edge != INT64_MIN) numbers.push_back(edge - 1);
      if (edge != INT64_MAX) numbers.push_back(edge + 1);
    }
  }
  for (int i = 0; i < 2000; ++i) numbers.push_back(static_cast<int64_t>(random() % 2400000) - 1200000);
  for (int i = 0; i < 100; ++i) numbers.push_back(static_cast<int64_t>(random()));
  LoadCsv(env, "num", "num.csv", rows);
  std::unique_ptr<Reader> indexed = testing::OpenTestReader(env.config(), env.home());
  std::unique_ptr<Reader> plain = OpenWithoutIndex(env);
  ASSERT_NE(indexed, nullptr);
  ASSERT_NE(plain, nullptr);
  size_t found = 0;
  std::vector<ReaderKey> batch(numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string expected = Answer(plain->Lookup("num", numbers[i]));
    EXPECT_EQ(Answer(indexed->Lookup("num", numbers[i])), expected) << numbers[i];
    found += expected != "<miss>";
    batch[i].number = numbers[i];
  }
  EXPECT_GT(found, numbers.size() / 2);
  std::vector<LookupResult> a(numbers.size()), b(numbers.size());
  EXPECT_EQ(indexed->LookupMany("num", batch.data(), batch.size(), a.data()), Code::kOk);
  EXPECT_EQ(plain->LookupMany("num", batch.data(), batch.size(), b.data()), Code::kOk);
  for (size_t i = 0; i < numbers.size(); ++i) EXPECT_EQ(Answer(a[i]), Answer(b[i])) << "batched " << numbers[i];
  EXPECT_TRUE(StatsOf(indexed->Stats(), "num").read_index_current) << StatsOf(indexed->Stats(), "num").read_index_error;
  EXPECT_EQ(StatsOf(plain->Stats(), "num").read_index_bytes, 0u);
}

TEST(ReaderReadIndex, AMergeIsAnsweredByTheNextLookupAndMaintenanceBuildsANewIndex) {
  CliEnv env(kMaps);
  LoadCsv(env, "geo4", "old.csv", "10.0.0.0,10.0.255.255,old\n");
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home(), /*maintenance=*/0);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.0.1.1")), "old (1)");
  ASSERT_TRUE(StatsOf(reader->Stats(), "geo4").read_index_current);

  // A narrower range merged since: the index describes the previous version and must not answer.
  LoadCsv(env, "geo4", "new.csv", "10.0.1.0,10.0.1.255,new\n");
  EXPECT_FALSE(StatsOf(reader->Stats(), "geo4").read_index_current);
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.0.1.1")), "new (1)");
  ReaderKey keys[2];
  keys[0].key = "10.0.1.1";
  keys[1].key = "10.0.2.1";
  LookupResult results[2];
  EXPECT_EQ(reader->LookupMany("geo4", keys, 2, results), Code::kOk);
  EXPECT_EQ(Answer(results[0]), "new (1)");
  EXPECT_EQ(Answer(results[1]), "old (1)");

  // Maintenance builds the index of the new version, which answers the same.
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_TRUE(StatsOf(reader->Stats(), "geo4").read_index_current);
  EXPECT_EQ(StatsOf(reader->Stats(), "geo4").read_index_builds, 2u);
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.0.1.1")), "new (1)");
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.0.2.1")), "old (1)");
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.1.0.0")), "<miss>");
}

TEST(ReaderReadIndex, AMapOverItsBudgetIsAnsweredWithoutOneAndSaysWhy) {
  CliEnv env(std::string(kMaps) + "[map.small]\ntype = ranged\nkey_format = ipv4\nread_index_max_size = 1KiB\n");
  std::string rows;
  for (int i = 0; i < 200; ++i) rows += V4(0x0A000000u + i * 4) + "," + V4(0x0A000000u + i * 4 + 1) + ",v" + std::to_string(i) + "\n";
  LoadCsv(env, "small", "small.csv", rows);
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(Answer(reader->Lookup("small", "10.0.0.5")), "v1 (1)");
  EXPECT_EQ(Answer(reader->Lookup("small", "10.0.0.6")), "<miss>");
  const MapStats small = StatsOf(reader->Stats(), "small");  // a copy: the ReaderStats is a temporary
  EXPECT_EQ(small.read_index_bytes, 0u);
  EXPECT_FALSE(small.read_index_current);
  EXPECT_THAT(small.read_index_error, HasSubstr("map small: 400 range boundaries, more than the 129 allowed"));
  EXPECT_EQ(small.read_index_builds, 1u);
  // Maintenance does not read the whole map again to fail again: only a change of it is worth a new try.
  ASSERT_TRUE(reader->Maintain().ok());
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(StatsOf(reader->Stats(), "small").read_index_builds, 1u);
  LoadCsv(env, "small", "more.csv", "10.1.0.0,10.1.0.9,more\n");
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(StatsOf(reader->Stats(), "small").read_index_builds, 2u);
  EXPECT_EQ(Answer(reader->Lookup("small", "10.1.0.5")), "more (1)");
}

TEST(ReaderReadIndex, ABadReadIndexMaxSizeIsRefusedNamingTheKey) {
  for (const char* bad : {"lots", "-1", "1.5MiB", "10 MiBs", ""}) {
    CliEnv env(std::string("[map.geo4]\ntype = ranged\nkey_format = ipv4\nread_index_max_size = ") + bad + "\n");
    const ProcessResult r = env.Run({"stores"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("read_index_max_size: '" + std::string(bad) + "' is not a size")) << r.err;
  }
}

// Two releases alternate under lookups on three threads; every answer is one of them, never a miss.
TEST(ReaderReadIndex, LookupsDuringMergesAndRebuildsAnswerFromOneReleaseOrTheOther) {
  CliEnv env(kMaps);
  LoadCsv(env, "geo4", "a.csv", "10.0.0.0,10.0.255.255,a\n");
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home(), /*maintenance=*/0);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Prepare("geo4").ok());
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  std::set<std::string> allowed = {"a (1)", "b (1)"};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      ReaderKey keys[2];
      keys[0].key = "10.0.7.7";
      keys[1].key = "10.0.200.1";
      LookupResult results[2];
      while (!stop.load()) {
        if (t == 0) {
          if (allowed.count(Answer(reader->Lookup("geo4", "10.0.7.7"))) == 0) ++wrong;
        } else {
          (void)reader->LookupMany("geo4", keys, 2, results);
          for (const LookupResult& r : results) {
            if (allowed.count(Answer(r)) == 0) ++wrong;
          }
        }
      }
    });
  }
  for (int round = 0; round < 4; ++round) {
    const std::string value = round % 2 == 0 ? "b" : "a";
    const std::string csv = env.Write("r" + std::to_string(round) + ".csv", "from,to,value\n10.0.0.0,10.0.255.255," + value + "\n");
    const ProcessResult r = env.Run({"load", "--replace", "--format", "csv", "--map", "geo4", "--from", "from", "--to",
                                     "to", "--value", "value", csv});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(reader->Maintain().ok());
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(Answer(reader->Lookup("geo4", "10.0.7.7")), "a (1)");
}

}  // namespace
}  // namespace planb
