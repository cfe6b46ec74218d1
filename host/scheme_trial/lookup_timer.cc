#include "host/scheme_trial/lookup_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace planb {
namespace {

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

LookupKey KeyOf(const LookupProbe& probe) {
  LookupKey key;
  key.key = Bytes(probe.key);
  key.time_ms = probe.time_ms;
  return key;
}

}  // namespace

double Percentile(std::vector<int64_t>* values, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values->size())));
  const size_t index = std::min(values->size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(values->begin(), values->begin() + static_cast<std::ptrdiff_t>(index), values->end());
  return static_cast<double>((*values)[index]);
}

Status TimeLookups(const MapReader& reader, const std::vector<LookupProbe>& probes, bool expect_found,
                   const std::atomic<bool>* stop, std::vector<int64_t>* scratch, LatencyFigures* out) {
  using Clock = std::chrono::steady_clock;
  *out = LatencyFigures();
  scratch->clear();
  scratch->reserve(probes.size());
  Row row;
  ErrorBuffer error;
  for (const LookupProbe& probe : probes) {  // warm-up
    const Code code = reader.Lookup(KeyOf(probe), &row, &error);
    if (code != Code::kOk && code != Code::kNotFound) return Status::FromPlugin(code, error);
  }
  size_t done = 0;
  for (const LookupProbe& probe : probes) {
    if ((++done & 1023) == 0 && Stopped(stop)) return Status::Internal("interrupted");
    const LookupKey key = KeyOf(probe);
    const Clock::time_point start = Clock::now();
    const Code code = reader.Lookup(key, &row, &error);
    const Clock::time_point end = Clock::now();
    if (code != Code::kOk && code != Code::kNotFound) return Status::FromPlugin(code, error);
    if ((code == Code::kOk) != expect_found) continue;
    scratch->push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  }
  if (Stopped(stop)) return Status::Internal("interrupted");
  out->lookups = scratch->size();
  if (scratch->empty()) return Status::Ok();
  out->p50_ns = Percentile(scratch, 50);
  out->p99_ns = Percentile(scratch, 99);
  return Status::Ok();
}

}  // namespace planb
