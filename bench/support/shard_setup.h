// Setup shared by the lookup benchmarks: Plan B shards built through the real ingest path (StreamWriter ->
// StagingStore -> MergeProcessor) in a temp directory, the shared data directory, and the hit/miss check every
// benchmark ends with. Setup only (allocates freely); nothing here is on a timed path.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/ingest/stream_writer.h"
#include "host/runtime.h"
#include "host/storage/map_reader.h"
#include "planb/status.h"

namespace planb::bench {

// Prints `s` and exits when it is an error: a benchmark whose data did not load measures nothing.
void CheckSetup(const Status& s);

// A Runtime whose config (written to `dir`/planb.ini, home `dir`/home) holds `map_sections`, e.g.
// "[map.hashed]\ntype = temporal\nscheme = hashed\n". Exits on failure.
std::unique_ptr<Runtime> OpenBenchRuntime(const std::string& dir, const std::string& map_sections);

// Writes one stream (`add` adds its records to the writer), stages it and merges it into the shards. The first
// stream of a map becomes its shard; later ones merge into it. Exits on failure.
void LoadStream(Runtime* runtime, const std::string& stream_name, const std::function<void(StreamWriter*)>& add);

// Zips the finished stream of `writer` as a batch, stages it and merges it into the shards (the single-node
// path of `planb load`).
Status StageAndMerge(Runtime* runtime, StreamWriter* writer);

// Zips the finished stream of `writer` as a batch and stages it, for a later MergePending.
Status StageBatch(Runtime* runtime, StreamWriter* writer);

// A fresh directory $TMPDIR/planb-<name>-XXXXXX, removed with everything in it when the program exits (also when
// a setup step exits early), unless PLANB_BENCH_KEEP is set (to read the shards with mdb_stat afterwards). Exits
// when it cannot be made.
std::string MakeBenchRoot(const std::string& name);

// Loads `pairs` (key -> value) into `map` of `runtime` as one stream (LoadStream). Exits on failure.
void LoadKeyValues(Runtime* runtime, const std::string& map,
                   const std::vector<std::pair<std::string, std::string>>& pairs);

// A Runtime in `dir` with one state map `map` (hashed scheme) holding `data`, loaded through the real ingest path.
std::unique_ptr<Runtime> LoadStateMap(const std::string& dir, const std::string& map,
                                      const std::vector<std::pair<std::string, std::string>>& data);

// Opens `reader` on the shard of `map`. Exits on failure.
void OpenReader(Runtime* runtime, std::string_view map, MapReader* reader);

// $PLANB_SHARED_DATA/`file`, else the build's ../shared/data/`file`.
std::string SharedDataPath(const std::string& file);

// Reads the lines of a gzip-compressed text file (without their '\n'). False when it cannot be read.
bool ReadGzipLines(const std::string& path, std::vector<std::string>* lines);

// Ends a benchmark: every lookup of a hit must have found the right answer (`found` == iterations) and every
// lookup of a miss must have missed (`found` == 0), with no lookup failing (`errors`, the last one's message in
// `last_error`). Otherwise the benchmark is reported as an error, not as a fast (or slow) result.
void CheckFound(benchmark::State& state, size_t found, size_t errors, bool expect_hit, const char* what,
                const char* last_error = "");

}  // namespace planb::bench
