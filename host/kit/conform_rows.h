// Rows as `planb conform` compares them: each row as its `query --format csv` line, and which row members a
// store type's fields give it (the axes ScanBounds can narrow on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/query/map_scan.h"
#include "host/storage/own_fields.h"
#include "planb/plugin.h"

namespace planb {

// What a type's fields say about its rows: a text Key, a number KeyStart (ranged), and which instant time bounds
// constrain (ScanBounds: EffectiveTime, or Start for sessions).
struct RowAxes {
  bool key = false;
  bool number = false;
  enum class Time { kNone, kEffective, kStart } time = Time::kNone;

  static RowAxes Of(const PluginDescriptor& type);
  int64_t TimeOf(const Row& row) const { return time == Time::kStart ? row.session_start_ms : row.effective_time_ms; }
  // Whether `row` satisfies `bounds` on these axes (the filter a query with the same conditions applies).
  bool Matches(const ScanBounds& bounds, const Row& row) const;
  // A lookup of the row: its key (ranged: KeyStart) at its instant.
  LookupKey LookupOf(const Row& row) const;
};

// The row as one CSV line without its line end, fields in the type's order (as `query --format csv` prints it).
std::string RowLine(const Row& row, const PluginDescriptor& type);
// The CSV header line, without its line end.
std::string HeaderLine(const PluginDescriptor& type);

// Every row `request` yields from `env`, as lines (RowLine), in scan order.
Status ScanLines(const MapEnv& env, const ScanRequest& request, std::vector<std::string>* lines);


}  // namespace planb
