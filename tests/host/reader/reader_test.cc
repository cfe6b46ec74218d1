// planb::Reader on a single node (it reads the shards): every store type answers as `planb lookup` does, single
// and batched; misses, maps with no data, keys of the wrong kind and unknown maps; a merge seen by the next
// lookup; environments swapped under two looking-up threads; Readers destroyed before and after the threads that
// used them. Data is loaded by the real planb binary (another process, as in production).
#include "planb/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lmdb.h>

#include <map>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "host/common/iso_time.h"
#include "host/common/numbers.h"
#include "host/reader/reader_impl.h"
#include "support/reader_fixture.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using ::testing::HasSubstr;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SessionEvent;
using testing::TimedRef;

std::unique_ptr<Reader> OpenReader(const CliEnv& env, int64_t maintenance_interval_ms = 0) {
  return testing::OpenTestReader(env.config(), env.home(), maintenance_interval_ms);
}

void Load(const CliEnv& env, const std::string& name, const std::vector<std::string>& elements) {
  const ProcessResult r = env.Load({env.Write(name, ReferenceData(Lines(elements)))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}


struct Query {
  std::string map;
  std::string key;
  std::string time;  // "" = now
};

// What `planb lookup` prints: the answer line, "<miss>", or "<error>".
std::string CliAnswer(const CliEnv& env, const Query& q) {
  std::vector<std::string> args{"lookup", q.map, q.key};
  if (!q.time.empty()) args.insert(args.end(), {"--time", q.time});
  const ProcessResult r = env.Run(args);
  if (r.exit_code == 1) return "<miss>";
  if (r.exit_code != 0 || r.out.empty()) return "<error> " + r.err;
  return r.out.substr(0, r.out.size() - 1);
}

// The same answer from a LookupResult.
std::string Answer(const LookupResult& r, const MapInfo& info) {
  if (r.code == Code::kNotFound) return "<miss>";
  if (r.code != Code::kOk) return std::string("<error> ") + r.error;
  if (info.has_session) return FormatIsoTime(r.session_start_ms) + " " + FormatIsoTime(r.session_end_ms);
  return std::string(r.value.view());
}

ReaderKey KeyOf(const Query& q, const MapInfo& info) {
  ReaderKey key;
  if (info.number_keys) {
    EXPECT_TRUE(ParseInt64(q.key, &key.number)) << q.key;
  } else {
    key.key = q.key;
  }
  if (!q.time.empty()) {
    int64_t ms = 0;
    EXPECT_TRUE(ParseIsoTime(q.time, &ms)) << q.time;
    key.time = LookupTime::At(ms);
  }
  return key;
}

std::string ReaderAnswer(Reader& reader, const Query& q) {
  MapInfo info;
  Status s = reader.Describe(q.map, &info);
  if (!s.ok()) return "<describe failed> " + s.message();
  const ReaderKey key = KeyOf(q, info);
  LookupResult r;
  if (info.number_keys) {
    r = q.time.empty() ? reader.Lookup(q.map, key.number) : reader.Lookup(q.map, key.number, key.time);
  } else {
    r = q.time.empty() ? reader.Lookup(q.map, key.key) : reader.Lookup(q.map, key.key, key.time);
  }
  return Answer(r, info);
}

// Elements for every map of kTypedMapsConfig except the *_unused ones.
std::vector<std::string> TypedElements() {
  std::vector<std::string> e;
  for (const std::string& map : testing::kStateMaps) {
    e.push_back(TimedRef(map, "", "Paris", "France"));
    e.push_back(TimedRef(map, "", "Lyon", "France"));
    e.push_back(TimedRef(map, "", "Zürich &amp; &lt;Bern&gt;", "Switzerland"));  // XML-escaped
  }
  for (const std::string& map : testing::kTemporalMaps) {
    e.push_back(TimedRef(map, "2024-01-01T00:00:00.000Z", "user1", "sales"));
    e.push_back(TimedRef(map, "2024-02-01T12:00:00.500Z", "user1", "support"));
    e.push_back(TimedRef(map, "2024-01-15T00:00:00.000Z", "user2", "it"));
  }
  e.push_back(RangeRef("rg", "", "1", "100", "outer"));
  e.push_back(RangeRef("rg", "", "10", "20", "inner"));
  e.push_back(RangeRef("rg", "", "-100", "-50", "negative"));
  e.push_back(RangeRef("trg", "2024-01-01T00:00:00.000Z", "100", "200", "A"));
  e.push_back(RangeRef("trg", "2024-03-01T00:00:00.000Z", "100", "200", "B"));
  e.push_back(RangeRef("trg", "2024-02-01T00:00:00.000Z", "150", "160", "N"));
  for (const std::string& map : testing::kSessionMaps) {
    e.push_back(SessionEvent(map, "alice", "2024-01-01T10:00:00.000Z", "15m"));
    e.push_back(SessionEvent(map, "bob", "2024-01-01T10:00:00.000Z", "15m"));
    e.push_back(SessionEvent(map, "bob", "2024-01-01T10:10:00.000Z", "15m"));
  }
  return e;
}

std::vector<Query> TypedQueries() {
  std::vector<Query> q;
  for (const std::string& map : testing::kStateMaps) {
    for (const char* key : {"Paris", "Lyon", "Zürich & <Bern>", "Rome", "paris", ""}) q.push_back({map, key, ""});
  }
  for (const std::string& map : testing::kTemporalMaps) {
    for (const char* time : {"2023-12-31T23:59:59.999Z", "2024-01-01T00:00:00.000Z", "2024-02-01T12:00:00.499Z",
                             "2024-02-01T12:00:00.500Z", "2030-01-01T00:00:00.000Z", ""}) {
      q.push_back({map, "user1", time});
      q.push_back({map, "user2", time});
      q.push_back({map, "user3", time});
    }
  }
  for (const char* number : {"0", "1", "9", "10", "15", "20", "21", "100", "101", "-75", "-100", "-49",
                             "-9223372036854775808", "9223372036854775807"}) {
    q.push_back({"rg", number, ""});
  }
  for (const char* time : {"2023-06-01T00:00:00.000Z", "2024-01-10T00:00:00.000Z", "2024-02-10T00:00:00.000Z",
                           "2024-04-01T00:00:00.000Z", ""}) {
    for (const char* number : {"99", "100", "155", "170", "200", "201"}) q.push_back({"trg", number, time});
  }
  for (const std::string& map : testing::kSessionMaps) {
    for (const char* time : {"2024-01-01T09:59:59.999Z", "2024-01-01T10:00:00.000Z", "2024-01-01T10:12:00.000Z",
                             "2024-01-01T10:15:00.000Z", "2024-01-01T10:20:00.000Z", "2024-01-01T10:25:00.001Z"}) {
      q.push_back({map, "alice", time});
      q.push_back({map, "bob", time});
      q.push_back({map, "carol", time});
    }
  }
  return q;
}

TEST(Reader, EveryStoreTypeAnswersAsTheCliDoes) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  int found = 0;
  for (const Query& q : TypedQueries()) {
    const std::string expected = CliAnswer(env, q);
    ASSERT_EQ(expected.rfind("<error>", 0), std::string::npos) << q.map << " " << q.key << ": " << expected;
    EXPECT_EQ(ReaderAnswer(*reader, q), expected) << q.map << " '" << q.key << "' at '" << q.time << "'";
    found += expected != "<miss>";
  }
  EXPECT_GT(found, 40);  // the queries hit as well as miss
}

TEST(Reader, LookupManyAnswersAsSingleLookupsInOneBatchPerMap) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  std::map<std::string, std::vector<Query>> by_map;
  for (const Query& q : TypedQueries()) by_map[q.map].push_back(q);
  for (const auto& [map, queries] : by_map) {
    std::vector<std::string> expected;
    for (const Query& q : queries) expected.push_back(ReaderAnswer(*reader, q));
    MapInfo info;
    ASSERT_TRUE(reader->Describe(map, &info).ok());
    std::vector<ReaderKey> keys;
    for (const Query& q : queries) keys.push_back(KeyOf(q, info));
    std::vector<LookupResult> results(keys.size());
    EXPECT_EQ(reader->LookupMany(map, keys.data(), keys.size(), results.data()), Code::kOk) << map;
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(Answer(results[i], info), expected[i])
          << map << " '" << queries[i].key << "' at '" << queries[i].time << "'";
    }
  }
}

