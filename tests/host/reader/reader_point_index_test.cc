// The Reader's read index of text-keyed maps (host/reader/point_answer_index.h):
// - it answers exactly what the store type answers (a second Reader on the same home with read_index_max_size = 0
//   and no hot-key cache asks the store type), for every key of State maps under every scheme of the matrix:
//   keys replaced by later loads, deleted keys, absent keys, keys that differ only in case, empty and over-long
//   keys, XML and JSON values; single lookups and batches, with keys of the wrong kind mixed in;
// - maintenance builds it, not the first lookup; it is never consulted for another version of the map: a merge is
//   answered by the very next lookup, single and batched, and the next maintenance builds a new one;
// - a map over its read_index_max_size answers without one and says why in Stats;
// - lookups on several threads while merges and rebuilds go on answer from one release or the other.
// Data is loaded by the real planb binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"
#include "support/reader_fixture.h"
#include "support/scheme_matrix.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;

std::string Answer(const LookupResult& r) {
  if (r.code == Code::kNotFound) return "<miss>";
  if (r.code != Code::kOk) return std::string("<error ") + CodeName(r.code) + "> " + r.error;
  return std::string(r.value.view()) + " (" + std::to_string(static_cast<int>(r.value_type)) + ")";
}

MapStats StatsOf(const Reader& reader, const std::string& map) {
  for (const MapStats& m : reader.Stats().maps) {
    if (m.map == map) return m;
  }
  ADD_FAILURE() << "no stats for " << map;
  return MapStats();
}

// The same config on the same home without read indexes or hot-key caches: its Reader asks the store type.
std::unique_ptr<Reader> OpenPlain(const CliEnv& env, const std::string& maps) {
  std::string text;
  for (size_t at = maps.find("[map."); at != std::string::npos;) {
    const size_t next = maps.find("[map.", at + 1);
    text += maps.substr(at, next == std::string::npos ? std::string::npos : next - at) +
            "read_index_max_size = 0\nlookup_cache_size = 0\n";
    at = next;
  }
  return testing::OpenTestReader(env.Write("plain.ini", text), env.home());
}

