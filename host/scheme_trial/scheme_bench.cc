#include "host/scheme_trial/scheme_bench.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/plugin_host/map_plugins.h"
#include "host/scheme_trial/data_sample.h"
#include "host/scheme_trial/raw_baseline.h"
#include "host/scheme_trial/recommendation.h"
#include "host/scheme_trial/scratch_dir.h"
#include "host/scheme_trial/trial_config.h"

namespace planb {
namespace {

constexpr size_t kReasonCap = 300;

struct PlannedTrial {
  size_t map = 0;     // index into BenchResult::maps
  size_t result = 0;  // index into MapResult::schemes
  TrialSpec spec;
};

bool TakesScheme(const Config& config, const PluginRegistry& registry, const std::string& map) {
  const MapConfig* c = config.FindMap(map);
  const LoadedPlugin* type = c == nullptr ? nullptr : registry.Find(PluginKind::kStoreType, c->type);
  return type != nullptr && type->descriptor->uses_key_scheme;
}

// One line, escaped and capped: reasons quote the user's keys and files.
std::string Reason(const std::string& message) { return LogValue(message.substr(0, message.find('\n')), kReasonCap); }

// The directories the plugins were loaded from, so a trial's runtime loads the same ones (a user's own scheme too).
std::vector<std::string> PluginDirs(const PluginRegistry& registry) {
  std::vector<std::string> dirs;
  for (const LoadedPlugin& p : registry.plugins()) {
    std::error_code ec;
    const std::string dir = std::filesystem::absolute(std::filesystem::path(p.file).parent_path(), ec).string();
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

// Every registered scheme (and value_dedup setting) for `map`: planned when the scheme can serve the map's type,
// else a result saying why not.
void PlanMap(const MapConfig& map, const PluginRegistry& registry, const std::string& only_scheme, size_t map_index,
             MapResult* result, std::vector<PlannedTrial>* plan) {
  for (const LoadedPlugin& p : registry.plugins()) {
    const PluginDescriptor& d = *p.descriptor;
    if (d.kind != PluginKind::kKeyScheme) continue;
    if (!only_scheme.empty() && only_scheme != d.name) continue;
    for (bool dedup : {false, true}) {
      if (dedup && !DeclaresOption(d, "value_dedup")) continue;
      SchemeResult r;
      r.scheme = d.name;
      r.value_dedup = dedup;
      PlannedTrial trial{map_index, result->schemes.size(), {TrialMapConfig(map, registry, d, dedup), 0}};
      std::unique_ptr<MapPlugins> plugins;
      Status s = MapPlugins::Create(trial.spec.map, registry, &plugins);
      std::unique_ptr<MapPlugins> plain;  // without value_dedup: its tables are the key tables
      if (s.ok() && dedup) s = MapPlugins::Create(TrialMapConfig(map, registry, d, false), registry, &plain);
      if (!s.ok()) {
        r.unusable = Reason(s.message());
        result->schemes.push_back(std::move(r));
        continue;
      }
      trial.spec.key_tables = (plain ? plain : plugins)->scheme_tables_in_use();
      result->schemes.push_back(std::move(r));
      plan->push_back(std::move(trial));
    }
  }
}

template <typename Get>
double Median(const std::vector<TrialFigures>& runs, Get get) {
  std::vector<double> values;
  for (const TrialFigures& f : runs) values.push_back(static_cast<double>(get(f)));
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<uint64_t> MedianOptional(const std::vector<TrialFigures>& runs,
                                       std::optional<uint64_t> ShardSizes::*field) {
  if (!(runs.front().sizes.*field)) return std::nullopt;
  return static_cast<uint64_t>(Median(runs, [field](const TrialFigures& f) { return (f.sizes.*field).value_or(0); }));
}

// Each figure the median of its runs (so the row may combine figures of different runs).
TrialFigures Medians(const std::vector<TrialFigures>& runs) {
  TrialFigures m;
  auto u64 = [&runs](auto get) { return static_cast<uint64_t>(Median(runs, get)); };
  m.records = u64([](const TrialFigures& f) { return f.records; });
  m.load_rows_per_s = Median(runs, [](const TrialFigures& f) { return f.load_rows_per_s; });
  m.merge_rows_per_s = Median(runs, [](const TrialFigures& f) { return f.merge_rows_per_s; });
  for (LatencyFigures TrialFigures::*which : {&TrialFigures::hits, &TrialFigures::misses}) {
    (m.*which).lookups = u64([which](const TrialFigures& f) { return (f.*which).lookups; });
    (m.*which).p50_ns = Median(runs, [which](const TrialFigures& f) { return (f.*which).p50_ns; });
    (m.*which).p99_ns = Median(runs, [which](const TrialFigures& f) { return (f.*which).p99_ns; });
  }
  m.sizes.rows = u64([](const TrialFigures& f) { return f.sizes.rows; });
  m.sizes.file_bytes = u64([](const TrialFigures& f) { return f.sizes.file_bytes; });
  m.sizes.key_table_bytes = MedianOptional(runs, &ShardSizes::key_table_bytes);
  m.sizes.value_table_bytes = MedianOptional(runs, &ShardSizes::value_table_bytes);
  return m;
}

}  // namespace

Status SelectBenchMaps(const Config& config, const PluginRegistry& registry, const std::string* names,
                       std::vector<std::string>* maps) {
  maps->clear();
  if (names == nullptr) {
    for (const auto& [name, map] : config.maps) {
      if (TakesScheme(config, registry, name)) maps->push_back(name);
    }
    if (maps->empty()) {
      return Status::Invalid("the config" + (config.path.empty() ? std::string() : " " + config.path) +
                             " has no map whose type takes a key scheme: nothing to compare");
    }
    return Status::Ok();
  }
  std::string known;
  for (const auto& entry : config.maps) known += (known.empty() ? "" : ", ") + entry.first;
  size_t start = 0;
  while (start <= names->size()) {
    size_t end = names->find(',', start);
    if (end == std::string::npos) end = names->size();
    const std::string name = NormaliseMapName(names->substr(start, end - start));
    start = end + 1;
    if (name.empty()) return Status::Invalid("--maps " + LogValue(*names) + ": an empty map name");
    const MapConfig* map = config.FindMap(name);
    if (map == nullptr) {
      return Status::Invalid("--maps: unknown map '" + LogValue(name) +
                             "' (the config has: " + (known.empty() ? "none" : known) + ")");
    }
    if (!TakesScheme(config, registry, name)) {
      return Status::Invalid("--maps: map '" + name + "' is of type '" + map->type +
                             "', which takes no key scheme: nothing to compare");
    }
    if (std::find(maps->begin(), maps->end(), name) == maps->end()) maps->push_back(name);
  }
  return Status::Ok();
}

Status RunSchemeBench(const Config& config, const PluginRegistry& registry, const BenchOptions& options,
                      BenchResult* out) {
  *out = BenchResult();
  out->runs = options.runs;
  out->lookups_asked = options.lookups;
  ScratchDir scratch;  // first, so that an unusable --scratch fails before the files are read
  PLANB_RETURN_IF_ERROR(scratch.Create(options.scratch_parent));
  std::map<std::string, MapSample> samples;
  const std::set<std::string> wanted(options.maps.begin(), options.maps.end());
  PLANB_RETURN_IF_ERROR(SampleData(options.files, wanted, options.lookups, options.stop, &samples));

  std::vector<PlannedTrial> plan;
  for (const std::string& name : options.maps) {
    if (samples.count(name) == 0) {
      if (options.maps_named) return Status::Invalid("--maps: map '" + name + "' has no records in the files given");
      continue;
    }
    const MapConfig& map = *config.FindMap(name);
    MapResult result;
    result.map = name;
    result.type = map.type;
    result.configured_scheme = map.scheme.empty() ? MapPlugins::kDefaultScheme : map.scheme;
    for (const auto& [option, value] : map.plugin_options) {
      if (option == "value_dedup") result.configured_value_dedup = value == "true";
    }
    PlanMap(map, registry, options.only_scheme, out->maps.size(), &result, &plan);
    out->maps.push_back(std::move(result));
  }

  const std::vector<std::string> plugin_dirs = PluginDirs(registry);
  std::vector<int64_t> timings;
  size_t trial_number = 0;
  for (const PlannedTrial& trial : plan) {
    MapResult& map = out->maps[trial.map];
    SchemeResult& result = map.schemes[trial.result];
    std::vector<TrialFigures> runs;
    for (uint32_t run = 1; run <= options.runs; ++run) {
      ++trial_number;
      if (options.progress) {
        options.progress({map.map, result.label(), run, options.runs, trial_number, plan.size() * options.runs});
      }
      const std::string dir = scratch.path() + "/trial-" + std::to_string(trial_number);
      TrialFigures figures;
      Status s = RunTrial(trial.spec, samples.at(map.map), dir, plugin_dirs, options.stop, &timings, &figures);
      static_cast<void>(RemoveTree(dir));  // the scratch directory goes anyway; this keeps the disk use to one trial
      if (options.stop != nullptr && options.stop->load()) return Status::Internal("interrupted");
      if (s.code() == Code::kInvalidArgument) {
        result.unusable = Reason(s.message());
        trial_number += options.runs - run;
        break;
      }
      PLANB_RETURN_IF_ERROR(s.WithContext("map " + map.map + ", scheme " + result.label()));
      runs.push_back(figures);
    }
    if (result.unusable.empty()) result.figures = Medians(runs);
  }
  if (options.raw_baseline) {
    out->raw_baseline = true;
    for (MapResult& map : out->maps) {
      std::vector<TrialFigures> runs;
      for (uint32_t run = 1; run <= options.runs; ++run) {
        const std::string dir = scratch.path() + "/raw-" + map.map + "-" + std::to_string(run);
        TrialFigures figures;
        Status s = RunRawBaseline(map.map, samples.at(map.map), config.FindMap(map.map)->max_store_size, dir,
                                  options.stop, &timings, &figures);
        static_cast<void>(RemoveTree(dir));
        if (options.stop != nullptr && options.stop->load()) return Status::Internal("interrupted");
        PLANB_RETURN_IF_ERROR(s.WithContext("map " + map.map + ", raw LMDB baseline"));
        runs.push_back(figures);
      }
      map.raw = Medians(runs);
    }
  }
  for (MapResult& map : out->maps) Recommend(&map);
  return Status::Ok();
}

}  // namespace planb
