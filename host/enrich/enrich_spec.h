// What `planb enrich` is asked to do: its --lookup, --fallback and --on-miss arguments, parsed and checked
// against nothing but their own syntax (the maps are checked against the config when the run starts).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/common/epoch_time.h"
#include "host/common/json_text.h"
#include "planb/status.h"

namespace planb {

// --lookup TARGET=MAP:FIELD[#MEMBER][@TIMEFIELD]: look FIELD of each event up in MAP (at the instant TIMEFIELD
// holds, for maps with time) and write the answer at TARGET: the whole answer, or with #MEMBER the member at that
// path of a JSON value (absent, or a value that is not JSON: a miss). For CSV, FIELD, TARGET and TIMEFIELD name columns (a dotted
// name is one column's name).
struct EnrichLookup {
  JsonPath target;
  std::string map;  // lower-cased, as the config names maps
  JsonPath field;
  std::optional<JsonPath> time_field;   // absent: the lookup asks about now
  std::optional<JsonPath> member;       // #MEMBER: absent, the whole answer is written
  std::optional<std::string> fallback;  // --fallback TARGET=VALUE: written as a string when the lookup misses
};

enum class OnMiss { kKeep, kDrop, kTag };
enum class EventFormat { kJson, kCsv };

struct EnrichSpec {
  std::vector<EnrichLookup> lookups;  // in command-line order: answers are written in this order
  OnMiss on_miss = OnMiss::kKeep;
  EventFormat input = EventFormat::kJson;
  EventFormat output = EventFormat::kJson;
  bool strict = false;
  TimeUnit time_unit = TimeUnit::kMilliseconds;  // of numeric @TIMEFIELD values (--time-unit)
};

// Errors name the argument ("--lookup 'x': ...") and say what form is expected.
Status ParseLookup(std::string_view text, EnrichLookup* out);
// Sets the fallback of the lookup whose TARGET the argument names; refuses a target no --lookup writes.
Status ParseFallback(std::string_view text, std::vector<EnrichLookup>* lookups);
Status ParseOnMiss(std::string_view text, OnMiss* out);
Status ParseEventFormat(std::string_view option, std::string_view text, EventFormat* out);
// Two lookups writing the same TARGET, or a TARGET inside another's ("geo" and "geo.country"), are refused.
Status CheckTargets(const std::vector<EnrichLookup>& lookups);

}  // namespace planb
