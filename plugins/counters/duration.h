// Durations as Plan B's config writes them (host/common/iso_time.h ParseDuration, copied here because a plugin
// sees only the SDK): the short form "500ms", "10s", "1m", "1h", "1d" (digits, then exactly one lower-case unit;
// "M" is refused, as ISO-8601 could mean months) or ISO-8601 "PnWnDTnHnMn.nS" (case-insensitive; only seconds
// take a fraction, to the millisecond), e.g. "PT1H30M". No sign: a duration is never negative.
#pragma once

#include <cstdint>
#include <string_view>

namespace planb::counters {

// False when `text` is not a duration or it overflows a signed 64-bit count of milliseconds.
bool ParseDuration(std::string_view text, int64_t* ms);

}  // namespace planb::counters
