// How a map's answer is written into an event: as a JSON value (JSON lines) or as the text of a CSV cell.
//   value types (state, temporal, ranged...)   JSON: the value as a string (an XML fragment too); CSV: the value
//   sessions                                   JSON: {"start":"ISO-8601","end":"ISO-8601"}; CSV: "START/END"
//                                              (an ISO 8601 interval)
//   types with fields of their own (metric,    JSON: an object of the fields `planb lookup` shows (numbers as
//   histogram)                                 numbers, dates as ISO-8601, text as strings; names in lower case as
//                                              `planb lookup --format json` writes them); CSV: that object's text
#pragma once

#include <string>

#include "planb/reader.h"

namespace planb {

void AppendAnswerJson(const MapInfo& info, const LookupResult& result, std::string* out);
void AppendAnswerCell(const MapInfo& info, const LookupResult& result, std::string* out);

}  // namespace planb
