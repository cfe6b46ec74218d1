// Random input through the real binary, each answer checked against a simple in-memory model fed the same
// records: nested and overlapping ranges, versions over time, overlapping sessions. Kept to a few hundred planb
// runs; the plugin tests compare thousands of lookups in-process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "host/cli/cli_test_env.h"
#include "support/typed_maps.h"

namespace planb {
namespace {

using testing::CliEnv;
using testing::kTypedMapsConfig;
using testing::Lines;
using testing::ProcessResult;
using testing::RangeRef;
using testing::ReferenceData;
using testing::SessionEvent;
using testing::TimedRef;
using Strings = std::vector<std::string>;

constexpr int64_t kBaseMs = 1704067200000;  // 2024-01-01T00:00:00.000Z
constexpr int64_t kSpanMs = 10LL * 24 * 3600 * 1000;
constexpr int kLookups = 60;

// Milliseconds since the epoch as ISO-8601 UTC with milliseconds (days to civil date: H. Hinnant's algorithm).
std::string Iso(int64_t ms) {
  int64_t days = ms / 86400000, rest = ms % 86400000;
  if (rest < 0) {
    rest += 86400000;
    --days;
  }
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2);
  char text[64];
  std::snprintf(text, sizeof(text), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(year),
                static_cast<long long>(month), static_cast<long long>(day), static_cast<long long>(rest / 3600000),
                static_cast<long long>(rest / 60000 % 60), static_cast<long long>(rest / 1000 % 60),
                static_cast<long long>(rest % 1000));
  return text;
}

// Exit 0 with `expected`, or exit 1 when the model has no answer.
void ExpectAnswer(const ProcessResult& r, const std::optional<std::string>& expected, const std::string& what) {
  if (expected) {
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
    EXPECT_EQ(r.out, *expected + "\n") << what;
  } else {
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "") << what;
  }
}

// Distinct random times inside [kBaseMs, kBaseMs + kSpanMs).
class Times {
 public:
  explicit Times(std::mt19937_64* rng) : rng_(rng) {}
  int64_t Next() {
    for (;;) {
      const int64_t t = kBaseMs + static_cast<int64_t>((*rng_)() % kSpanMs);
      if (used_.insert(t).second) return t;
    }
  }
  int64_t Any() { return kBaseMs - 3600000 + static_cast<int64_t>((*rng_)() % (kSpanMs + 7200000)); }

 private:
  std::mt19937_64* rng_;
  std::set<int64_t> used_;
};

TEST(CliRandomLookup, RangedMatchesTheNarrowestContainingRangeModel) {
  std::mt19937_64 rng(20240101);
  struct Range {
    int64_t from, to;
    std::string value;
  };
  std::vector<Range> ranges;
  std::set<std::pair<int64_t, int64_t>> seen;
  Strings elements;
  while (ranges.size() < 80) {
    const int64_t from = static_cast<int64_t>(rng() % 1001) - 500;
    const int64_t to = from + static_cast<int64_t>(rng() % 3 == 0 ? 0 : rng() % 200);
    if (!seen.insert({from, to}).second) continue;
    ranges.push_back({from, to, "r" + std::to_string(ranges.size())});
    elements.push_back(from == to && rng() % 2
                           ? TimedRef("rg", "", std::to_string(from), ranges.back().value)
                           : RangeRef("rg", "", std::to_string(from), std::to_string(to), ranges.back().value));
  }
  CliEnv env(kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write("ranges.xml", ReferenceData(Lines(elements)))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < kLookups; ++i) {
    const int64_t n = static_cast<int64_t>(rng() % 1401) - 700;
    const Range* best = nullptr;
    for (const Range& r : ranges) {
      if (r.from > n || n > r.to) continue;
      if (best == nullptr || r.to - r.from < best->to - best->from ||
          (r.to - r.from == best->to - best->from && r.from > best->from)) {
        best = &r;
      }
    }
    ExpectAnswer(env.Lookup("rg", std::to_string(n)), best ? std::optional<std::string>(best->value) : std::nullopt,
                 "rg " + std::to_string(n));
  }
}

