// Session events for benchmarks: synthetic ones, and real ones read from ../shared/data when present. Each event
// of a key at `time_ms` opens the session [time_ms, time_ms + timeout_ms].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace planb::bench {

struct SessionEvent {
  std::string key;
  int64_t time_ms;
  int64_t timeout_ms;
};

// `count` events: keys like "user-000123-<random>" (all 20 bytes) with 1 to 39 events each, in bursts (5 s to
// 20 min apart, a quarter of gaps 1 h to 3 days); timeouts of 30 min, some 30 s or 2 h. Deterministic.
std::vector<SessionEvent> SyntheticSessionEvents(size_t count);

// git-commit-events.csv.gz: author id at author time, 30 min timeout. Empty, with the reason, when absent.
std::vector<SessionEvent> GitCommitEvents(std::string* why_missing);

// apache_logs.gz: client IP at request time (only real to the hour: see the data README), 30 min timeout.
// Unparseable lines are skipped. Empty, with the reason, when absent.
std::vector<SessionEvent> ApacheLogEvents(std::string* why_missing);

// An Apache log time ("17/May/2015:10:05:03 +0000", what follows the '[') in milliseconds since the epoch.
bool ParseApacheTime(const char* text, int64_t* out);

}  // namespace planb::bench
