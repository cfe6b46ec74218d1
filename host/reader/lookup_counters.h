// How a Reader counts lookups without slowing them: each (thread, map) context counts its own answers in relaxed
// atomics that only its thread writes (a load and a store, no locked read-modify-write, no shared cache line), and
// Reader::Stats sums them from any thread. A context freed when its thread exits hands its counts to the
// registry's retired totals first, so nothing counted is lost.
#pragma once

#include <atomic>
#include <cstdint>

#include "planb/status.h"

namespace planb {

// A sum of counts, as Stats reports them.
struct LookupTotals {
  uint64_t found = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  uint64_t cached = 0;  // of found + misses: answered by the thread's hot-key cache

  LookupTotals& operator+=(const LookupTotals& o) {
    found += o.found;
    misses += o.misses;
    errors += o.errors;
    cached += o.cached;
    return *this;
  }
};

class LookupCounters {
 public:
  // REQUIRES: called by the owning thread only (single writer).
  void Count(Code code) { Add(code == Code::kOk ? found_ : code == Code::kNotFound ? misses_ : errors_, 1); }
  void Add(const LookupTotals& totals) {
    if (totals.found != 0) Add(found_, totals.found);
    if (totals.misses != 0) Add(misses_, totals.misses);
    if (totals.errors != 0) Add(errors_, totals.errors);
    if (totals.cached != 0) Add(cached_, totals.cached);
  }
  void CountCached() { Add(cached_, 1); }
  // Any thread.
  LookupTotals Read() const {
    LookupTotals t;
    t.found = found_.load(std::memory_order_relaxed);
    t.misses = misses_.load(std::memory_order_relaxed);
    t.errors = errors_.load(std::memory_order_relaxed);
    t.cached = cached_.load(std::memory_order_relaxed);
    return t;
  }

 private:
  static void Add(std::atomic<uint64_t>& counter, uint64_t n) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> found_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> cached_{0};
};

}  // namespace planb
