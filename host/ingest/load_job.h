// `planb load`: each input file is one stream, written to writer/ as one LMDB per map and zipped into one
// batch. Only when every file has been read without error are the batches stored, in command-line order:
// - single node (no node_list): staged here and merged by this process, as the design's single node does;
// - with a node_list: delivered to every storage node (batch_distributor.h); a stream must be stored on every
//   node before the next one is sent, so every node stages them in the same order.
// A failed load leaves staging/ and shards/ of every node untouched, or (when some nodes stored a stream and
// others did not) in a state that loading the same files again completes: loads are idempotent.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/cluster/batch_distributor.h"
#include "host/ingest/merge_processor.h"
#include "host/runtime.h"

namespace planb {

struct LoadOptions {
  // The effective time of records without <time>; default: each file's modification time, so that loading
  // the same unchanged file again gives the same rows.
  std::optional<int64_t> effective_time_ms;
  // Called now and then with (file, records read so far) for progress display; may be empty.
  std::function<void(const std::string&, uint64_t)> progress;
  // Called now and then during uploads with (file, storage node, bytes acknowledged, batch bytes); may be empty.
  std::function<void(const std::string&, const std::string&, uint64_t, uint64_t)> upload_progress;
};

struct StreamReport {
  std::string file;
  std::map<std::string, uint64_t> records;  // per map
  uint64_t batch_bytes = 0;                 // the zip's size
  std::vector<NodeDelivery> deliveries;     // with a node_list: one per storage node
};

struct LoadReport {
  std::vector<StreamReport> streams;
  bool staged = false;  // true once any stream is staged on any node: a later failure leaves it queued, not lost
  bool distributed = false;  // the streams went to the node list (else: single node, merged here)
  MergeReport merge;         // single node: what this process merged
};

Status RunLoad(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
               LoadReport* report);

}  // namespace planb