TEST(CliRandomLookup, TemporalRangedMatchesTheLatestVersionModel) {
  std::mt19937_64 rng(7);
  Times times(&rng);
  struct Version {
    int64_t from, to, time;
    std::string value;
  };
  std::vector<Version> versions;
  Strings elements;
  for (int r = 0; r < 25; ++r) {
    const int64_t from = static_cast<int64_t>(rng() % 401) - 200;
    const int64_t to = from + static_cast<int64_t>(rng() % 100);
    const int count = 1 + static_cast<int>(rng() % 3);
    for (int v = 0; v < count; ++v) {
      versions.push_back({from, to, times.Next(), "r" + std::to_string(r) + "v" + std::to_string(v)});
      elements.push_back(
          RangeRef("trg", Iso(versions.back().time), std::to_string(from), std::to_string(to), versions.back().value));
    }
  }
  CliEnv env(kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write("trg.xml", ReferenceData(Lines(elements)))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < kLookups; ++i) {
    const int64_t n = static_cast<int64_t>(rng() % 501) - 250;
    const int64_t t = times.Any();
    const Version* best = nullptr;
    for (const Version& v : versions) {
      if (v.from <= n && n <= v.to && v.time <= t && (best == nullptr || v.time > best->time)) best = &v;
    }
    ExpectAnswer(env.Run({"lookup", "trg", std::to_string(n), "--time", Iso(t)}),
                 best ? std::optional<std::string>(best->value) : std::nullopt,
                 "trg " + std::to_string(n) + " at " + Iso(t));
  }
}

TEST(CliRandomLookup, TemporalMatchesTheLatestVersionModelInBothSchemes) {
  std::mt19937_64 rng(42);
  Times times(&rng);
  struct Version {
    std::string key;
    int64_t time;
    std::string value;
  };
  std::vector<Version> versions;
  Strings elements;
  for (int i = 0; i < 60; ++i) {
    versions.push_back({"k" + std::to_string(rng() % 8), times.Next(), "v" + std::to_string(i)});
    for (const std::string map : {"tm_hashed", "tm_direct"}) {
      elements.push_back(TimedRef(map, Iso(versions.back().time), versions.back().key, versions.back().value));
    }
  }
  CliEnv env(kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write("tm.xml", ReferenceData(Lines(elements)))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < kLookups; ++i) {
    const std::string key = "k" + std::to_string(rng() % 9);  // k8 is never loaded
    const int64_t t = times.Any();
    const Version* best = nullptr;
    for (const Version& v : versions) {
      if (v.key == key && v.time <= t && (best == nullptr || v.time > best->time)) best = &v;
    }
    const std::string map = i % 2 ? "tm_hashed" : "tm_direct";
    ExpectAnswer(env.Run({"lookup", map, key, "--time", Iso(t)}),
                 best ? std::optional<std::string>(best->value) : std::nullopt, map + " " + key + " at " + Iso(t));
  }
}

TEST(CliRandomLookup, SessionMatchesTheLatestStartModelInBothSchemes) {
  std::mt19937_64 rng(99);
  Times times(&rng);
  struct Session {
    std::string key;
    int64_t start, end;
  };
  std::vector<Session> sessions;
  Strings elements;
  for (int i = 0; i < 60; ++i) {
    const int64_t minutes = static_cast<int64_t>(rng() % 4) * 720;  // 0 (an instant) to 36 hours
    sessions.push_back({"u" + std::to_string(rng() % 5), times.Next(), 0});
    sessions.back().end = sessions.back().start + minutes * 60000;
    for (const std::string map : {"ss_hashed", "ss_direct"}) {
      elements.push_back(SessionEvent(map, sessions.back().key, Iso(sessions.back().start),
                                      minutes ? std::to_string(minutes) + "m" : ""));
    }
  }
  CliEnv env(kTypedMapsConfig);
  const ProcessResult load = env.Load({env.Write("ss.xml", ReferenceData(Lines(elements)))});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  for (int i = 0; i < kLookups; ++i) {
    const Session& near = sessions[rng() % sessions.size()];
    const std::string key = rng() % 4 ? near.key : "u" + std::to_string(rng() % 6);
    // Mostly the edges of a session and the instants next to them, sometimes anywhere.
    const int64_t edges[] = {near.start, near.end, near.start - 1, near.end + 1, times.Any()};
    const int64_t t = edges[rng() % 5];
    const Session* best = nullptr;
    for (const Session& s : sessions) {
      if (s.key == key && s.start <= t && t <= s.end && (best == nullptr || s.start > best->start)) best = &s;
    }
    const std::string map = i % 2 ? "ss_hashed" : "ss_direct";
    ExpectAnswer(env.Run({"lookup", map, key, "--time", Iso(t)}),
                 best ? std::optional<std::string>(Iso(best->start) + " " + Iso(best->end)) : std::nullopt,
                 map + " " + key + " at " + Iso(t));
  }
}

}  // namespace
}  // namespace planb