// Issue 11: time 0 once meant "now", so an event stamped 1970-01-01T00:00:00Z got today's answer. The epoch (and
// times before it) are instants like any other; "now" is LookupTime::Now().
TEST(Reader, TheEpochIsAnInstantNotNow) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "epoch.xml",
       {TimedRef("tm_hashed", "1970-01-01T00:00:00.000Z", "k", "epoch"),
        TimedRef("tm_hashed", "1969-12-31T23:59:59.999Z", "k", "before"),
        TimedRef("tm_hashed", "2024-01-01T00:00:00.000Z", "k", "later"),
        RangeRef("trg", "1970-01-01T00:00:00.000Z", "1", "9", "epoch"),
        RangeRef("trg", "2024-01-01T00:00:00.000Z", "1", "9", "later"),
        SessionEvent("ss_hashed", "s", "1970-01-01T00:00:00.000Z", "1s")});
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->Lookup("tm_hashed", "k", LookupTime::At(0)).value.view(), "epoch");
  EXPECT_EQ(reader->Lookup("tm_hashed", "k", LookupTime::At(-1)).value.view(), "before");
  EXPECT_EQ(reader->Lookup("tm_hashed", "k", LookupTime::Now()).value.view(), "later");
  EXPECT_EQ(reader->Lookup("tm_hashed", "k").value.view(), "later");
  EXPECT_EQ(reader->Lookup("trg", int64_t{5}, LookupTime::At(0)).value.view(), "epoch");
  EXPECT_EQ(reader->Lookup("trg", int64_t{5}).value.view(), "later");
  const LookupResult session = reader->Lookup("ss_hashed", "s", LookupTime::At(0));
  ASSERT_TRUE(session.found()) << session.error;
  EXPECT_EQ(session.session_start_ms, 0);
  EXPECT_EQ(session.session_end_ms, 1000);
  EXPECT_EQ(reader->Lookup("ss_hashed", "s").code, Code::kNotFound);

  ReaderKey keys[3];
  keys[0].key = "k";
  keys[0].time = LookupTime::At(0);
  keys[1].key = "k";  // now
  keys[2].key = "k";
  keys[2].time = LookupTime::At(-1);
  LookupResult results[3];
  ASSERT_EQ(reader->LookupMany("tm_hashed", keys, 3, results), Code::kOk);
  EXPECT_EQ(results[0].value.view(), "epoch");
  EXPECT_EQ(results[1].value.view(), "later");
  EXPECT_EQ(results[2].value.view(), "before");
}

