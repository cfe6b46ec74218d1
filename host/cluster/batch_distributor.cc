#include "host/cluster/batch_distributor.h"

#include <exception>
#include <algorithm>
#include <mutex>
#include <thread>

#include "host/ingest/merge_processor.h"
#include "host/ingest/merged_check.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"

namespace planb {

namespace {

// This node's copy: linked into staging/ under the staging lock, so it is ordered with uploads from elsewhere.
void DeliverLocally(Runtime& runtime, const std::string& zip_path, bool synchronise_merge, NodeDelivery* delivery) {
  // As a remote node does (StorageNode::Accept): a batch this node merged already is not staged again.
  std::vector<std::string> maps;
  std::string recorded_id;
  UnzipLimits limits{runtime.config().cluster.max_batch_size};
  limits.allow_deletes = true;  // this process made the batch (a load's or a deletion's)
  delivery->status = ReadBatchId(zip_path, limits, &recorded_id, &maps);
  bool merged_before = false;
  if (delivery->status.ok()) delivery->status = IsMergedIntoEveryShard(runtime, maps, recorded_id, &merged_before);
  if (!delivery->status.ok()) return;
  if (merged_before) {
    delivery->already_merged = recorded_id;
    delivery->merged = true;
    return;
  }
  StagingStore staging(runtime.home());
  delivery->status = staging.Stage(zip_path, &delivery->sequence, /*link_only=*/true);
  if (!delivery->status.ok() || !synchronise_merge) return;
  // Whoever holds merging/.lock (this process or the node's `planb serve`) merges every staged batch in order;
  // the batch is merged once its staged zip is gone.
  MergeReport report;
  MergeProcessor merger(runtime, UnzipLimits{runtime.config().cluster.max_batch_size});
  Status merged = merger.MergePending(&report);
  if (staging.Contains(delivery->sequence)) {
    delivery->status = merged.ok() ? Status::Internal("staged batch " + StagingStore::BatchName(delivery->sequence) +
                                                      " is still waiting after a merge run")
                                   : merged.WithContext("merging");
    return;
  }
  // Gone from staging: merged by this run or by the node's own merger, unless one of them quarantined it.
  if (report.merged.count(delivery->sequence) == 0) {
    std::vector<QuarantinedBatch> quarantined;
    (void)ListQuarantine(runtime.home(), &quarantined);  // unreadable: judged merged, as before quarantine existed
    const std::string name = StagingStore::BatchFileName(delivery->sequence);
    for (const QuarantinedBatch& batch : quarantined) {
      if (batch.name != name) continue;
      delivery->status = Status::Corruption("batch " + name + " was quarantined in " + QuarantineDir(runtime.home()) +
                                            ": " + batch.reason);
      return;
    }
  }
  delivery->merged = true;
}

std::string DescribeFailures(const std::vector<NodeDelivery>& deliveries) {
  std::string failed;
  std::string stored;
  size_t failures = 0;
  for (const NodeDelivery& d : deliveries) {
    if (d.status.ok()) {
      stored += (stored.empty() ? "" : ", ") + d.node;
    } else {
      ++failures;
      failed += "\n  " + d.node + (d.local ? " (this node)" : "") + ": " + d.status.message();
    }
  }
  std::string message = "not stored on " + std::to_string(failures) + " of " + std::to_string(deliveries.size()) +
                        " storage node(s):" + failed;
  if (!stored.empty()) {
    message += "\n  (stored on " + stored + "; loading the same files again completes the load: a node that has "
               "this batch answers \"already merged\" and counts nothing twice)";
  }
  return message;
}

}  // namespace

UploadSettings UploadSettingsFor(const ClusterConfig& cluster, bool synchronise_merge) {
  UploadSettings settings;
  settings.request_timeout_ms = cluster.request_timeout_ms;
  settings.send_part_attempts = cluster.send_part_attempts;
  settings.retry_delay_ms = cluster.send_part_retry_delay_ms;
  settings.synchronise_merge = synchronise_merge;
  return settings;
}

Status DistributeBatch(Runtime& runtime, zmq::context_t& context, const std::string& zip_path,
                       const std::string& batch_id, bool synchronise_merge, std::vector<NodeDelivery>* deliveries,
                       const DeliveryProgress& progress) {
  const ClusterConfig& cluster = runtime.config().cluster;
  const UploadSettings settings = UploadSettingsFor(cluster, synchronise_merge);
  deliveries->assign(cluster.node_list.size(), NodeDelivery{});
  std::vector<std::thread> uploads;
  std::mutex progress_mutex;
  size_t local = deliveries->size();
  for (size_t i = 0; i < cluster.node_list.size(); ++i) {
    NodeDelivery& delivery = (*deliveries)[i];
    delivery.node = cluster.node_list[i];
    if (delivery.node == cluster.node_name) {
      delivery.local = true;
      local = i;
      continue;
    }
    const UploadTarget target = AddressOf(cluster, delivery.node);
    uploads.emplace_back([&context, target, &zip_path, &batch_id, settings, &delivery, &progress, &progress_mutex, i] {
      std::function<void(uint64_t)> report;
      if (progress) {
        report = [&progress, &progress_mutex, i](uint64_t bytes) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          progress(i, bytes);
        };
      }
      try {
        delivery.status = UploadBatch(context, target, zip_path, batch_id, settings, &delivery.upload, report);
      } catch (const std::exception& e) {  // zmq::error_t on a broken context: this node failed, not the load
        delivery.status = Status::IOError(std::string("transport error: ") + e.what());
      }
      delivery.sequence = delivery.upload.sequence;
      delivery.merged = delivery.upload.merged;
      delivery.already_merged = delivery.upload.already_merged;
    });
  }
  if (local < deliveries->size()) DeliverLocally(runtime, zip_path, synchronise_merge, &(*deliveries)[local]);
  for (std::thread& upload : uploads) upload.join();
  // write_quorum: the batch is stored once that many nodes have it; the others fetch it from them (catch-up).
  const size_t stored = static_cast<size_t>(
      std::count_if(deliveries->begin(), deliveries->end(), [](const NodeDelivery& d) { return d.status.ok(); }));
  if (stored >= cluster.WriteQuorum()) return Status::Ok();
  for (const NodeDelivery& d : *deliveries) {
    if (!d.status.ok()) return Status(d.status.code(), DescribeFailures(*deliveries));
  }
  return Status::Ok();
}

}  // namespace planb
