#include "host/ingest/delete_job.h"

#include <filesystem>
#include <memory>

#include "host/common/file_util.h"
#include "host/common/log_text.h"
#include "host/ingest/batch_ids.h"
#include "host/ingest/deletion_fields.h"
#include "host/ingest/load_check.h"
#include "host/ingest/node_checks.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/transfer/batch_zip.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

// Merge errors can quote a batch's bytes: escaped and capped, as the load's are.
constexpr size_t kReasonCap = 1000;

// Every node that will merge is asked first (single node: this one): the map known, its shard opening, room.
Status CheckNodes(Runtime& runtime, const std::string& map, uint64_t bytes, const DeleteOptions& options) {
  protocol::PrepareRequest request;
  request.maps.push_back({map, bytes});
  std::vector<NodeCheck> checks;
  if (runtime.config().cluster.single_node()) {
    checks.resize(1);
    checks[0].node = runtime.home().root();
    checks[0].local = true;
    std::shared_ptr<MapEnv> shard;
    Status opened = runtime.OpenShard(map, &shard);
    checks[0].status =
        opened.ok() || opened.code() == Code::kNotFound ? CheckLoadLocally(runtime, request, &checks[0].reply) : opened;
  } else {
    if (options.delivery == nullptr) return Status::Internal("delete: a node_list but no BatchDelivery");
    options.delivery->Check(request, &checks);
  }
  // As for a load: a node that does not answer is left to catch-up while write_quorum nodes answered.
  return JudgeNodeChecks(checks, runtime.config().cluster.single_node() ? 1 : runtime.config().cluster.WriteQuorum(),
                         "deletion", nullptr);
}

// The batch directory as ZipBatch takes it: <dir>/<map>/delete.
Status WriteBatchDir(const std::string& dir, const std::string& map, const DeleteEntry& entry) {
  PLANB_RETURN_IF_ERROR(MakeDirectories(dir + "/" + map));
  return WriteFileAtomically(dir + "/" + map + "/" + kDeleteEntryName, DeleteEntryText(entry));
}

Status StoreLocally(Runtime& runtime, const std::string& zip, DeleteReport* report) {
  PLANB_RETURN_IF_ERROR(StagingStore(runtime.home()).Stage(zip, &report->sequence));
  report->staged = true;
  MergeProcessor merger(runtime, UnzipLimits{runtime.config().cluster.max_batch_size});
  const Status merged = merger.MergePending(&report->merge);
  report->merged = report->merge.merged.count(report->sequence) > 0;
  if (report->merged) {
    const auto it = report->merge.rows_deleted.find(report->map);
    report->rows_deleted = it == report->merge.rows_deleted.end() ? 0 : it->second;
    return Status::Ok();
  }
  const std::string batch = "deletion batch " + std::to_string(report->sequence);
  const auto failed = report->merge.failed.find(report->sequence);
  if (failed != report->merge.failed.end()) {
    return Status::Invalid(batch + " did not merge (it stays staged; the next load or merge tries it again): " +
                           LogValue(failed->second, kReasonCap));
  }
  const std::string name = StagingStore::BatchFileName(report->sequence);
  for (const QuarantinedBatch& q : report->merge.quarantined) {
    if (q.name == name) return Status::Invalid(batch + " was quarantined: " + LogValue(q.reason, kReasonCap));
  }
  for (const HeldBatch& held : report->merge.held) {
    if (held.sequence == report->sequence) {
      return Status::Invalid(batch + " is held back: map " + held.map + " is blocked by batch " + held.by +
                             " (quarantined or failing; see planb stores)");
    }
  }
  if (!merged.ok()) return Status(merged.code(), batch + " did not merge: " + merged.message());
  return Status::Invalid(batch + " did not merge (still staged)");
}

Status Distribute(Runtime& runtime, const std::string& zip, const DeleteOptions& options, DeleteReport* report) {
  report->distributed = true;
  DeliveryProgress progress;
  if (options.upload_progress) {
    const std::vector<std::string>& nodes = runtime.config().cluster.node_list;
    progress = [&options, &nodes, report](size_t node, uint64_t bytes) {
      options.upload_progress(nodes[node], bytes, report->batch_bytes);
    };
  }
  const MapConfig* config = runtime.config().FindMap(report->map);
  const bool synchronise = config != nullptr && config->synchronise_merge;
  Status s = options.delivery->Deliver(zip, report->batch_id, synchronise, &report->deliveries, progress);
  for (const NodeDelivery& d : report->deliveries) report->staged = report->staged || d.status.ok();
  return s;
}

}  // namespace

Status CheckDelete(Runtime& runtime, const std::string& map, const DeleteEntry& entry,
                   std::shared_ptr<const MapPlugins>* plugins) {
  Status s = runtime.catalog().Get(map, plugins);
  if (!s.ok()) return Status::Invalid("unknown map: " + s.message());
  if (entry.all) return Status::Ok();
  if (entry.where.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::Invalid("--where: an empty expression (use --all to delete every row)");
  }
  if (DeleteEntryText(entry).size() > kMaxDeleteEntryBytes) {
    DeleteEntry empty = entry;
    empty.where.clear();
    const size_t room = kMaxDeleteEntryBytes - DeleteEntryText(empty).size();
    return Status::Invalid("--where: " + std::to_string(entry.where.size()) + " bytes, more than a deletion holds (" +
                           std::to_string(room) + ")");
  }
  return CheckDeletionExpression(entry, (*plugins)->type_descriptor(), (*plugins)->config());
}

Status RunDelete(Runtime& runtime, const std::string& map, const DeleteEntry& entry, const DeleteOptions& options,
                 DeleteReport* report) {
  std::shared_ptr<const MapPlugins> plugins;
  PLANB_RETURN_IF_ERROR(CheckDelete(runtime, map, entry, &plugins));
  report->map = plugins->config().name;
  const std::string text = DeleteEntryText(entry);
  PLANB_RETURN_IF_ERROR(CheckNodes(runtime, report->map, text.size(), options));

  PLANB_RETURN_IF_ERROR(StreamWriter::RemoveAbandoned(runtime.home().writer()));
  const std::string stream = StreamWriter::NewStreamName();
  const std::string dir = runtime.home().writer() + "/" + stream;
  const std::string zip = dir + ".zip";
  report->batch_id = OwnBatchNamespace(runtime.config().cluster) + runtime.config().cluster.node_name + "/" + stream;
  ZipOptions zip_options;
  zip_options.compress = !runtime.config().cluster.single_node();
  zip_options.batch_id = report->batch_id;
  Status s = WriteBatchDir(dir, report->map, entry);
  if (s.ok()) s = ZipBatch(dir, zip, zip_options);
  (void)RemoveTree(dir);
  if (s.ok()) {
    std::error_code ec;
    report->batch_bytes = fs::file_size(zip, ec);
    s = runtime.config().cluster.single_node() ? StoreLocally(runtime, zip, report)
                                               : Distribute(runtime, zip, options, report);
  }
  (void)RemoveTree(zip);  // staged (moved) or delivered: what is left is ours
  return s;
}

}  // namespace planb
