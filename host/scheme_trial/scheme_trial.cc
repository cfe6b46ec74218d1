#include "host/scheme_trial/scheme_trial.h"

#include <chrono>
#include <memory>

#include "host/common/file_util.h"
#include "host/ingest/load_job.h"
#include "host/runtime.h"
#include "host/scheme_trial/trial_config.h"
#include "host/storage/map_reader.h"

namespace planb {
namespace {

double PerSecond(uint64_t rows, std::chrono::nanoseconds time) {
  const double seconds = std::chrono::duration<double>(time).count();
  return seconds > 0 ? static_cast<double>(rows) / seconds : 0;
}

bool Stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

}  // namespace

Status RunTrial(const TrialSpec& spec, const MapSample& sample, const std::string& dir,
                const std::vector<std::string>& plugin_dirs, const std::atomic<bool>* stop,
                std::vector<int64_t>* timings, TrialFigures* out) {
  *out = TrialFigures();
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string config = dir + "/planb.ini";
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(config, TrialConfigText(spec.map, dir + "/home", plugin_dirs)));
  RuntimeOptions options;
  options.config_path = config;
  std::unique_ptr<Runtime> runtime;
  PLANB_RETURN_IF_ERROR(Runtime::Open(options, &runtime));

  LoadOptions load;
  load.only_maps = std::set<std::string>{spec.map.name};
  load.stop = stop;
  LoadReport report;
  Status s = RunLoad(*runtime, sample.files, load, &report);
  if (Stopped(stop)) return Status::Internal("interrupted");
  PLANB_RETURN_IF_ERROR(s);
  for (const StreamReport& stream : report.streams) {
    auto found = stream.records.find(spec.map.name);
    if (found != stream.records.end()) out->records += found->second;
  }
  out->load_rows_per_s = PerSecond(out->records, report.write_time);
  out->merge_rows_per_s = PerSecond(out->records, report.merge_time);

  std::shared_ptr<MapEnv> shard;
  PLANB_RETURN_IF_ERROR(runtime->OpenShard(spec.map.name, &shard));
  {
    MapReader reader;
    PLANB_RETURN_IF_ERROR(reader.Open(shard));
    PLANB_RETURN_IF_ERROR(TimeLookups(reader, sample.hits, true, stop, timings, &out->hits));
    PLANB_RETURN_IF_ERROR(TimeLookups(reader, sample.misses, false, stop, timings, &out->misses));
  }
  return MeasureShard(*shard, spec.key_tables, &out->sizes);
}

}  // namespace planb
