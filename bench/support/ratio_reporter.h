// A console reporter that also prints, at the end, each benchmark's time as a ratio to a baseline benchmark
// of the same group ("<group>/raw_mdb_get" style names: the baseline is the one whose name contains "raw").
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
  std::vector<std::pair<std::string, double>> times_;  // name -> ns per iteration, in run order
};

}  // namespace planb::bench
