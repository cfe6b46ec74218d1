// A console reporter that also prints, at the end, each benchmark's time as a ratio to a baseline benchmark
// of the same group ("<group>/raw_mdb_get" style names: the baseline is the one whose name contains "raw"), each
// repetition against the baseline's run of the same repetition, then (with repetitions) the mean of those
// ratios. Counters "bytes_per_row" and "tree_bytes_per_row" are printed beside. Benchmarks noted as skipped are
// listed with the reason.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace planb::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  struct Timed {
    std::string name;
    int64_t repetition = 0;
    double ns = 0;                   // per iteration
    double bytes_per_row = -1;       // the counters, when set (support/scheme_suite.h: RowBytes)
    double tree_bytes_per_row = -1;
  };
  std::vector<Timed> times_;  // in run order
};

// Lists benchmark `name` as skipped, with `reason`, in the ratio table of the run (a scheme refusing the data
// set: not a failure). Call before the run.
void NoteSkipped(const std::string& name, const std::string& reason);

}  // namespace planb::bench
