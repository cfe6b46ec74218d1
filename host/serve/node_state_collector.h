// What a storage node's metrics say about now, measured at each scrape (docs/operations.md, "Metrics"): batches
// staged and quarantined, the merge lag, the home's free disk, and per map the shard's bytes, rows, free share,
// content version and whether the node is catching up on it; plus the process figures Prometheus' own client
// libraries export (process_start_time_seconds, process_open_fds, process_resident_memory_bytes).
// A scrape reads directories and opens a read transaction per shard: a few syscalls per map, nothing that waits
// for a merge. A shard that cannot be measured is reported by planb_shard_measure_ok{map} = 0, not by a failed
// scrape.
// Thread-safety: Collect may run on any thread, beside merges (it only reads).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "host/runtime.h"

namespace planb {

struct NodeStateSources {
  Runtime* runtime = nullptr;
  // Whether the node is behind a peer on the map (normalised name); null: it has no peers.
  std::function<bool(const std::string& map)> catching_up;
  std::function<bool()> merge_thread_running;
  uint64_t ready_min_free_bytes = 0;  // the /readyz disk floor
  int64_t started_ms = 0;             // the process's start, Unix ms
};

class NodeStateCollector final : public prometheus::Collectable {
 public:
  explicit NodeStateCollector(NodeStateSources sources) : sources_(std::move(sources)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  NodeStateSources sources_;
};

}  // namespace planb
