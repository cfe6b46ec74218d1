// The Session store's scheme suite: every key scheme in the plugin registry (value_dedup off and, where declared,
// on) beside a raw LMDB cursor baseline on the same sessions, in the same run. Rows load/<data>/ and merge/<data>/
// time writing a batch and merging one into a shard (support/scheme_suite.h); lookup rows: hits (inside, at the
// start and at the end of a session), misses in a gap between a key's sessions (or before the first, after the
// last) and misses of unknown keys; on synthetic events and, when ../shared/data is present, the git commit events and the Apache access log. Set PLANB_BENCH_ROWS for the
// synthetic number of events (default 50000), PLANB_BENCH_MIN_TIME for seconds per lookup row (default 0.1). Lookup
// rows carry the counters bytes_per_row (data.mdb's size over the events) and tree_bytes_per_row (the tables'
// pages in use; see RowBytes). No RocksDB row here: the state and temporal suites have one.
// merge_txn/<data>/lmdb_put_of_hashed_layout (and merge_update_txn/...) is raw's merge of the same rows written in
// the hashed scheme's layout (support/hashed_layout.h): the floor of a hashed merge, what its layout alone costs.
//
// The baseline is the obvious layout: LMDB key = key bytes + start + end (PutOrderedI64), empty value; a lookup
// seeks to (key, time, INT64_MAX), steps back unless it landed there, and walks back over the key's rows until
// one ends at or after the time (a hit) or starts before time - the longest session (a miss). The baseline gets
// that longest session from memory; Plan B reads its own from the shard on each lookup. The baseline's answers
// are checked against an in-memory model at setup, and strictly in the benchmark where they were all right;
// elsewhere the counter "right" gives its share of right answers (its key is not self-delimiting).
// Plan B's shards are built through the real path (StreamWriter -> staging -> MergeProcessor), in two streams
// (alternate events) so that keys are both written and merged, and read through MapReader, which keeps its read
// transaction open between lookups, as the baseline does. Every row reads its keys from one
// support/key_stream.h, laid end to end in query order.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "planb/encoding.h"
#include "planb/lmdb.h"
#include "support/hashed_layout.h"
#include "support/key_stream.h"
#include "support/ratio_reporter.h"
#include "support/scheme_suite.h"
#include "support/session_data.h"
#include "support/shard_setup.h"

namespace planb::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDay = int64_t{24} * 60 * 60 * 1000;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxRawKey = 511 - 16;

struct Query {
  std::string key;
  int64_t time_ms;
  int64_t expect_start;  // hits: the right answer
  int64_t expect_end;
};

struct QuerySet {
  std::string group;  // "session_hit/<fixture>"
  bool expect_hit;
  bool raw_right;  // the baseline answered every query right at setup
  std::vector<Query> queries;
  KeyStream keys;  // the queries' keys end to end, in query order: what the timed loops read
};

// Each key's sessions (start, end), sorted and without repeats, as the shard holds them.
using Sessions = std::vector<std::pair<int64_t, int64_t>>;
using Model = std::map<std::string, Sessions>;

// One event set loaded as raw LMDB and a shard per scheme.
struct Fixture {
  std::string name;
  std::vector<SessionEvent> events;
  uint64_t max_duration = 0;  // the longest session, for the baseline's walk
  std::vector<QuerySet> sets;
  SuiteRows suite;
  // The same rows in the hashed scheme's layout (raw merges' floor). Its update rows grow by "~~" (the stored key
  // is a value to the raw writer) where Plan B's stay as they are: read its merge_update_txn row as an upper bound.
  SuiteRows hashed_layout_suite;
  SchemeShards shards;
  RowBytes raw_bytes;
  Env raw_env;
  Txn raw_txn;
  Cursor raw_cursor;
  MDB_dbi raw_dbi = 0;
};

// Of the sessions of `key` containing `time`, the one with the latest start, then the latest end: every session
// starting at or before `time` is looked at, with no bound on durations.
bool ModelLookup(const Model& model, const std::string& key, int64_t time, int64_t* start, int64_t* end) {
  auto it = model.find(key);
  if (it == model.end()) return false;
  const Sessions& sessions = it->second;
  for (auto s = std::upper_bound(sessions.begin(), sessions.end(), std::pair{time, kMax}); s != sessions.begin();) {
    --s;
    if (s->second >= time) {
      *start = s->first;
      *end = s->second;
      return true;
    }
  }
  return false;
}

