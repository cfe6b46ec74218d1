// ISO-8601 times and durations (host/common/iso_time.h, planb/duration.h). Invariants: every time FormatIsoTime
// prints parses back to the same instant (the input's first 8 bytes, as an int64, are such a time), a parsed
// text prints as a time that parses back to it, and ParseDuration never yields what does not fit (no crash, no UB).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "host/common/iso_time.h"
#include "planb/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 8) {
    int64_t ms;
    std::memcpy(&ms, data, 8);
    const std::string printed = planb::FormatIsoTime(ms);
    int64_t back = 0;
    planb::fuzz::Check(planb::ParseIsoTime(printed, &back) && back == ms,
                       "FormatIsoTime(" + std::to_string(ms) + ") = " + printed + " does not parse back");
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  int64_t ms = 0;
  if (planb::ParseIsoTime(text, &ms)) {
    const std::string printed = planb::FormatIsoTime(ms);
    int64_t back = 0;
    planb::fuzz::Check(planb::ParseIsoTime(printed, &back) && back == ms,
                       "a parsed time does not print as one that parses back: " + printed);
  }
  int64_t duration = 0;
  if (planb::ParseDuration(text, &duration) && duration >= 0) {  // "-5ms" is no duration
    int64_t again = 0;
    planb::fuzz::Check(planb::ParseDuration(std::to_string(duration) + "ms", &again) && again == duration,
                       "a parsed duration does not read back as milliseconds");
  }
  return 0;
}
