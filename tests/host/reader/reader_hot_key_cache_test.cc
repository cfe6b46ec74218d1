// The Reader's hot-key cache (host/reader/hot_key_cache.h) on State maps: a key asked again is answered from the
// thread's cache (hits and misses, single and batched, counted in Stats), never across a merge (the next lookup
// after a load answers the new value, however often the old one was asked); a batch's answers stay valid to its
// end even when a tiny cache is overwritten by the batch itself; lookup_cache_size = 0 turns it off, and malformed
// sizes are refused naming the key. Data is loaded by the real planb binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "planb/reader.h"
#include "support/reader_fixture.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::ProcessResult;

void Load(const CliEnv& env, const std::string& name, const std::vector<std::string>& elements) {
  const ProcessResult r = env.Load({env.Write(name, testing::ReferenceData(testing::Lines(elements)))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::string Answer(const LookupResult& r) {
  if (r.code == Code::kNotFound) return "<miss>";
  if (r.code != Code::kOk) return std::string("<error> ") + r.error;
  return std::string(r.value.view());
}

MapStats StatsOf(Reader& reader, const std::string& map) {
  for (const MapStats& m : reader.Stats().maps) {
    if (m.map == map) return m;
  }
  ADD_FAILURE() << "no stats for " << map;
  return MapStats();
}

TEST(ReaderHotKeyCache, ARepeatedKeyIsAnsweredFromTheCacheAndAMergeIsSeenAtOnce) {
  CliEnv env("[map.users]\ntype = state\nscheme = hashed\n");
  Load(env, "v1.xml", {testing::TimedRef("users", "2024-01-01T00:00:00Z", "alice", "v1")});
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(Answer(reader->Lookup("users", "alice")), "v1");
  EXPECT_EQ(StatsOf(*reader, "users").cache_answers, 0u);
  EXPECT_EQ(Answer(reader->Lookup("users", "alice")), "v1");
  EXPECT_EQ(Answer(reader->Lookup("users", "bob")), "<miss>");
  EXPECT_EQ(Answer(reader->Lookup("users", "bob")), "<miss>");  // misses are cached too
  EXPECT_EQ(StatsOf(*reader, "users").cache_answers, 2u);

  // A load merges: neither the cached value nor the cached miss may answer any more.
  Load(env, "v2.xml", {testing::TimedRef("users", "2024-02-01T00:00:00Z", "alice", "v2"),
                       testing::TimedRef("users", "2024-02-01T00:00:00Z", "bob", "b2")});
  EXPECT_EQ(Answer(reader->Lookup("users", "alice")), "v2");
  EXPECT_EQ(Answer(reader->Lookup("users", "bob")), "b2");
  ReaderKey keys[3];
  keys[0].key = "alice";
  keys[1].key = "bob";
  keys[2].key = "carol";
  LookupResult results[3];
  EXPECT_EQ(reader->LookupMany("users", keys, 3, results), Code::kOk);
  EXPECT_EQ(Answer(results[0]), "v2");
  EXPECT_EQ(Answer(results[1]), "b2");
  EXPECT_EQ(Answer(results[2]), "<miss>");
  EXPECT_EQ(StatsOf(*reader, "users").cache_answers, 4u);  // alice and bob again, from the cache
  Load(env, "v3.xml", {testing::TimedRef("users", "2024-03-01T00:00:00Z", "carol", "c3")});
  EXPECT_EQ(reader->LookupMany("users", keys, 3, results), Code::kOk);
  EXPECT_EQ(Answer(results[2]), "c3");
  const MapStats stats = StatsOf(*reader, "users");
  EXPECT_EQ(stats.found + stats.misses, 12u);
}

// Four slots and a batch of 600 keys that keep overwriting them: every answer must still be right when the
// batch returns (a slot a result points into is not overwritten until the next call).
TEST(ReaderHotKeyCache, ABatchsAnswersStayValidWhileTheBatchOverwritesATinyCache) {
  CliEnv env("[map.users]\ntype = state\nscheme = direct\nlookup_cache_size = 1KiB\n");
  std::vector<std::string> rows;
  for (int i = 0; i < 300; ++i) rows.push_back(testing::TimedRef("users", "", "k" + std::to_string(i), "v" + std::to_string(i)));
  Load(env, "all.xml", rows);
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  std::vector<std::string> names;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 300; ++i) names.push_back("k" + std::to_string(i % 7 == 0 ? 0 : i));
  }
  std::vector<ReaderKey> keys(names.size());
  for (size_t i = 0; i < names.size(); ++i) keys[i].key = names[i];
  std::vector<LookupResult> results(names.size());
  for (int call = 0; call < 3; ++call) {
    ASSERT_EQ(reader->LookupMany("users", keys.data(), keys.size(), results.data()), Code::kOk);
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(Answer(results[i]), "v" + names[i].substr(1)) << "call " << call << " key " << i;
    }
  }
  EXPECT_GT(StatsOf(*reader, "users").cache_answers, 0u);
}

TEST(ReaderHotKeyCache, ASizeOfZeroTurnsItOffAndBadSizesAreRefused) {
  CliEnv env("[map.users]\ntype = state\nlookup_cache_size = 0\n");
  Load(env, "v1.xml", {testing::TimedRef("users", "", "alice", "v1")});
  std::unique_ptr<Reader> reader = testing::OpenTestReader(env.config(), env.home());
  ASSERT_NE(reader, nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Answer(reader->Lookup("users", "alice")), "v1");
  EXPECT_EQ(StatsOf(*reader, "users").cache_answers, 0u);

  for (const char* bad : {"lots", "-1", "100", "1.5MiB", ""}) {
    CliEnv bad_env(std::string("[map.users]\ntype = state\nlookup_cache_size = ") + bad + "\n");
    const ProcessResult r = bad_env.Run({"stores"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("lookup_cache_size: '" + std::string(bad) + "'")) << r.err;
  }
}

}  // namespace
}  // namespace planb
