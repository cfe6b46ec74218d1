#include "support/ratio_reporter.h"

#include <cstdio>
#include <utility>

namespace planb::bench {
namespace {
// "lookup/city_names/raw_mdb_get" -> "lookup/city_names"
std::string Group(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(0, slash);
}

std::vector<std::pair<std::string, std::string>>& Skipped() {
  static std::vector<std::pair<std::string, std::string>> skipped;
  return skipped;
}
}  // namespace

void NoteSkipped(const std::string& name, const std::string& reason) { Skipped().emplace_back(name, reason); }

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Iteration || run.iterations == 0 || run.error_occurred) continue;
    // "/iterations:3/manual_time", "/min_time:0.100" would otherwise split a group from its baseline.
    benchmark::BenchmarkName name = run.run_name;
    name.iterations.clear();
    name.time_type.clear();
    name.repetitions.clear();
    name.min_time.clear();
    const auto counter = [&run](const char* which) {
      auto it = run.counters.find(which);
      return it == run.counters.end() ? -1.0 : static_cast<double>(it->second);
    };
    times_.push_back({name.str(), run.repetition_index < 0 ? 0 : run.repetition_index, run.GetAdjustedRealTime(),
                      counter("bytes_per_row"), counter("tree_bytes_per_row")});
  }
}

void RatioReporter::Finalize() {
  ConsoleReporter::Finalize();
  std::map<std::pair<std::string, int64_t>, double> baseline;  // (group, repetition) -> time
  for (const Timed& t : times_) {
    if (t.name.find("raw") != std::string::npos) baseline.emplace(std::pair{Group(t.name), t.repetition}, t.ns);
  }
  std::map<std::string, std::vector<double>> ratios;  // name -> ratio per repetition
  std::vector<std::string> order;
  std::printf("\n%-60s %4s %12s %10s %12s %12s\n", "benchmark", "rep", "time/op", "x raw", "disk B/row",
              "tree B/row");
  for (const Timed& t : times_) {
    auto it = baseline.find({Group(t.name), t.repetition});
    if (it == baseline.end()) continue;
    const double ratio = t.ns / it->second;
    if (ratios[t.name].empty()) order.push_back(t.name);
    ratios[t.name].push_back(ratio);
    std::printf("%-60s %4lld %12.1f %10.2f", t.name.c_str(), static_cast<long long>(t.repetition), t.ns, ratio);
    for (double bytes : {t.bytes_per_row, t.tree_bytes_per_row}) {
      if (bytes >= 0) {
        std::printf(" %12.1f", bytes);
      } else {
        std::printf(" %12s", "-");
      }
    }
    std::printf("\n");
  }
  bool repeated = false;
  for (const auto& [name, r] : ratios) repeated = repeated || r.size() > 1;
  if (repeated) {
    std::printf("\n%-60s %10s  %s\n", "benchmark", "mean x raw", "(x raw per repetition)");
    for (const std::string& name : order) {
      const std::vector<double>& r = ratios[name];
      double sum = 0;
      std::string each;
      for (double x : r) {
        sum += x;
        char text[16];
        std::snprintf(text, sizeof(text), " %.2f", x);
        each += text;
      }
      std::printf("%-60s %10.2f  [%s ]\n", name.c_str(), sum / static_cast<double>(r.size()), each.c_str());
    }
  }
  for (const auto& [name, reason] : Skipped()) std::printf("%-60s skipped: %s\n", name.c_str(), reason.c_str());
}

}  // namespace planb::bench
