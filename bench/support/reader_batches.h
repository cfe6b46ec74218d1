// The timed loops the Reader benches share (reader_bench, point_lookup_bench): every iteration asks kReaderBatch
// keys, one call each or one LookupMany for all, walking the key list from a place that differs per thread, and a
// run ends as an error unless every key was found.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "planb/reader.h"

namespace planb::bench {

inline constexpr size_t kReaderBatch = 256;

// Where this thread starts in a list of `keys`, so that threads do not read the same keys in step.
inline size_t BatchStart(const benchmark::State& state, size_t keys) {
  return static_cast<size_t>(state.thread_index()) * (keys / 2) / kReaderBatch * kReaderBatch;
}

// Items per second from the batches run; the run is an error unless `found` is every key asked.
inline void FinishBatches(benchmark::State& state, size_t found, const char* what) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kReaderBatch));
  if (found == static_cast<size_t>(state.iterations()) * kReaderBatch) return;
  const std::string message = std::string(what) + ": " + std::to_string(found) + " of " +
                              std::to_string(state.iterations() * kReaderBatch) + " keys found";
  state.SkipWithError(message.c_str());
}

// Reader::Lookup of each key of `map`. Key: std::string or std::string_view.
template <typename Key>
void TimeReaderLookups(benchmark::State& state, const std::vector<Key>& keys, Reader& reader, std::string_view map) {
  (void)reader.Lookup(map, keys[0]);  // this thread's transaction, outside the timing
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    for (size_t i = 0; i < kReaderBatch; ++i) {
      const LookupResult r = reader.Lookup(map, keys[next + i]);
      found += r.found();
      benchmark::DoNotOptimize(r.value);
    }
    next += kReaderBatch;
  }
  FinishBatches(state, found, "Reader::Lookup");
}

// One Reader::LookupMany of kReaderBatch keys of `map` an iteration.
template <typename Key>
void TimeReaderLookupMany(benchmark::State& state, const std::vector<Key>& keys, Reader& reader,
                          std::string_view map) {
  (void)reader.Lookup(map, keys[0]);
  std::vector<ReaderKey> batch(kReaderBatch);
  std::vector<LookupResult> results(kReaderBatch);
  size_t next = BatchStart(state, keys.size());
  size_t found = 0;
  for (auto _ : state) {
    if (next + kReaderBatch > keys.size()) next = 0;
    for (size_t i = 0; i < kReaderBatch; ++i) batch[i].key = keys[next + i];
    if (reader.LookupMany(map, batch.data(), kReaderBatch, results.data()) == Code::kOk) {
      for (const LookupResult& r : results) found += r.found();
    }
    benchmark::DoNotOptimize(results.data());
    next += kReaderBatch;
  }
  FinishBatches(state, found, "Reader::LookupMany");
}

}  // namespace planb::bench
