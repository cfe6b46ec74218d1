// The minimum pace of a transfer that holds resources: on a storage node, an upload arriving (a slot, a part file
// and its disk reservation) and a snapshot being fetched from it (a slot and an open zip); on a reader, a
// snapshot it fetches (its turn to fetch, while a faster node may be next in its list). Measured over whole windows of
// `window`: a transfer that moved less than min_rate x window in one (or less than it had left, near its end)
// is too slow and loses what it holds. An idle timeout alone let one byte every 25 s hold everything for ever.
// Thread-safety: none; one owner at a time (the receiver's Run thread, a snapshot fetch).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace planb {

class TransferPace {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TransferPace(Clock::time_point start, uint64_t done = 0) : window_start_(start), window_done_(done) {}

  // "" while the transfer keeps up (and always when `min_rate` is 0); else why not, e.g. "12 bytes in the last
  // 30000 ms, less than min_transfer_rate of 65536 bytes/s". `done`: bytes moved so far; `remaining`: bytes still
  // to move. Starts a new window once one has passed.
  std::string Check(Clock::time_point now, uint64_t done, uint64_t remaining, std::chrono::milliseconds window,
                    uint64_t min_rate);

 private:
  Clock::time_point window_start_;
  uint64_t window_done_;
};

}  // namespace planb
