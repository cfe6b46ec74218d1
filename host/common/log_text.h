// Values from outside the process in log lines: escaped so that none can forge a line (control characters as
// \n, \r, \t, \xNN; a backslash as \\) and capped so that none can flood the log. And a limiter for errors a
// peer can repeat at will: the same kind at most once per period, with a count of those suppressed.
// Thread-safety: LogValue is pure; a RepeatLimiter is used from one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace planb {

inline constexpr size_t kLogValueCap = 200;

// `value` escaped and, past `cap` bytes (of the original), cut with "...(N bytes)" saying how long it was.
std::string LogValue(std::string_view value, size_t cap = kLogValueCap);

class RepeatLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RepeatLimiter(Clock::duration period = std::chrono::seconds(10), size_t max_kinds = 256)
      : period_(period), max_kinds_(max_kinds) {}

  // Whether a line of `kind` may be logged at `now`; when it may, `*suppressed` gets how many of that kind were
  // not logged since the last one (say "(N similar suppressed)" when above 0). Kinds are few (a command and an
  // error code): past max_kinds, the oldest are forgotten so that the map stays bounded.
  bool Admit(const std::string& kind, Clock::time_point now, uint64_t* suppressed);

 private:
  struct Entry {
    Clock::time_point last;
    uint64_t suppressed = 0;
  };
  Clock::duration period_;
  size_t max_kinds_;
  std::map<std::string, Entry> kinds_;
};

}  // namespace planb
