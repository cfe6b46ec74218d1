// The counters a storage node keeps for Prometheus (docs/operations.md, "Metrics"): what happened since the node
// started, counted where it happens. What is true now (staged batches, disk, shards) is measured at each scrape
// instead (node_state_collector.h). Names follow Prometheus' conventions: planb_ prefix, base units, _total for
// counters. Labels take only bounded values: reasons and rights from fixed lists, map names from the config.
// Thread-safety: every method may be called from any thread (prometheus-cpp's counters are atomic).
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "planb/status.h"

namespace planb {

// The label a refusal counts under: "busy", "disk_full", "permission_denied", "invalid", ... (one per Code, with
// kFull split into busy and disk_full), never the message, whose values are the peer's.
std::string_view RefusalReason(const Status& status);

class NodeMetrics {
 public:
  NodeMetrics();
  NodeMetrics(const NodeMetrics&) = delete;
  NodeMetrics& operator=(const NodeMetrics&) = delete;

  // Every labelled series starts at 0 (reasons, rights and outcomes at construction, maps here), as Prometheus
  // asks of counters that may appear: rate() and alerts see the first refusal as an increase from 0, not a new
  // series, and a dashboard shows 0 rather than "no data".
  void AddMaps(const std::vector<std::string>& maps);

  const prometheus::Registry& registry() const { return *registry_; }

  // Uploads (an upload: BEGIN..COMMIT of one batch).
  void UploadStaged() { uploads_staged_.Increment(); }
  void UploadAlreadyMerged() { uploads_already_merged_.Increment(); }
  void UploadRefused(const Status& why);
  void UploadBytesReceived(uint64_t bytes) { upload_bytes_.Increment(static_cast<double>(bytes)); }

  // Merges (the merge thread's passes).
  void BatchesMerged(uint64_t batches) { batches_merged_.Increment(static_cast<double>(batches)); }
  void BatchQuarantined() { batches_quarantined_.Increment(); }
  void MergeFailed() { merge_failures_.Increment(); }
  void RowsMerged(const std::string& map, uint64_t rows);
  void RowsDeleted(const std::string& map, uint64_t rows);

  // Snapshots served to readers and peers.
  void SnapshotOffered() { snapshots_offered_.Increment(); }
  void SnapshotDiffOffered() { snapshot_diffs_offered_.Increment(); }
  void SnapshotNotModified() { snapshots_not_modified_.Increment(); }
  void SnapshotSent() { snapshots_sent_.Increment(); }
  void SnapshotBytesSent(uint64_t bytes) { snapshot_bytes_.Increment(static_cast<double>(bytes)); }
  void SnapshotRefused(const Status& why);

  // Remote reads (lookups and queries run for clients), timed from the start of the read to its result.
  // `outcome`: "ok" (exit 0), "no_match" (exit 1: no key, no row), "error" (exit 2), or a RefusalReason.
  void RemoteRead(std::string_view outcome, double seconds);

  // Requests refused for lack of a right ("upload", "read", "snapshot", "node"). An unknown CURVE key never gets
  // as far as a request: the handshake refuses it (the log says so).
  void ClientRefused(std::string_view right);
  void ConnectionsHeld(uint64_t connections) { connections_.Set(static_cast<double>(connections)); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& uploads_;
  prometheus::Counter& uploads_staged_;
  prometheus::Counter& uploads_already_merged_;
  prometheus::Family<prometheus::Counter>& upload_refusals_;
  prometheus::Counter& upload_bytes_;
  prometheus::Counter& batches_merged_;
  prometheus::Counter& batches_quarantined_;
  prometheus::Counter& merge_failures_;
  prometheus::Family<prometheus::Counter>& rows_merged_;
  prometheus::Family<prometheus::Counter>& rows_deleted_;
  prometheus::Family<prometheus::Counter>& snapshots_;
  prometheus::Counter& snapshots_offered_;
  prometheus::Counter& snapshot_diffs_offered_;
  prometheus::Counter& snapshots_not_modified_;
  prometheus::Counter& snapshots_sent_;
  prometheus::Family<prometheus::Counter>& snapshot_refusals_;
  prometheus::Counter& snapshot_bytes_;
  prometheus::Family<prometheus::Counter>& remote_reads_;
  prometheus::Histogram& remote_read_seconds_;
  prometheus::Family<prometheus::Counter>& client_refusals_;
  prometheus::Gauge& connections_;
};

}  // namespace planb
