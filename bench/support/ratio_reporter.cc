#include "support/ratio_reporter.h"

#include <cstdio>

namespace planb::bench {
namespace {
// "lookup/city_names/raw_mdb_get" -> "lookup/city_names"
std::string Group(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(0, slash);
}
}  // namespace

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
    // "/iterations:3/real_time" would otherwise split a group from its baseline.
    benchmark::BenchmarkName name = run.run_name;
    name.iterations.clear();
    name.time_type.clear();
    times_.emplace_back(name.str(), run.GetAdjustedRealTime());
  }
}

void RatioReporter::Finalize() {
  ConsoleReporter::Finalize();
  std::map<std::string, double> baseline;
  for (const auto& [name, time] : times_) {
    if (name.find("raw") != std::string::npos) baseline.emplace(Group(name), time);
  }
  std::printf("\n%-60s %12s %10s\n", "benchmark", "time/op", "x raw");
  for (const auto& [name, time] : times_) {
    auto it = baseline.find(Group(name));
    if (it == baseline.end()) continue;
    std::printf("%-60s %12.1f %10.2f\n", name.c_str(), time, time / it->second);
  }
}

}  // namespace planb::bench
