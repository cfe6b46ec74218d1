// `planb load`: each input file is one stream, written to writer/ as one LMDB per map. Only when every file
// has been read without error are the streams staged (in command-line order) and merged; a failed load
// leaves staging/ and shards/ untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/ingest/merge_processor.h"
#include "host/runtime.h"

namespace planb {

struct LoadOptions {
  // The effective time of records without <time>; default: each file's modification time, so that loading
  // the same unchanged file again gives the same rows.
  std::optional<int64_t> effective_time_ms;
  // Called now and then with (file, records read so far) for progress display; may be empty.
  std::function<void(const std::string&, uint64_t)> progress;
};

struct StreamReport {
  std::string file;
  std::map<std::string, uint64_t> records;  // per map
};

struct LoadReport {
  std::vector<StreamReport> streams;
  bool staged = false;  // true once any stream is staged: a later failure leaves it queued, not lost
  MergeReport merge;
};

Status RunLoad(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
               LoadReport* report);

}  // namespace planb
