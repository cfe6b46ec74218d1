// Test helpers for the store types keyed by text and time (Temporal State, Session): events as owned records,
// batches written through Store::Put, lookups at a time copied out of their transaction, dumps with every decoded
// field, and reference-data XML with <time> and <timeout>. Built on map_fixture.h (real plugins, real LMDB).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "host/storage/map_env.h"
#include "host/storage/map_reader.h"
#include "planb/store.h"

namespace planb::testing {

struct TemporalEvent {
  std::string key;
  std::optional<int64_t> time_ms;  // none: no <time> (the stream's effective time applies)
  std::string value;
  ValueType type = ValueType::kString;
};

struct SessionEvent {
  std::string key;
  int64_t time_ms = 0;
  std::optional<int64_t> timeout_ms;  // none: no <timeout>
};

// The <reference>/<session> record of an event (views into `event`); `effective_time_ms` stands in for a
// missing <time>, as the XML reader does.
Record ToRecord(const TemporalEvent& event, int64_t effective_time_ms = 0);
Record ToRecord(const SessionEvent& event);

// Store::Put of each event into `env` (a batch) in one write transaction; stops at the first error.
Status PutEvents(const std::shared_ptr<MapEnv>& env, const std::vector<TemporalEvent>& events);
Status PutEvents(const std::shared_ptr<MapEnv>& env, const std::vector<SessionEvent>& events);

// A lookup's outcome with the row copied out of the transaction.
struct Answer {
  Code code = Code::kNotFound;
  std::string key;
  int64_t effective_time_ms = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  ValueType type = ValueType::kString;
  std::string value;
  std::string error;  // the message of a failed lookup
};
void PrintTo(const Answer& answer, std::ostream* os);

// Looks (`key`, `time_ms`) up through the map's store in a fresh read transaction.
Answer LookupAt(const MapEnv& env, std::string_view key, int64_t time_ms);
// The same through a MapReader (its transaction and cursor, as the host's lookups do).
Answer LookupAt(const MapReader& reader, std::string_view key, int64_t time_ms);

// A row with every field Store::DecodeRow fills, and its LMDB key.
struct FullRow {
  std::string lmdb_key;
  std::string key;
  int64_t effective_time_ms = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  ValueType type = ValueType::kString;
  std::string value;
  bool operator==(const FullRow& o) const {
    return lmdb_key == o.lmdb_key && key == o.key && effective_time_ms == o.effective_time_ms &&
           start_ms == o.start_ms && end_ms == o.end_ms && type == o.type && value == o.value;
  }
};
void PrintTo(const FullRow& row, std::ostream* os);

// Every row of the env's data table in LMDB order, decoded by the map's store type.
Status DumpFullRows(const MapEnv& env, std::vector<FullRow>* out);

// "[map.<name>]\ntype = <type>\nscheme = <scheme>\nmax_store_size = 1GiB\n" plus `extra` lines.
std::string MapSection(const std::string& name, const std::string& type, const std::string& scheme,
                       const std::string& extra = "");

// Reference-data XML: one <reference> (with <time> when given) or <session> (with <timeout> in milliseconds when
// given) per event of `map`, in order; text is escaped and times are ISO-8601.
std::string TemporalXml(const std::string& map, const std::vector<TemporalEvent>& events);
std::string SessionXml(const std::string& map, const std::vector<SessionEvent>& events);

// Deterministic random input: text with characters XML must escape and multi-byte UTF-8, and numbers.
class RandomInput {
 public:
  explicit RandomInput(uint64_t seed) : random_(seed) {}
  std::string Text(size_t min_size, size_t max_size);
  std::vector<std::string> DistinctTexts(size_t count, size_t min_size, size_t max_size);
  int64_t Between(int64_t lo, int64_t hi);  // inclusive
  size_t Index(size_t n) { return static_cast<size_t>(Between(0, static_cast<int64_t>(n) - 1)); }
  bool Percent(int p) { return Between(0, 99) < p; }

 private:
  std::mt19937_64 random_;
};

}  // namespace planb::testing
