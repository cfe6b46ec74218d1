// `planb bench`'s engine: for each map chosen, every registered key scheme that can serve the map's store type,
// with value_dedup off and (where the scheme declares it) on, is tried `runs` times in a scratch home
// (scratch_dir.h, removed whatever happens), and each figure is the median of its runs. Knows nothing of the
// command line or output formats (host/cli/bench_command.cc). Not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/scheme_trial/bench_result.h"

namespace planb {

struct BenchProgress {
  std::string map;
  std::string label;  // the scheme, e.g. "hashed+value_dedup"
  uint32_t run = 0;   // 1-based
  uint32_t runs = 0;
  size_t trial = 0;  // 1-based, over every map, scheme and run
  size_t trials = 0;
};

struct BenchOptions {
  std::vector<std::string> files;
  // The maps to bench (lower case), each configured with a type that takes a key scheme (SelectBenchMaps).
  std::vector<std::string> maps;
  // Whether every map in `maps` must have records in the files (the user named them); otherwise maps without
  // records are left out of the result.
  bool maps_named = false;
  uint64_t lookups = 100000;  // hit keys sampled per map (and as many misses)
  uint32_t runs = 3;
  std::string scratch_parent;               // where the scratch directory is made
  const std::atomic<bool>* stop = nullptr;  // interrupts the run (kInternal "interrupted") once true; not owned
  std::function<void(const BenchProgress&)> progress;  // before each trial; may be empty
  std::string only_scheme;    // "" = every scheme that can serve the map; else only this one (bench --scheme)
  bool raw_baseline = false;  // also run the raw LMDB baseline per map and run (raw_baseline.h)
};

// The maps to bench: those named in `names` (comma-separated; every one configured and of a type that takes a
// key scheme), or, when `names` is absent, every configured map whose type takes one. kInvalidArgument naming
// the map otherwise, or when there is none.
Status SelectBenchMaps(const Config& config, const PluginRegistry& registry, const std::string* names,
                       std::vector<std::string>* maps);

// Runs the trials. Errors: bad input (kInvalidArgument: data_sample.h), "interrupted" (kInternal), or a failure
// of this machine (a trial that failed other than by its scheme refusing the data).
Status RunSchemeBench(const Config& config, const PluginRegistry& registry, const BenchOptions& options,
                      BenchResult* out);

}  // namespace planb
