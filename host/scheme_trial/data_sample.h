// What `planb bench` needs to know about the user's files before any trial, read once: which files hold records
// of each benched map, how many, and the keys to look up. Memory stays bounded by `lookups` keys per map.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "planb/status.h"

namespace planb {

// One lookup: a key and the instant asked about (the record's time: a hit on every store type whose rows are in
// effect from their time on, which is every built-in type with a text key).
struct LookupProbe {
  std::string key;
  int64_t time_ms = 0;
};

struct MapSample {
  uint64_t records = 0;
  std::vector<std::string> files;  // the files holding records of the map, in the order given
  std::vector<LookupProbe> hits;   // distinct keys, sampled uniformly over the records, in random order
  // One per hit: the hit's key with its last byte changed. Almost always absent; a trial drops any that is not.
  std::vector<LookupProbe> misses;
};

// Reads `files` (reference-data XML, as `planb load` does; records without <time> take the file's modification
// time) and samples up to `lookups` records of each map in `maps` (lower-case names). Errors (kInvalidArgument,
// naming the input): a file that does not parse, a file with no record of any map in `maps`. A map without records
// gets no entry in `out`. kInternal "interrupted" once `stop` is true.
Status SampleData(const std::vector<std::string>& files, const std::set<std::string>& maps, size_t lookups,
                  const std::atomic<bool>* stop, std::map<std::string, MapSample>* out);

}  // namespace planb
