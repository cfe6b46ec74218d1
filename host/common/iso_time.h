// ISO-8601 times and durations: times are signed 64-bit milliseconds since the Unix epoch, UTC.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "planb/duration.h"

namespace planb {

// Parses an ISO-8601 date-time such as "2024-01-01T08:10:22.023Z", "2024-01-01T08:10:22Z",
// "2024-01-01T09:10:22.5+01:00", "2024-01-01T08:10Z" or a date alone ("2024-01-01", midnight UTC).
// Fractions beyond milliseconds are truncated. Years 0000-9999, or ISO 8601's expanded form for others
// ("+10009-12-28T00:00:00Z", "-0005-01-01"), as FormatIsoTime writes them: every int64 instant round-trips.
// Returns false on anything else.
bool ParseIsoTime(std::string_view text, int64_t* ms);

// The current time, in milliseconds since the Unix epoch.
int64_t CurrentTimeMs();

// Formats as "2024-01-01T08:10:22.023Z" (always milliseconds, always Z).
std::string FormatIsoTime(int64_t ms);
// The same into `buf` (at least kIsoTimeBufferSize bytes, not terminated), returning its length; no allocation.
inline constexpr size_t kIsoTimeBufferSize = 48;
size_t FormatIsoTime(int64_t ms, char* buf);

// ParseDuration ("15m", "PT15M"...): planb/duration.h, shared with plugins.

}  // namespace planb
