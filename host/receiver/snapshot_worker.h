// The snapshot worker runs BatchSink::PrepareSnapshot for SNAPSHOT requests (and PrepareRetainedBatch for
// OFFER_BATCH, which hashes the retained zip) on a LoopWorker thread, one at a time
// in arrival order, so that copying and zipping a large shard never stalls the receiver's ROUTER loop (uploads,
// reads and FETCHes keep flowing). Stop drops the queued requests: their senders time out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/receiver/loop_worker.h"
#include "host/receiver/snapshot_offer.h"
#include "host/receiver/upload_receiver.h"
#include "host/storage/content_version.h"
#include "planb/status.h"

namespace planb {

struct SnapshotJob {
  std::string routing_id;
  uint64_t request_id = 0;
  std::string map;
  ContentVersion have;
  std::string client;  // ClientAccess::Identify of the requester: its token is its own
  std::string batch_id;  // OFFER_BATCH: the retained batch asked for (then `map` and `have` are unused)
  std::optional<SnapshotSince> since;  // SNAPSHOT_SINCE: the requester takes a diff (`have` is since->have)
};

struct SnapshotJobResult {
  std::string routing_id;
  uint64_t request_id = 0;
  std::string map;
  Status status;  // non-OK: answered ERROR with its code
  PreparedSnapshot prepared;
  std::string client;  // the job's
  std::string batch_id;  // the job's
  ContentVersion since_version;  // the requester's version (for the log of a diff)
};

using SnapshotWorker = LoopWorker<SnapshotJob, SnapshotJobResult>;

// A worker handing each request to sink.PrepareSnapshot (sink.PrepareRetainedBatch for OFFER_BATCH). REQUIRES: `sink` outlives the worker.
SnapshotWorker MakeSnapshotWorker(BatchSink& sink);

}  // namespace planb
