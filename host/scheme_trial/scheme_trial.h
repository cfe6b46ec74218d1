// One trial of `planb bench`: one map loaded under one key scheme (and value_dedup setting) into a home of its
// own, then looked up. It runs what users run: RunLoad (host/ingest/load_job.h) on a Runtime made from a config
// holding only that map, and MapReader (the path of planb::Reader) on the shard it merged.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/scheme_trial/data_sample.h"
#include "host/scheme_trial/lookup_timer.h"
#include "host/scheme_trial/shard_sizes.h"

namespace planb {

struct TrialSpec {
  MapConfig map;            // the map's section as the trial runs it (TrialMapConfig)
  uint32_t key_tables = 0;  // of the scheme's tables in use, how many are key tables (shard_sizes.h)
};

struct TrialFigures {
  uint64_t records = 0;         // records of the map loaded
  double load_rows_per_s = 0;   // records / time reading the files and writing the batch
  double merge_rows_per_s = 0;  // records / time merging the batch into the (new) shard
  LatencyFigures hits;
  LatencyFigures misses;
  ShardSizes sizes;
};

// Runs the trial in `dir` (created here; the caller removes it). kInvalidArgument when the map's data cannot be
// held under the scheme (the message says why, e.g. a key too long for direct); kInternal "interrupted" once
// `stop` is true; anything else is a failure of this machine (disk, LMDB). `timings` is scratch space.
Status RunTrial(const TrialSpec& spec, const MapSample& sample, const std::string& dir,
                const std::vector<std::string>& plugin_dirs, const std::atomic<bool>* stop,
                std::vector<int64_t>* timings, TrialFigures* out);

}  // namespace planb
