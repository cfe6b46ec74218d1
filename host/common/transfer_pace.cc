#include "host/common/transfer_pace.h"

#include <algorithm>

namespace planb {

std::string TransferPace::Check(Clock::time_point now, uint64_t done, uint64_t remaining,
                                std::chrono::milliseconds window, uint64_t min_rate) {
  if (min_rate == 0 || now - window_start_ < window) return "";
  const uint64_t moved = done >= window_done_ ? done - window_done_ : 0;
  const uint64_t window_ms = static_cast<uint64_t>(std::max<int64_t>(window.count(), 1));
  // min_rate is bounded by the config (a byte size) and window by a duration: no overflow below 2^64 in practice,
  // but saturate anyway rather than wrap.
  const uint64_t per_window = min_rate > UINT64_MAX / window_ms ? UINT64_MAX : min_rate * window_ms / 1000;
  const uint64_t required = std::min(per_window, moved + remaining);
  if (moved < required) {
    return std::to_string(moved) + " bytes in the last " + std::to_string(window_ms) +
           " ms, less than min_transfer_rate of " + std::to_string(min_rate) + " bytes/s";
  }
  window_start_ = now;
  window_done_ = done;
  return "";
}

}  // namespace planb
