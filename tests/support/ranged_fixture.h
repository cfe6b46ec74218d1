// Test helpers for the ranged store types (ranged, temporal_ranged), on top of map_fixture.h: range records,
// batches of them, lookups by number (and time), decoded dumps of the data table and raw dumps of the plugin's
// own tables, and an independent brute-force model of which range answers a lookup.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/storage/map_env.h"
#include "planb/store.h"

namespace planb::testing {

// One <reference> of a ranged map, as text the way XML would give it.
struct RangeInput {
  std::string from;  // <from> text, or the <key> text when `as_key`
  std::string to;
  std::string value;
  int64_t time_ms = 0;
  bool as_key = false;
  ValueType type = ValueType::kString;
};
RangeInput Span(int64_t from, int64_t to, std::string value, int64_t time_ms = 0);
RangeInput Point(int64_t key, std::string value, int64_t time_ms = 0);

// A Record viewing `input` (valid while `input` lives).
Record RangeRecord(const RangeInput& input);

// Store::Put of every input into `env` in one write transaction; the first refusal aborts it and is returned.
Status PutRanges(const std::shared_ptr<MapEnv>& env, const std::vector<RangeInput>& inputs);

struct RangedRow {
  int64_t from = 0;
  int64_t to = 0;
  int64_t time_ms = 0;
  ValueType type = ValueType::kString;
  std::string value;
  std::string lmdb_key;
  bool operator==(const RangedRow& o) const {
    return from == o.from && to == o.to && time_ms == o.time_ms && type == o.type && value == o.value &&
           lmdb_key == o.lmdb_key;
  }
};
void PrintTo(const RangedRow& row, std::ostream* os);

// Every data row, in LMDB order, decoded by the map's store type (DecodeRow).
Status DumpRanged(const MapEnv& env, std::vector<RangedRow>* out);

// Every row (raw key, raw value) of the store type's own table number `index` (PluginDescriptor::tables).
Status DumpStoreTable(const MapEnv& env, size_t index, std::vector<std::pair<std::string, std::string>>* out);

// The bytes of the pages holding the store type's own table number `index`: psize * (branch + leaf + overflow).
Status StoreTableBytes(const MapEnv& env, size_t index, uint64_t* bytes);

struct RangedHit {
  Code code = Code::kNotFound;
  int64_t from = 0;
  int64_t to = 0;
  int64_t time_ms = 0;
  std::string value;
};
void PrintTo(const RangedHit& hit, std::ostream* os);

// Store::Get of `number` (at `time_ms`) in a fresh read transaction.
RangedHit LookupRange(const MapEnv& env, int64_t number, int64_t time_ms = 0);

// The answer a ranged map must give, worked out by brute force over every stored range: among the ranges that
// contain the number (and, when temporal, have a version at or before the time, taking each one's latest), the
// latest effective time wins, then the narrowest, then the greater from, then the smaller to.
class RangeModel {
 public:
  // Later writes of the same (from, to, time) replace earlier ones, as loads do.
  void Add(int64_t from, int64_t to, int64_t time_ms, const std::string& value);
  // A miss is code kNotFound.
  RangedHit Lookup(int64_t number, int64_t time_ms) const;
  size_t size() const { return rows_.size(); }

 private:
  std::map<std::pair<std::pair<int64_t, int64_t>, int64_t>, std::string> rows_;
};

}  // namespace planb::testing