bool RawLookup(MDB_cursor* cursor, Bytes key, int64_t time, uint64_t max_duration, int64_t* start, int64_t* end) {
  if (key.size > kMaxRawKey) return false;
  uint8_t probe[kMaxRawKey + 16];
  std::memcpy(probe, key.data, key.size);
  PutOrderedI64(probe + key.size, time);
  PutOrderedI64(probe + key.size + 8, kMax);
  const uint64_t span = static_cast<uint64_t>(time) - static_cast<uint64_t>(kMin);
  const int64_t min_start =
      max_duration >= span ? kMin : static_cast<int64_t>(static_cast<uint64_t>(time) - max_duration);
  MDB_val k{key.size + 16, probe};
  MDB_val v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
  if (rc == MDB_SUCCESS) {
    if (k.mv_size != key.size + 16 || std::memcmp(k.mv_data, probe, key.size + 16) != 0) {
      rc = mdb_cursor_get(cursor, &k, &v, MDB_PREV);
    }
  } else if (rc == MDB_NOTFOUND) {
    rc = mdb_cursor_get(cursor, &k, &v, MDB_LAST);
  }
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_PREV)) {
    if (k.mv_size != key.size + 16 || std::memcmp(k.mv_data, key.data, key.size) != 0) return false;
    const auto* bounds = static_cast<const uint8_t*>(k.mv_data) + key.size;
    const int64_t s = GetOrderedI64(bounds);
    if (s < min_start) return false;
    const int64_t e = GetOrderedI64(bounds + 8);
    if (e >= time) {
      *start = s;
      *end = e;
      return true;
    }
  }
  return false;
}

void BuildRaw(const std::string& dir, Fixture* f) {
  fs::create_directories(dir);
  Env::Options options;
  CheckSetup(f->raw_env.Open(dir, options));
  Txn txn;
  CheckSetup(txn.Begin(f->raw_env.get(), 0));
  CheckSetup(txn.OpenDbi("data", MDB_CREATE, &f->raw_dbi));
  std::string key;
  for (const SessionEvent& e : f->events) {
    key.assign(e.key);
    key.resize(e.key.size() + 16);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&key[e.key.size()]), e.time_ms);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&key[e.key.size() + 8]), e.time_ms + e.timeout_ms);
    CheckSetup(txn.Put(f->raw_dbi, Bytes(key), Bytes()));
  }
  CheckSetup(txn.Commit());
  CheckSetup(f->raw_txn.Begin(f->raw_env.get(), MDB_RDONLY));
  CheckSetup(f->raw_cursor.Open(f->raw_txn.get(), f->raw_dbi));
}

void BuildPlanB(const std::string& dir, Fixture* f) {
  Fixture* p = f;
  f->suite.name = f->name;
  f->suite.type = "session";
  f->suite.count = f->events.size();
  f->suite.record = [p](size_t i, Record* record) {
    const SessionEvent& e = p->events[i];
    record->kind = RecordKind::kSession;
    record->has_key = record->time_given = record->has_timeout = true;
    record->key = Bytes(e.key);
    record->time_ms = e.time_ms;
    record->timeout_ms = e.timeout_ms;
  };
  // The baseline's layout: key bytes + start + end (ordered), empty value.
  f->suite.raw = [p](size_t i, std::string* key, std::string* value) {
    const SessionEvent& e = p->events[i];
    key->assign(e.key);
    key->resize(e.key.size() + 16);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[e.key.size()]), e.time_ms);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[e.key.size() + 8]), e.time_ms + e.timeout_ms);
    value->clear();
  };
  f->hashed_layout_suite = f->suite;
  f->hashed_layout_suite.raw = [p](size_t i, std::string* key, std::string* value) {
    const SessionEvent& e = p->events[i];
    *key = HashedLayoutKey(e.key);
    key->resize(kHashedLayoutKeySize + 16);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[kHashedLayoutKeySize]), e.time_ms);
    PutOrderedI64(reinterpret_cast<uint8_t*>(&(*key)[kHashedLayoutKeySize + 8]), e.time_ms + e.timeout_ms);
    *value = HashedLayoutStoredKey(e.key);
  };
  f->raw_bytes = MeasureRowBytes(f->raw_env.get(), dir + "/raw", f->events.size());
  BuildSchemeShards(dir + "/planb", f->suite, &f->shards);
}

void Fail(const char* what, const std::string& key, int64_t time) {
  std::fprintf(stderr, "bench setup: %s query %s at %lld is wrong\n", what, key.c_str(), static_cast<long long>(time));
  std::exit(1);
}