TEST(Reader, DescribeSaysHowEachTypeIsLookedUp) {
  CliEnv env(testing::kTypedMapsConfig);
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  MapInfo info;
  ASSERT_TRUE(reader->Describe("st_hashed", &info).ok());
  EXPECT_EQ(info.type, "state");
  EXPECT_FALSE(info.number_keys || info.uses_time || info.has_session);
  EXPECT_TRUE(info.has_value);
  ASSERT_TRUE(reader->Describe("TRG", &info).ok());
  EXPECT_EQ(info.type, "temporal_ranged");
  EXPECT_TRUE(info.number_keys && info.uses_time && info.has_value);
  ASSERT_TRUE(reader->Describe("ss_direct", &info).ok());
  EXPECT_TRUE(info.uses_time && info.has_session);
  EXPECT_FALSE(info.number_keys || info.has_value);
}

TEST(Reader, AMissHasNothingButItsCode) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  const LookupResult text = reader->Lookup("st_hashed", "Atlantis");
  EXPECT_EQ(text.code, Code::kNotFound);
  EXPECT_FALSE(text.found());
  EXPECT_TRUE(text.value.empty());
  EXPECT_STREQ(text.error, "");
  const LookupResult number = reader->Lookup("rg", int64_t{5000});
  EXPECT_EQ(number.code, Code::kNotFound);
  EXPECT_STREQ(number.error, "");
  const LookupResult session = reader->Lookup("ss_hashed", "alice");  // now: long after the session
  EXPECT_EQ(session.code, Code::kNotFound);
  EXPECT_EQ(session.session_start_ms, 0);
}