void Load(const CliEnv& env, const std::string& name, const std::vector<std::string>& records) {
  const ProcessResult r = env.Load({env.Write(name, testing::ReferenceData(testing::Lines(records)))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Asks both Readers every key, one by one and in one batch (with a key of the wrong kind and one with a time
// woven in every 50 keys); returns how many the store type found.
size_t ExpectSameAnswers(Reader& indexed, Reader& plain, const std::string& map, const std::vector<std::string>& keys) {
  size_t found = 0;
  std::vector<ReaderKey> batch;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string expected = Answer(plain.Lookup(map, keys[i]));
    EXPECT_EQ(Answer(indexed.Lookup(map, keys[i])), expected) << map << " '" << keys[i] << "'";
    found += expected.rfind("<", 0) != 0;
    if (i % 50 == 7) {
      ReaderKey number;
      number.number = 7;
      batch.push_back(number);
      ReaderKey timed;
      timed.key = keys[i];
      timed.time = LookupTime::At(1);
      batch.push_back(timed);
    }
    ReaderKey key;
    key.key = keys[i];
    batch.push_back(key);
  }
  std::vector<LookupResult> a(batch.size()), b(batch.size());
  EXPECT_EQ(indexed.LookupMany(map, batch.data(), batch.size(), a.data()),
            plain.LookupMany(map, batch.data(), batch.size(), b.data()));
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(Answer(a[i]), Answer(b[i])) << map << " batched '" << batch[i].key << "' #" << batch[i].number;
  }
  return found;
}

TEST(ReaderPointIndex, AnswersEveryKeyAsTheStoreTypeDoesUnderEveryScheme) {
  const std::string maps = SchemeMapSections("st", "state");
  const std::vector<std::string> names = SchemeMapNames("st");
  CliEnv env(maps);
  std::mt19937_64 random(5);
  std::vector<std::string> keys;
  std::vector<std::string> first, second;
  for (int i = 0; i < 400; ++i) {
    std::string key = "k" + std::to_string(i) + std::string(random() % 40, 'x');
    if (i % 37 == 0) key = "Lyon" + std::to_string(i);
    if (i % 41 == 0) key = "caf\xC3\xA9-" + std::to_string(i);  // UTF-8
    if (i % 43 == 0) key = std::to_string(i);                   // short: the direct form of mixed schemes
    keys.push_back(key);
    std::string value = "v" + std::to_string(i) + std::string(i % 3 == 0 ? 40 : 0, 'v');  // value_dedup's table too
    if (i % 11 == 0) value = "<city xmlns=\"urn:c\"><n>" + std::to_string(i) + "</n></city>";
    for (const std::string& map : names) {
      first.push_back(testing::TimedRef(map, "2024-01-01T00:00:00Z", key, value));
      // A later effective time replaces every fifth key; an earlier one must lose.
      if (i % 5 == 0) second.push_back(testing::TimedRef(map, "2024-06-01T00:00:00Z", key, "new-" + value));
      if (i % 7 == 0) second.push_back(testing::TimedRef(map, "2023-01-01T00:00:00Z", key, "old-" + value));
    }
  }
  Load(env, "first.xml", first);
  Load(env, "second.xml", second);
  for (const std::string& map : names) {
    const ProcessResult r =
        env.Run({"delete", map, "--where", "Key startsWith 'k1'", "--effective-time", "2025-01-01T00:00:00Z"});
    ASSERT_EQ(r.exit_code, 0) << map << ": " << r.err;
  }
  std::vector<std::string> asked = keys;
  for (const std::string& key : {std::string("lyon0"), std::string("LYON0"), std::string("k"), std::string(""),
                                 std::string(600, 'k'), std::string("k2\0", 3), std::string("absent")}) {
    asked.push_back(key);
  }

  std::unique_ptr<Reader> indexed = testing::OpenTestReader(env.config(), env.home());
  std::unique_ptr<Reader> plain = OpenPlain(env, maps);
  ASSERT_NE(indexed, nullptr);
  ASSERT_NE(plain, nullptr);
  for (const std::string& map : names) ASSERT_TRUE(indexed->Prepare(map).ok()) << map;
  for (const std::string& map : names) {
    EXPECT_EQ(StatsOf(*indexed, map).read_index_builds, 0u) << map << ": opening a map builds no point index";
  }
  ASSERT_TRUE(indexed->Maintain().ok());
  for (const std::string& map : names) {
    const MapStats stats = StatsOf(*indexed, map);
    ASSERT_TRUE(stats.read_index_current) << map << ": " << stats.read_index_error;
    EXPECT_GT(stats.read_index_bytes, 0u) << map;
    const size_t found = ExpectSameAnswers(*indexed, *plain, map, asked);
    EXPECT_GT(found, keys.size() / 2) << map;
    EXPECT_LT(found, keys.size()) << map << ": the deleted keys are gone";
    EXPECT_EQ(StatsOf(*plain, map).read_index_bytes, 0u) << map;
  }
  EXPECT_EQ(Answer(indexed->Lookup("st_hashed", keys[5])), "new-v5 (1)");
  EXPECT_EQ(Answer(indexed->Lookup("st_hashed", keys[7])), "v7 (1)") << "an earlier time loses";
  EXPECT_EQ(Answer(indexed->Lookup("st_hashed", "k1")), "<miss>") << "deleted";
}

TEST(ReaderPointIndex, AMergeIsAnsweredByTheNextLookupAndMaintenanceBuildsANewIndex) {
  CliEnv env("[map.m]\ntype = state\n");
  Load(env, "a.xml",
       {testing::TimedRef("m", "2024-01-01T00:00:00Z", "Paris", "old"),
        testing::TimedRef("m", "2024-01-01T00:00:00Z", "Rome", "kept")});
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home(), /*maintenance=*/0);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Maintain().ok());  // nothing open yet: nothing to index
  EXPECT_EQ(Answer(reader->Lookup("m", "Paris")), "old (1)");
  EXPECT_EQ(StatsOf(*reader, "m").read_index_builds, 0u);
  ASSERT_TRUE(reader->Maintain().ok());
  ASSERT_TRUE(StatsOf(*reader, "m").read_index_current) << StatsOf(*reader, "m").read_index_error;
  EXPECT_EQ(Answer(reader->Lookup("m", "Paris")), "old (1)");

  // A newer value merged since: the index describes the previous version and must not answer.
  Load(env, "b.xml",
       {testing::TimedRef("m", "2024-02-01T00:00:00Z", "Paris", "new"),
        testing::TimedRef("m", "2024-02-01T00:00:00Z", "Oslo", "added")});
  EXPECT_FALSE(StatsOf(*reader, "m").read_index_current);
  EXPECT_EQ(Answer(reader->Lookup("m", "Paris")), "new (1)");
  ReaderKey keys[3];
  keys[0].key = "Paris";
  keys[1].key = "Rome";
  keys[2].key = "Oslo";
  LookupResult results[3];
  EXPECT_EQ(reader->LookupMany("m", keys, 3, results), Code::kOk);
  EXPECT_EQ(Answer(results[0]), "new (1)");
  EXPECT_EQ(Answer(results[1]), "kept (1)");
  EXPECT_EQ(Answer(results[2]), "added (1)");

  // Maintenance spends at most a tenth of its time building (map_slot.cc): the next build may wait nine times as
  // long as the last one took, which on a loaded machine can outlast the load above. So maintain until it comes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    ASSERT_TRUE(reader->Maintain().ok());
  } while (!StatsOf(*reader, "m").read_index_current && std::chrono::steady_clock::now() < deadline);
  EXPECT_TRUE(StatsOf(*reader, "m").read_index_current);
  EXPECT_EQ(StatsOf(*reader, "m").read_index_builds, 2u);
  EXPECT_EQ(reader->LookupMany("m", keys, 3, results), Code::kOk);
  EXPECT_EQ(Answer(results[0]), "new (1)");
  EXPECT_EQ(Answer(results[2]), "added (1)");
  EXPECT_EQ(Answer(reader->Lookup("m", "Berlin")), "<miss>");
}

