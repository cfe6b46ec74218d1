// The raw LMDB baseline of `planb bench --type`: what LMDB alone costs for the same work as a trial, so that each
// figure can be read as a ratio to it ("x raw", as Google Benchmark and hyperfine report relative figures).
// - load: each file read (the same XML parse) with its records of the map put, one mdb_put per record
//   (key = <key>, value = <value>), into a plain LMDB file of its own in one write transaction: one batch per
//   file, as `planb load` writes one stream per file;
// - merge: each batch file's rows copied with a cursor into one plain LMDB shard, one mdb_put per row, one write
//   transaction per batch, as a merge does;
// - lookups: mdb_get of the trial's hit and miss keys in one open read transaction, timed as lookup_timer.h does.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "host/scheme_trial/data_sample.h"
#include "host/scheme_trial/scheme_trial.h"

namespace planb {

// Runs the baseline in `dir` (created here; the caller removes it). Figures as a trial's (scheme_trial.h):
// records, rows (entries of the shard), load and merge rates, hit and miss latencies, and the shard's file size.
// kInternal "interrupted" once `stop` is true; other errors are this machine's (disk, LMDB).
Status RunRawBaseline(const std::string& map, const MapSample& sample, uint64_t map_size, const std::string& dir,
                      const std::atomic<bool>* stop, std::vector<int64_t>* timings, TrialFigures* out);

}  // namespace planb
