#include "host/monitoring/node_metrics.h"

#include <memory>

namespace planb {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// Remote reads take from tens of microseconds (one key, in cache) to remote_read_timeout (50 s by default).
const prometheus::Histogram::BucketBoundaries& ReadBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50};
  return buckets;
}

}  // namespace

std::string_view RefusalReason(const Status& status) {
  switch (status.code()) {
    case Code::kOk: return "ok";
    case Code::kNotFound: return "not_found";
    case Code::kInvalidArgument: return "invalid";
    case Code::kCorruption: return "corrupt";
    case Code::kIOError: return "io_error";
    case Code::kNotSupported: return "not_supported";
    case Code::kFull: return status.message().rfind("busy", 0) == 0 ? "busy" : "disk_full";
    case Code::kInternal: return "internal";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kNoData: return "no_data";
  }
  return "other";
}

NodeMetrics::NodeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      uploads_(BuildCounter()
                   .Name("planb_uploads_total")
                   .Help("Uploads of batches accepted, by outcome (staged, or already merged here before)")
                   .Register(*registry_)),
      uploads_staged_(uploads_.Add({{"outcome", "staged"}})),
      uploads_already_merged_(uploads_.Add({{"outcome", "already_merged"}})),
      upload_refusals_(BuildCounter()
                           .Name("planb_upload_refusals_total")
                           .Help("Upload requests refused (BEGIN, CHUNK, COMMIT, and batches that failed "
                                 "verification), by reason")
                           .Register(*registry_)),
      upload_bytes_(BuildCounter()
                        .Name("planb_upload_received_bytes_total")
                        .Help("Bytes of upload chunks written to receive/")
                        .Register(*registry_)
                        .Add({})),
      batches_merged_(BuildCounter()
                          .Name("planb_batches_merged_total")
                          .Help("Staged batches merged into the shards")
                          .Register(*registry_)
                          .Add({})),
      batches_quarantined_(BuildCounter()
                               .Name("planb_batches_quarantined_total")
                               .Help("Staged batches moved to quarantine/ by the merge")
                               .Register(*registry_)
                               .Add({})),
      merge_failures_(BuildCounter()
                          .Name("planb_merge_failures_total")
                          .Help("Merge passes that failed and will be retried (the log says why)")
                          .Register(*registry_)
                          .Add({})),
      rows_merged_(BuildCounter()
                       .Name("planb_rows_merged_total")
                       .Help("Rows of batches merged into a map's shard")
                       .Register(*registry_)),
      rows_deleted_(BuildCounter()
                        .Name("planb_rows_deleted_total")
                        .Help("Rows deleted from a map's shard by merged deletions and replacements")
                        .Register(*registry_)),
      snapshots_(BuildCounter()
                     .Name("planb_snapshot_requests_total")
                     .Help("SNAPSHOT requests answered, by outcome (offered a whole copy, offered a diff, or not "
                           "modified)")
                     .Register(*registry_)),
      snapshots_offered_(snapshots_.Add({{"outcome", "offered"}})),
      snapshot_diffs_offered_(snapshots_.Add({{"outcome", "diff"}})),
      snapshots_not_modified_(snapshots_.Add({{"outcome", "not_modified"}})),
      snapshots_sent_(BuildCounter()
                          .Name("planb_snapshots_sent_total")
                          .Help("Snapshot zips whose last byte was sent")
                          .Register(*registry_)
                          .Add({})),
      snapshot_refusals_(BuildCounter()
                             .Name("planb_snapshot_refusals_total")
                             .Help("SNAPSHOT requests refused, by reason")
                             .Register(*registry_)),
      snapshot_bytes_(BuildCounter()
                          .Name("planb_snapshot_sent_bytes_total")
                          .Help("Bytes of snapshot zips sent (FETCH_DATA)")
                          .Register(*registry_)
                          .Add({})),
      remote_reads_(BuildCounter()
                        .Name("planb_remote_reads_total")
                        .Help("Remote lookups and queries run for clients, by outcome")
                        .Register(*registry_)),
      remote_read_seconds_(BuildHistogram()
                               .Name("planb_remote_read_duration_seconds")
                               .Help("Time a remote lookup or query took on this node")
                               .Register(*registry_)
                               .Add({}, ReadBuckets())),
      client_refusals_(BuildCounter()
                           .Name("planb_client_refusals_total")
                           .Help("Requests refused because the client's key lacks the right")
                           .Register(*registry_)),
      connections_(BuildGauge()
                       .Name("planb_connections")
                       .Help("Client connections held by the node's socket")
                       .Register(*registry_)
                       .Add({})) {
  for (Code code : {Code::kNotFound, Code::kInvalidArgument, Code::kCorruption, Code::kIOError, Code::kNotSupported,
                    Code::kInternal, Code::kPermissionDenied, Code::kNoData}) {
    const std::string reason(RefusalReason(Status(code, "")));
    upload_refusals_.Add({{"reason", reason}});
    snapshot_refusals_.Add({{"reason", reason}});
  }
  for (const char* reason : {"busy", "disk_full"}) {
    upload_refusals_.Add({{"reason", reason}});
    snapshot_refusals_.Add({{"reason", reason}});
  }
  for (const char* outcome : {"ok", "no_match", "error"}) remote_reads_.Add({{"outcome", outcome}});
  for (const char* right : {"upload", "read", "snapshot", "node"}) client_refusals_.Add({{"right", right}});
}

void NodeMetrics::AddMaps(const std::vector<std::string>& maps) {
  for (const std::string& map : maps) {
    rows_merged_.Add({{"map", map}});
    rows_deleted_.Add({{"map", map}});
  }
}

void NodeMetrics::UploadRefused(const Status& why) {
  upload_refusals_.Add({{"reason", std::string(RefusalReason(why))}}).Increment();
}

void NodeMetrics::RowsMerged(const std::string& map, uint64_t rows) {
  rows_merged_.Add({{"map", map}}).Increment(static_cast<double>(rows));
}

void NodeMetrics::RowsDeleted(const std::string& map, uint64_t rows) {
  rows_deleted_.Add({{"map", map}}).Increment(static_cast<double>(rows));
}

void NodeMetrics::SnapshotRefused(const Status& why) {
  snapshot_refusals_.Add({{"reason", std::string(RefusalReason(why))}}).Increment();
}

void NodeMetrics::RemoteRead(std::string_view outcome, double seconds) {
  remote_reads_.Add({{"outcome", std::string(outcome)}}).Increment();
  remote_read_seconds_.Observe(seconds);
}

void NodeMetrics::ClientRefused(std::string_view right) {
  client_refusals_.Add({{"right", std::string(right)}}).Increment();
}

}  // namespace planb