// A map with no data on this node is an error of its own (kNoData) naming the map and the home, never a miss: a
// Reader given the wrong home answered PLANB_NOT_FOUND for keys that exist (issue 38, 14).
TEST(Reader, AMapWithNoDataIsKNoDataNamingTheMapAndTheHome) {
  CliEnv env(testing::kTypedMapsConfig);
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  const std::string why = "map tm_unused has no data on this node (home " + env.home() + ")";
  const LookupResult one = reader->Lookup("tm_unused", "k");
  EXPECT_EQ(one.code, Code::kNoData);
  EXPECT_THAT(one.error, HasSubstr(why));
  EXPECT_EQ(reader->Lookup("rg_unused", int64_t{1}).code, Code::kNoData);
  ReaderKey keys[2];
  keys[0].key = "a";
  keys[1].key = "b";
  LookupResult results[2];
  results[0].code = results[1].code = Code::kOk;  // overwritten
  EXPECT_EQ(reader->LookupMany("tm_unused", keys, 2, results), Code::kNoData);
  EXPECT_EQ(results[0].code, Code::kNoData);
  EXPECT_EQ(results[1].code, Code::kNoData);
  EXPECT_THAT(results[1].error, HasSubstr(why));
  const Status s = reader->Prepare("tm_unused");
  EXPECT_EQ(s.code(), Code::kNoData);
  EXPECT_THAT(s.message(), HasSubstr(why));
}

TEST(Reader, PrepareOpensAMapWithData) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  Status s = reader->Prepare("St_Hashed");
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(reader->Lookup("st_hashed", "Paris").value.view(), "France");
}

TEST(Reader, MapNamesMatchInAnyCase) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->Lookup("ST_HASHED", "Paris").value.view(), "France");
  EXPECT_EQ(reader->Lookup("st_Direct", "Lyon").value.view(), "France");
}

TEST(Reader, KeysOfTheWrongKindAreErrorsNamingTheMap) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "typed.xml", TypedElements());
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);

  LookupResult r = reader->Lookup("rg", "15");
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map rg (type ranged) is keyed by signed 64-bit numbers, not text"));
  r = reader->Lookup("st_hashed", int64_t{15});
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map st_hashed (type state) is keyed by text, not numbers"));
  r = reader->Lookup("st_hashed", "Paris", LookupTime::At(1700000000000));
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map st_hashed (type state) has no time"));
  r = reader->Lookup("rg", int64_t{15}, LookupTime::At(1700000000000));
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map rg (type ranged) has no time"));
  // Now, which every type accepts; the epoch is an instant like any other, so a type without time refuses it.
  EXPECT_EQ(reader->Lookup("st_hashed", "Paris", LookupTime::Now()).value.view(), "France");
  EXPECT_EQ(reader->Lookup("st_hashed", "Paris", LookupTime::At(0)).code, Code::kInvalidArgument);

  // In a batch only the wrong keys fail; the others are answered and the batch reports the error.
  ReaderKey keys[4];
  keys[0].key = "Paris";
  keys[1].key = "Lyon";
  keys[1].time = LookupTime::At(1700000000000);
  keys[2].number = 7;
  keys[3].key = "Rome";
  LookupResult results[4];
  EXPECT_EQ(reader->LookupMany("st_direct", keys, 4, results), Code::kInvalidArgument);
  EXPECT_EQ(results[0].value.view(), "France");
  EXPECT_EQ(results[1].code, Code::kInvalidArgument);
  EXPECT_THAT(results[1].error, HasSubstr("st_direct (type state) has no time"));
  EXPECT_EQ(results[2].code, Code::kInvalidArgument);
  EXPECT_THAT(results[2].error, HasSubstr("st_direct (type state) is keyed by text"));
  EXPECT_EQ(results[3].code, Code::kNotFound);
  ReaderKey number_keys[2];
  number_keys[0].number = 15;
  number_keys[1].key = "15";
  LookupResult number_results[2];
  EXPECT_EQ(reader->LookupMany("rg", number_keys, 2, number_results), Code::kInvalidArgument);
  EXPECT_EQ(number_results[0].value.view(), "inner");
  EXPECT_THAT(number_results[1].error, HasSubstr("map rg (type ranged) is keyed by signed 64-bit numbers"));
}

