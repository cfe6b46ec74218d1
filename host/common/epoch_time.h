// Numeric event times in the unit their source uses: Unix seconds (log shippers, Python's time.time()), epoch
// milliseconds (Java, JavaScript, Plan B's own), microseconds or nanoseconds (OpenTelemetry's *_unix_nano).
// `--time-unit s|ms|us|ns` picks one wherever a load or `enrich` reads a numeric time; ISO-8601 text is always
// read as such. Milliseconds stay the default, so a Unix-seconds column must say so: read as milliseconds it
// would land in January 1970 without a word.
#pragma once

#include <cstdint>
#include <string_view>

namespace planb {

enum class TimeUnit { kSeconds, kMilliseconds, kMicroseconds, kNanoseconds };

// "s", "ms", "us", "ns"; false for anything else.
bool ParseTimeUnit(std::string_view text, TimeUnit* out);
// "s", "ms", "us", "ns".
const char* TimeUnitName(TimeUnit unit);
// "epoch seconds", "epoch milliseconds"...: for messages.
const char* EpochUnitWords(TimeUnit unit);

// An ISO-8601 date-time (ParseIsoTime), or a number of `unit`s since the epoch: an optional '-', digits, and an
// optional fraction ('.' and digits: 1704067200.123 seconds). Converted to milliseconds rounding down (towards
// the past: -1 us is -1 ms, so that instants keep their order); false for anything else or an instant outside
// int64 milliseconds.
bool ParseTimeOrEpoch(std::string_view text, TimeUnit unit, int64_t* ms);

}  // namespace planb