// Hits: a time in a random event's session (now and then exactly its start or end). Gap misses: a time in no
// session of a key (between the reach of its earlier sessions and the next start, or before the first, or after
// the last). No-key misses: an unknown key (the last byte changed) at an event's time.
void PickQueries(Fixture* f, const Model& model) {
  std::mt19937_64 rng(7);
  const size_t n = std::min<size_t>(f->events.size(), 200000);
  QuerySet hits{"session_hit/" + f->name, true, true, {}, {}};
  QuerySet gap{"session_miss_gap/" + f->name, false, true, {}, {}};
  QuerySet no_key{"session_miss_no_key/" + f->name, false, true, {}, {}};
  for (size_t i = 0; i < n; ++i) {
    const SessionEvent& e = f->events[rng() % f->events.size()];
    const uint64_t pick = rng() % 8;
    const int64_t time = pick == 0   ? e.time_ms
                         : pick == 1 ? e.time_ms + e.timeout_ms
                                     : e.time_ms + static_cast<int64_t>(rng() % (e.timeout_ms + 1));
    Query q{e.key, time, 0, 0};
    if (!ModelLookup(model, q.key, time, &q.expect_start, &q.expect_end)) Fail("hit", q.key, time);
    hits.queries.push_back(std::move(q));

    std::string absent = e.key;
    absent.back() = absent.back() == '~' ? '}' : '~';
    if (model.count(absent) != 0) absent += "~absent";
    no_key.queries.push_back({absent, e.time_ms, 0, 0});
  }
  for (const auto& [key, sessions] : model) {
    int64_t reach = sessions.front().first - 1 - static_cast<int64_t>(rng() % kDay);
    gap.queries.push_back({key, reach, 0, 0});
    reach = kMin;
    for (const auto& [start, end] : sessions) {
      if (reach != kMin && reach + 1 < start) {
        gap.queries.push_back(
            {key, reach + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(start - reach - 1)), 0, 0});
      }
      reach = std::max(reach, end);
    }
    gap.queries.push_back({key, reach + 1 + static_cast<int64_t>(rng() % kDay), 0, 0});
  }
  std::shuffle(gap.queries.begin(), gap.queries.end(), rng);
  if (gap.queries.size() > n) gap.queries.resize(n);
  for (const Query& q : gap.queries) {
    int64_t start = 0;
    int64_t end = 0;
    if (ModelLookup(model, q.key, q.time_ms, &start, &end)) Fail("gap miss", q.key, q.time_ms);
  }
  for (QuerySet* set : {&hits, &gap, &no_key}) {
    for (const Query& q : set->queries) set->keys.Add(q.key);
    f->sets.push_back(std::move(*set));
  }
}

// Runs every query once through the baseline and compares it with the model.
void CheckRawAnswers(Fixture* f) {
  for (QuerySet& set : f->sets) {
    size_t right = 0;
    for (const Query& q : set.queries) {
      int64_t start = 0;
      int64_t end = 0;
      const bool found = RawLookup(f->raw_cursor.get(), Bytes(q.key), q.time_ms, f->max_duration, &start, &end);
      right += found == set.expect_hit && (!found || (start == q.expect_start && end == q.expect_end)) ? 1 : 0;
    }
    set.raw_right = right == set.queries.size();
    if (!set.raw_right) {
      std::fprintf(stderr, "note: %s: the raw baseline answers %zu of %zu right (its keys are not self-delimiting)\n",
                   set.group.c_str(), right, set.queries.size());
    }
  }
}

std::unique_ptr<Fixture> MakeFixture(const std::string& root, std::string name, std::vector<SessionEvent> events) {
  auto f = std::make_unique<Fixture>();
  f->name = std::move(name);
  f->events = std::move(events);
  Model model;
  for (const SessionEvent& e : f->events) {
    model[e.key].emplace_back(e.time_ms, e.time_ms + e.timeout_ms);
    f->max_duration = std::max(f->max_duration, static_cast<uint64_t>(e.timeout_ms));
  }
  for (auto& [key, sessions] : model) {
    std::sort(sessions.begin(), sessions.end());
    sessions.erase(std::unique(sessions.begin(), sessions.end()), sessions.end());
  }
  PickQueries(f.get(), model);
  const std::string dir = root + "/" + f->name;
  std::fprintf(stderr, "%s: %zu events: building raw LMDB and every scheme's shard...\n", f->name.c_str(),
               f->events.size());
  BuildRaw(dir + "/raw", f.get());
  CheckRawAnswers(f.get());
  BuildPlanB(dir, f.get());
  return f;
}

