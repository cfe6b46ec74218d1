#include "host/receiver/snapshot_worker.h"

#include <utility>

namespace planb {

SnapshotWorker MakeSnapshotWorker(BatchSink& sink) {
  return SnapshotWorker(
      "snapshot worker",
      [&sink](SnapshotJob& job) {
        SnapshotJobResult result;
        result.request_id = job.request_id;
        if (!job.batch_id.empty()) {
          result.status = sink.PrepareRetainedBatch(job.batch_id, &result.prepared);
        } else if (job.since) {
          result.status = sink.PrepareSnapshotSince(job.map, *job.since, &result.prepared);
        } else {
          result.status = sink.PrepareSnapshot(job.map, job.have, &result.prepared);
        }
        result.since_version = job.have;
        // Moved only now: on a throw the failure result needs them.
        result.routing_id = std::move(job.routing_id);
        result.map = std::move(job.map);
        result.client = std::move(job.client);
        result.batch_id = std::move(job.batch_id);
        return result;
      },
      [](SnapshotJob& job, const std::exception& e) {
        SnapshotJobResult result;
        result.routing_id = std::move(job.routing_id);
        result.request_id = job.request_id;
        result.status = Status::Internal((job.batch_id.empty() ? "SNAPSHOT of " + job.map
                                                               : "OFFER_BATCH of " + job.batch_id) +
                                         ": " + e.what());
        result.map = std::move(job.map);
        result.client = std::move(job.client);
        result.batch_id = std::move(job.batch_id);
        return result;
      });
}

}  // namespace planb