TEST(ReaderPointIndex, AMapOverItsBudgetIsAnsweredWithoutOneAndSaysWhy) {
  CliEnv env("[map.small]\ntype = state\nread_index_max_size = 2KiB\n");
  std::vector<std::string> records;
  for (int i = 0; i < 200; ++i) records.push_back(testing::TimedRef("small", "", "key-" + std::to_string(i), "v"));
  Load(env, "small.xml", records);
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(Answer(reader->Lookup("small", "key-5")), "v (1)");
  ASSERT_TRUE(reader->Maintain().ok());
  const MapStats small = StatsOf(*reader, "small");
  EXPECT_EQ(small.read_index_bytes, 0u);
  EXPECT_FALSE(small.read_index_current);
  EXPECT_THAT(small.read_index_error, HasSubstr("map small: its read index would take more than read_index_max_size "
                                                "(2048 bytes)"));
  EXPECT_EQ(small.read_index_builds, 1u);
  EXPECT_EQ(Answer(reader->Lookup("small", "key-199")), "v (1)");
  // Maintenance does not read the whole map again to fail again: only a change of it is worth a new try.
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(StatsOf(*reader, "small").read_index_builds, 1u);
  Load(env, "more.xml", {testing::TimedRef("small", "", "more", "m")});
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(StatsOf(*reader, "small").read_index_builds, 2u);
  EXPECT_EQ(Answer(reader->Lookup("small", "more")), "m (1)");
}