void RawGet(benchmark::State& state, Fixture* f, const QuerySet* set) {
  size_t i = 0;
  size_t found = 0;
  MDB_cursor* cursor = f->raw_cursor.get();
  const uint64_t max_duration = f->max_duration;
  for (auto _ : state) {
    const Query& q = set->queries[i];
    int64_t start = 0;
    int64_t end = 0;
    const bool hit = RawLookup(cursor, Bytes(set->keys[i]), q.time_ms, max_duration, &start, &end);
    found += hit && (!set->expect_hit || (start == q.expect_start && end == q.expect_end)) ? 1 : 0;
    benchmark::DoNotOptimize(end);
    if (++i == set->queries.size()) i = 0;
  }
  SetRowBytes(state, f->raw_bytes);
  if (set->raw_right) {
    CheckFound(state, found, 0, set->expect_hit, "raw cursor");
  } else {
    const double share = static_cast<double>(found) / static_cast<double>(state.iterations());
    state.counters["right"] = set->expect_hit ? share : 1 - share;
  }
}

void PlanBGet(benchmark::State& state, Fixture* f, size_t variant, const QuerySet* set) {
  const MapReader* reader = f->shards.readers[variant].get();
  size_t i = 0;
  size_t found = 0;
  size_t errors = 0;
  LookupKey key;
  Row row;
  ErrorBuffer error;
  for (auto _ : state) {
    const Query& q = set->queries[i];
    key.key = Bytes(set->keys[i]);
    key.time_ms = q.time_ms;
    const Code code = reader->Lookup(key, &row, &error);
    found += code == Code::kOk && (!set->expect_hit ||
                                   (row.session_start_ms == q.expect_start && row.session_end_ms == q.expect_end))
                 ? 1
                 : 0;
    errors += code != Code::kOk && code != Code::kNotFound ? 1 : 0;
    benchmark::DoNotOptimize(row);
    if (++i == set->queries.size()) i = 0;
  }
  SetRowBytes(state, f->shards.row_bytes[variant]);
  CheckFound(state, found, errors, set->expect_hit, "Session", error.message);
}

void Register(Fixture* f, const std::string& root) {
  RegisterLoadAndMerge(&f->suite, &f->shards, root);
  RegisterRawMergeFloor(&f->hashed_layout_suite, "lmdb_put_of_hashed_layout", root);
  std::vector<std::string> groups;
  for (const QuerySet& set : f->sets) {
    groups.push_back(set.group);
    benchmark::RegisterBenchmark((set.group + "/raw_cursor").c_str(), RawGet, f, &set)->MinTime(LookupMinTime());
    for (size_t v = 0; v < f->shards.variants.size(); ++v) {
      benchmark::RegisterBenchmark((set.group + "/session_" + f->shards.variants[v].label).c_str(), PlanBGet, f, v,
                                   &set)
          ->MinTime(LookupMinTime());
    }
  }
  ReportRefused(f->shards, groups);
}

}  // namespace
}  // namespace planb::bench

int main(int argc, char** argv) {
  using namespace planb::bench;
  benchmark::Initialize(&argc, argv);
  const std::string root = MakeBenchRoot("session-bench");
  std::vector<std::unique_ptr<Fixture>> fixtures;
  const size_t synthetic = std::getenv("PLANB_BENCH_ROWS") ? std::stoul(std::getenv("PLANB_BENCH_ROWS")) : 50000;
  std::fprintf(stderr, "building shards of %zu synthetic session events...\n", synthetic);
  fixtures.push_back(MakeFixture(root, "synthetic_" + std::to_string(synthetic), SyntheticSessionEvents(synthetic)));
  for (auto [name, read] :
       {std::pair{"git_commit_authors", &GitCommitEvents}, std::pair{"apache_log_ips", &ApacheLogEvents}}) {
    std::string why;
    std::vector<SessionEvent> events = read(&why);
    if (events.empty()) {
      std::fprintf(stderr, "skipping real data: %s\n", why.c_str());
      continue;
    }
    std::fprintf(stderr, "building shards of %zu %s events...\n", events.size(), name);
    fixtures.push_back(MakeFixture(root, name, std::move(events)));
  }
  for (auto& f : fixtures) Register(f.get(), root);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  fixtures.clear();
  return 0;
}
