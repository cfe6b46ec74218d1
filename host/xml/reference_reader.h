// Streams reference-data XML (namespace "reference-data:2") through expat and hands each <reference> or
// <session> element to a callback as a planb::Record. Memory stays bounded by the largest single element.
//
// Accepted input (element names and map names case-insensitive; keys case-sensitive):
//   <referenceData xmlns="reference-data:2">
//     <reference><map/> [<time/>] (<key/> | <range><from/><to/></range> | <from/><to/>) [<value/>]</reference>
//     (<value> is optional here: store types that need one refuse a record without it, histogram counts it as 1)
//     <session><map/><key/><time/>[<timeout/>]</session>
//   </referenceData>
// A <value> holding child elements becomes ValueType::kXmlFragment: a well-formed fragment that declares every
// namespace it uses (declarations made outside the value are added in). Otherwise the text is kString.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "planb/status.h"
#include "planb/store.h"

namespace planb {

struct ParsedRecord {
  std::string_view map;  // lower-cased map name
  Record record;         // views valid only during the callback
  uint64_t line = 0;     // where the element starts, 1-based
  uint64_t column = 0;   // 1-based
};

// Called once per element; a non-OK Status stops the read and is returned with "file:line:column: " in front.
using RecordHandler = std::function<Status(const ParsedRecord&)>;

// `effective_time_ms` fills Record::time_ms where an element has no <time> (Record::time_given = false).
// Errors name the input as "name:line:column: what is wrong".
Status ReadReferenceDataFile(const std::string& path, int64_t effective_time_ms, const RecordHandler& handler);
Status ReadReferenceData(std::string_view name, std::string_view xml, int64_t effective_time_ms,
                         const RecordHandler& handler);

}  // namespace planb
