// `planb delete MAP --where EXPR | --all [--dry-run [--format F] [--remote]]`: a deletion batch (delete_job.h), or
// with --dry-run the rows it would take, as `planb query MAP --where EXPR` prints them, and a summary on stderr.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/cli/commands.h"
#include "host/cli/delivery_output.h"
#include "host/cluster/cluster_delivery.h"
#include "host/commands/row_formats.h"
#include "host/commands/remote_read_request.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/delete_job.h"
#include "host/ingest/tombstones.h"
#include "host/plugin_host/key_format.h"
#include "host/query/expression.h"
#include "host/query/map_scan.h"
#include "host/transfer/remote_read.h"

namespace planb {

namespace {

std::string RowsText(uint64_t rows) { return std::to_string(rows) + (rows == 1 ? " row" : " rows"); }

// The rows the deletion would take, read from this node's shard in one read transaction.
int LocalDryRun(Runtime& runtime, const CommandLine& cli, const MapPlugins& plugins, int64_t deletion_time_ms,
                std::ostream& out, std::ostream& err) {
  if (!runtime.config().cluster.IsStorageNode()) {
    err << "planb: delete --dry-run reads the map's shard, and this node has none (it is not a storage node): "
           "add --remote to ask a storage node\n";
    return kExitError;
  }
  const std::vector<FieldSpec> fields = MapFields(plugins.type_descriptor(), plugins.config());
  OutputFormat format;
  if (!ParseOutputFormat(cli.format.value_or("table"), &format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of table, csv, json\n";
    return kExitError;
  }
  ScanRequest request;
  std::unique_ptr<Expression> where;
  // As the merge will: only rows older than the deletion's time.
  const PluginDescriptor& type = plugins.type_descriptor();
  request.filter = [&type, deletion_time_ms](const Row& row) { return RowTimeMs(type, row) < deletion_time_ms; };
  if (cli.where) {
    Status s = Expression::Parse(*cli.where, fields.data(), static_cast<uint32_t>(fields.size()), &where);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    request.bounds = where->Bounds();
    request.key_prefix = where->KeyPrefix();
    request.filter = [&where, &type, deletion_time_ms](const Row& row) {
      return RowTimeMs(type, row) < deletion_time_ms && where->Matches(row);
    };
  }
  std::shared_ptr<MapEnv> shard;
  Status s = runtime.OpenForReading(plugins.config().name, StaleSnapshot::kFetchNow, &shard);
  if (!s.ok() && s.code() != Code::kNoData) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  std::unique_ptr<RowWriter> writer = RowWriter::Create(format, fields.data(), static_cast<uint32_t>(fields.size()), out);
  ScanStats stats;
  if (shard) {
    s = ScanMap(
        *shard, request,
        [&writer](const Row& row) {
          writer->Write(row);
          return true;
        },
        &stats);
  } else {
    s = Status::Ok();  // no shard yet: nothing to delete
  }
  writer->Finish();
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  err << "would delete " << RowsText(stats.rows_matched) << " of " << plugins.config().name << "\n";
  return kExitOk;
}

// The same asked of a storage node: its `query --explain` prints the rows and, last on stderr, the rows matched.
int RemoteDryRun(Runtime& runtime, const CommandLine& cli, const MapPlugins& plugins, std::ostream& out,
                 std::ostream& err) {
  protocol::ReadRequest request;
  request.kind = protocol::ReadKind::kQuery;
  request.map = plugins.config().name;
  request.where = cli.where;
  request.explain = true;
  OutputFormat format = OutputFormat::kTable;
  if (!ParseOutputFormat(cli.format.value_or("table"), &format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of table, csv, json\n";
    return kExitError;
  }
  request.format = ReadFormatOf(format);
  zmq::context_t context;
  int exit_code = kExitError;
  std::string node_out;
  std::string node_err;
  std::string node_used;
  const Status s = RemoteRead(context, runtime.config().cluster, request, &exit_code, &node_out, &node_err, &node_used);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  out.write(node_out.data(), static_cast<std::streamsize>(node_out.size()));
  out.flush();
  // The explain line is ours to read, not to print: "scan: ..., rows matched: N\n" at the end of stderr.
  const std::string marker = "rows matched: ";
  const size_t line = node_err.rfind("scan: ");
  const size_t at = node_err.rfind(marker);
  uint64_t matched = 0;
  bool counted = false;
  if (exit_code == kExitOk && line != std::string::npos && at != std::string::npos && at > line) {
    const char* begin = node_err.data() + at + marker.size();
    const char* end = node_err.data() + node_err.size();
    const auto [next, ec] = std::from_chars(begin, end, matched);
    counted = ec == std::errc() && (next == end || *next == '\n');
    if (counted) node_err.erase(line);
  }
  err.write(node_err.data(), static_cast<std::streamsize>(node_err.size()));
  if (exit_code != kExitOk) return exit_code;
  if (!counted) {
    err << "planb: " << node_used << " did not say how many rows matched\n";
    return kExitError;
  }
  err << "would delete " << RowsText(matched) << " of " << plugins.config().name << " (as " << node_used
      << " has it)\n";
  return kExitOk;
}

// `succeeded`: the delete met write_quorum, so a node without the batch gets it by catch-up.
void PrintDeliveries(const DeleteReport& report, bool succeeded, std::ostream& out) {
  for (const NodeDelivery& d : report.deliveries) PrintNodeDelivery(d, succeeded, out);
}

size_t StoredOn(const std::vector<NodeDelivery>& deliveries) {
  return static_cast<size_t>(
      std::count_if(deliveries.begin(), deliveries.end(), [](const NodeDelivery& d) { return d.status.ok(); }));
}

}  // namespace

int RunDeleteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (cli.where.has_value() == cli.all) {
    err << "planb: delete: give exactly one of --where EXPR and --all\n";
    return kExitError;
  }
  if (!cli.dry_run && (cli.format || cli.remote)) {
    err << "planb: delete: --" << (cli.format ? "format" : "remote")
        << " applies to --dry-run only (a deletion always goes to every storage node)\n";
    return kExitError;
  }
  DeleteEntry entry;
  entry.all = cli.all;
  entry.where = cli.where.value_or("");
  // The deletion's time: rows older than it go, and rows older than it merged later are shadowed (tombstones.h).
  entry.time_ms = CurrentTimeMs();
  if (cli.effective_time && !ParseIsoTime(*cli.effective_time, &entry.time_ms)) {
    err << "planb: delete: --effective-time: '" << LogValue(*cli.effective_time)
        << "' is not an ISO-8601 time (e.g. 2024-01-01T08:10:22.023Z)\n";
    return kExitError;
  }
  std::shared_ptr<const MapPlugins> plugins;
  Status s = CheckDelete(runtime, cli.args[0], entry, &plugins);
  if (!s.ok()) {
    err << "planb: delete: " << s.message() << "\n";
    return kExitError;
  }
  if (cli.dry_run) {
    return cli.remote ? RemoteDryRun(runtime, cli, *plugins, out, err) : LocalDryRun(runtime, cli, *plugins, entry.time_ms, out, err);
  }

  DeleteOptions options;
  std::unique_ptr<ClusterDelivery> delivery;
  if (!runtime.config().cluster.single_node()) {
    delivery = std::make_unique<ClusterDelivery>(runtime);
    options.delivery = delivery.get();
  }
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    options.upload_progress = [&err](const std::string& node, uint64_t bytes, uint64_t total) {
      const uint64_t percent = total == 0 ? 100 : bytes * 100 / total;
      err << "\r\033[Kdeletion batch: uploading to " << node << ": " << percent << "%" << std::flush;
    };
  }
  DeleteReport report;
  s = RunDelete(runtime, cli.args[0], entry, options, &report);
  if (terminal) err << "\r\033[K" << std::flush;
  if (!s.ok()) {
    if (report.distributed) {
      out << "deletion batch " << report.batch_id << " of " << report.map << ":\n";
      PrintDeliveries(report, false, out);
      err << "planb: delete failed: " << s.message()
          << "\nWhat each node stored is listed on stdout. Run the same delete again once the cause is fixed.\n";
    } else if (report.staged) {
      err << "planb: delete staged its batch, but it did not merge: " << s.message() << "\nIt stays queued in "
          << runtime.home().staging() << " (or quarantined; see planb stores) and merges once the cause is fixed.\n";
    } else {
      err << "planb: delete failed, nothing was staged: " << s.message() << "\n";
    }
    return kExitError;
  }
  if (!report.distributed) {
    out << "deletion batch " << report.sequence << " of " << report.map
        << " staged on 1 node and merged: " << RowsText(report.rows_deleted) << " deleted\n";
    return kExitOk;
  }
  out << "deletion batch " << report.batch_id << " of " << report.map << " staged on " << StoredOn(report.deliveries)
      << " storage node(s)\n";
  PrintDeliveries(report, true, out);
  return kExitOk;
}

}  // namespace planb