TEST(ReaderPointIndex, StoresReportsTheIndexAMapWouldHave) {
  CliEnv env(
      "[map.m]\ntype = state\n[map.tiny]\ntype = state\nread_index_max_size = 1KiB\n"
      "[map.none]\ntype = state\nread_index_max_size = 0\n[map.t]\ntype = temporal\n");
  std::vector<std::string> records;
  for (int i = 0; i < 100; ++i) {
    for (const char* map : {"m", "tiny", "none", "t"}) {
      records.push_back(testing::TimedRef(map, "", "key-" + std::to_string(i), "value-" + std::to_string(i)));
    }
  }
  Load(env, "all.xml", records);
  const ProcessResult r = env.Run({"stores", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> stores;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  for (const nlohmann::json& m : doc["maps"]) stores[m["map"].get<std::string>()] = m;
  // 100 entries of 8 + 5..6 + 7..8 bytes, 8-aligned (24 each), and a directory of 32 buckets and their end, 4 bytes
  // each.
  EXPECT_EQ(stores["m"]["read_index_bytes"], 100 * 24 + 33 * 4) << r.out;
  EXPECT_TRUE(stores["m"]["read_index_note"].is_null()) << r.out;
  EXPECT_EQ(stores["tiny"]["read_index_note"], "over") << r.out;
  EXPECT_EQ(stores["none"]["read_index_note"], "off") << r.out;
  EXPECT_TRUE(stores["t"]["read_index_max_size"].is_null()) << "temporal maps have none: " << r.out;
  // And the Reader holds the same.
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Prepare("m").ok());
  ASSERT_TRUE(reader->Maintain().ok());
  EXPECT_EQ(StatsOf(*reader, "m").read_index_bytes, 100u * 24 + 33 * 4);
}

// Two releases alternate under lookups on three threads; every answer is one of them, never a miss.
TEST(ReaderPointIndex, LookupsDuringMergesAndRebuildsAnswerFromOneReleaseOrTheOther) {
  CliEnv env("[map.m]\ntype = state\n");
  auto release = [&env](int round, const std::string& value) {
    std::vector<std::string> records;
    for (int i = 0; i < 50; ++i) records.push_back(testing::TimedRef("m", "", "key-" + std::to_string(i), value));
    const std::string file =
        env.Write("r" + std::to_string(round) + ".xml", testing::ReferenceData(testing::Lines(records)));
    const ProcessResult r = env.Run({"load", "--replace", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  release(0, "a");
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home(), /*maintenance=*/0);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Prepare("m").ok());
  ASSERT_TRUE(reader->Maintain().ok());
  ASSERT_TRUE(StatsOf(*reader, "m").read_index_current);
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  const std::set<std::string> allowed = {"a (1)", "b (1)"};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      ReaderKey keys[20];
      std::string names[20];
      for (int i = 0; i < 20; ++i) {
        names[i] = "key-" + std::to_string(i * 2 + t % 2);
        keys[i].key = names[i];
      }
      LookupResult results[20];
      while (!stop.load()) {
        if (t == 0) {
          if (allowed.count(Answer(reader->Lookup("m", "key-7"))) == 0) ++wrong;
        } else {
          (void)reader->LookupMany("m", keys, 20, results);
          for (const LookupResult& r : results) {
            if (allowed.count(Answer(r)) == 0) ++wrong;
          }
        }
      }
    });
  }
  for (int round = 1; round <= 4; ++round) {
    release(round, round % 2 == 1 ? "b" : "a");
    EXPECT_TRUE(reader->Maintain().ok());
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(Answer(reader->Lookup("m", "key-7")), "a (1)");
  // As above: the duty-cycle limit may put the last rebuild off for a few rounds of maintenance.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!StatsOf(*reader, "m").read_index_current && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(reader->Maintain().ok());
  }
  EXPECT_TRUE(StatsOf(*reader, "m").read_index_current);
}

}  // namespace
}  // namespace planb
