// `planb delete MAP --where EXPR | --all`: a deletion batch (one `<map>/delete` entry, host/transfer/delete_entry.h)
// that travels and merges like a load's batch (load_job.h): zipped under a new batch id, then
// - single node (no node_list): staged here and merged by this process (with anything staged before it);
// - with a node_list: delivered to every storage node through the load's BatchDelivery, in order with loads.
// Before anything is staged the map must be configured, the expression must parse against its type's fields, and
// every node that will merge must say it can (load_check.h); any failure stages nothing anywhere. Merging the
// batch again (a crash, a second delivery) changes nothing: the shard records its id (delete_merge.h).
// Thread-safety: as RunLoad, one call at a time per Runtime (merges of a home take turns through merging/.lock).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/ingest/batch_delivery.h"
#include "host/ingest/merge_processor.h"
#include "host/runtime.h"
#include "host/transfer/delete_entry.h"

namespace planb {

struct DeleteOptions {
  // Where the batch goes with a node_list (REQUIRED then; not owned). Unused on a single node.
  BatchDelivery* delivery = nullptr;
  // Called during uploads with (storage node, bytes acknowledged, batch bytes); may be empty.
  std::function<void(const std::string&, uint64_t, uint64_t)> upload_progress;
};

struct DeleteReport {
  std::string map;       // as configured
  std::string batch_id;  // "" until the batch is made
  uint64_t batch_bytes = 0;
  bool staged = false;                   // on any node: a later failure leaves it queued, not lost
  bool distributed = false;              // with a node_list
  uint64_t sequence = 0;                 // single node: its staging sequence
  bool merged = false;                   // single node: merged by this process
  uint64_t rows_deleted = 0;             // single node, once merged
  std::vector<NodeDelivery> deliveries;  // with a node_list: one per storage node
  MergeReport merge;                     // single node: what this process merged
};

// Errors: kInvalidArgument naming the map ("unknown map ...") or the expression (the parser's message), a node
// that cannot take the batch (nothing staged anywhere), or the batch not merging (single node: why).
Status RunDelete(Runtime& runtime, const std::string& map, const DeleteEntry& entry, const DeleteOptions& options,
                 DeleteReport* report);

// Checks `map` and `entry` as RunDelete does first (for --dry-run): `*plugins` gets the map's plugins.
Status CheckDelete(Runtime& runtime, const std::string& map, const DeleteEntry& entry,
                   std::shared_ptr<const MapPlugins>* plugins);

}  // namespace planb