TEST(Reader, AnUnknownMapIsAnErrorNamingItAndTheConfiguredMaps) {
  CliEnv env(testing::kTypedMapsConfig);
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  LookupResult r = reader->Lookup("city_to_country", "Paris");
  EXPECT_EQ(r.code, Code::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("map 'city_to_country' is not in the config (configured maps: rg, rg_unused, "));
  EXPECT_THAT(r.error, HasSubstr("st_hashed"));
  r = reader->Lookup("nowhere", int64_t{3}, LookupTime::At(1));
  EXPECT_THAT(r.error, HasSubstr("map 'nowhere' is not in the config"));
  ReaderKey keys[2];
  LookupResult results[2];
  EXPECT_EQ(reader->LookupMany("nowhere", keys, 2, results), Code::kInvalidArgument);
  EXPECT_THAT(results[0].error, HasSubstr("'nowhere'"));
  EXPECT_THAT(results[1].error, HasSubstr("'nowhere'"));
  EXPECT_THAT(reader->Prepare("nowhere").message(), HasSubstr("map 'nowhere' is not in the config"));
  MapInfo info;
  const Status s = reader->Describe("nowhere", &info);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'nowhere'"));
}

TEST(Reader, OpenErrorsNameTheInput) {
  testing::TempDir dir;
  ReaderOptions options;
  options.config_path = dir / "missing.ini";
  options.home = dir / "home";
  std::unique_ptr<Reader> reader;
  Status s = Reader::Open(options, &reader);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("missing.ini"));
  EXPECT_EQ(reader, nullptr);

  testing::WriteFile(dir / "planb.ini", "[map.m]\ntype = no_such_type\n");
  options.config_path = dir / "planb.ini";
  s = Reader::Open(options, &reader);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no_such_type"));

  testing::WriteFile(dir / "planb.ini", "[map.m]\ntype = state\n");
  options.maintenance_interval_ms = -5;
  s = Reader::Open(options, &reader);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("maintenance_interval_ms is -5"));
}

TEST(Reader, AMergeIsSeenByTheNextLookup) {
  CliEnv env(testing::kTypedMapsConfig);
  Load(env, "first.xml", {TimedRef("st_hashed", "", "Paris", "France"), RangeRef("rg", "", "1", "9", "one")});
  std::unique_ptr<Reader> reader = OpenReader(env);
  ASSERT_NE(reader, nullptr);
  LookupResult r = reader->Lookup("st_hashed", "Paris");
  ASSERT_EQ(r.value.view(), "France");
  EXPECT_EQ(reader->Lookup("st_hashed", "Oslo").code, Code::kNotFound);
  EXPECT_EQ(reader->Lookup("rg", int64_t{5}).value.view(), "one");
  // Another process merges while this thread's transaction is still open on the old version.
  Load(env, "second.xml",
       {TimedRef("st_hashed", "", "Paris", "Texas"), TimedRef("st_hashed", "", "Oslo", "Norway"),
        RangeRef("rg", "", "5", "5", "five")});
  EXPECT_EQ(reader->Lookup("st_hashed", "Paris").value.view(), "Texas");
  EXPECT_EQ(reader->Lookup("st_hashed", "Oslo").value.view(), "Norway");
  EXPECT_EQ(reader->Lookup("rg", int64_t{5}).value.view(), "five");
}

}  // namespace
}  // namespace planb
