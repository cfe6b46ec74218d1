#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>

#include "host/cli/commands.h"
#include "host/cli/delivery_output.h"
#include "host/cluster/cluster_delivery.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/batch_ids.h"
#include "host/ingest/load_job.h"
#include "host/ingest/staging_store.h"

namespace planb {

namespace {

void PrintRecords(const StreamReport& stream, std::ostream& out) {
  uint64_t total = 0;
  for (const auto& entry : stream.records) total += entry.second;
  out << stream.file << ": " << total << " records in " << stream.records.size() << " map(s)\n";
  for (const auto& [map, records] : stream.records) {
    out << "  " << std::left << std::setw(28) << map << std::right << std::setw(10) << records << "\n";
  }
}

bool PrintSkipped(const LoadReport& report, const StreamReport& stream, std::ostream& out);

// Where each stream ended up, node by node: what a failed load leaves behind, stated exactly.
void PrintDeliveries(const LoadReport& report, std::ostream& out) {
  for (const StreamReport& stream : report.streams) {
    if (stream.same_as && PrintSkipped(report, stream, out)) continue;
    if (stream.deliveries.empty()) {
      out << stream.file << ": not stored on any node\n";
      continue;
    }
    out << stream.file << ": batch of " << stream.batch_bytes << " bytes\n";
    for (const NodeDelivery& d : stream.deliveries) PrintNodeDelivery(d, false, out);
  }
}

void PrintLocalOutcome(const LoadReport& report, std::ostream& out) {
  for (size_t i = 0; i < report.streams.size(); ++i) {
    const StreamReport& stream = report.streams[i];
    if (PrintSkipped(report, stream, out)) continue;
    out << stream.file << ": "
        << (stream.sequence == 0 ? "not staged"
                                 : report.Merged(i) ? "staged as batch " + std::to_string(stream.sequence) + ", merged"
                                                    : "staged as batch " + std::to_string(stream.sequence) +
                                                          ", not merged")
        << "\n";
  }
}

// Batches staged before this load that failed, were quarantined or are held back by this run: not this load's
// streams (those are in the load's own error), but what may be holding them back, and the operator should hear.
void PrintEarlierTrouble(const LoadReport& report, std::ostream& err) {
  std::set<uint64_t> mine;
  for (const StreamReport& stream : report.streams) mine.insert(stream.sequence);
  for (const auto& [sequence, why] : report.merge.failed) {
    if (mine.count(sequence) > 0) continue;
    err << "planb: note: earlier staged batch " << StagingStore::BatchFileName(sequence)
        << " did not merge: " << LogValue(why, 1000) << "\n";
  }
  for (const QuarantinedBatch& batch : report.merge.quarantined) {
    err << "planb: note: earlier staged batch " << batch.name << " was quarantined: " << LogValue(batch.reason, 1000)
        << "\n";
  }
  size_t held = 0;
  for (const HeldBatch& batch : report.merge.held) held += mine.count(batch.sequence) > 0 ? 0 : 1;
  if (held > 0) err << "planb: note: " << held << " earlier staged batch(es) held back (see planb stores)\n";
}

// load --no-wait: what was staged to wait behind a quarantined (or, single node, a failing) batch.
void PrintHeldBack(const LoadReport& report, std::ostream& err) {
  for (const std::string& line : report.held_back) err << "planb: note: " << line << "\n";
}

// Splits "a,b,c" (the --value-json and --columns lists); empty names are left for CheckTabularSpec to refuse.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    names.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

// --format and the column options into options->tabular: XML (the default) takes none of the column options.
Status TabularOptions(const CommandLine& cli, LoadOptions* options) {
  const std::string format = cli.format.value_or("xml");
  const bool columns_given = cli.map || cli.key_column || cli.from_column || cli.to_column || cli.time ||
                             cli.time_unit || cli.timeout_column || cli.value_column || cli.value_json ||
                             cli.columns || cli.comments;
  if (format == "xml") {
    if (columns_given) {
      return Status::Invalid("--map, --key, --from, --to, --time, --time-unit, --timeout-column, --value, "
                             "--value-json, --columns and --comments apply only with --format csv or jsonl");
    }
    return Status::Ok();
  }
  if (format == "mmdb") {
    // Every network of the file into one map: nothing else to name (the records are the file's own).
    if (cli.key_column || cli.from_column || cli.to_column || cli.time || cli.time_unit || cli.timeout_column ||
        cli.value_column || cli.value_json || cli.columns || cli.comments) {
      return Status::Invalid("--format mmdb takes --map only: the networks are the ranges, their records the "
                             "values (--key, --from, --to, --time, --value... apply to csv and jsonl)");
    }
    options->mmdb = MmdbLoadSpec{cli.map.value_or(""), false};
    return Status::Ok();
  }
  if (format != "csv" && format != "jsonl") {
    return Status::Invalid("--format: '" + format + "' is not xml, csv, jsonl or mmdb");
  }
  TabularSpec spec;
  spec.format = format == "csv" ? TabularFormat::kCsv : TabularFormat::kJsonLines;
  spec.map = cli.map.value_or("");
  spec.key = cli.key_column;
  spec.from = cli.from_column;
  spec.to = cli.to_column;
  spec.time = cli.time;
  if (cli.time_unit) {
    TimeUnit unit = TimeUnit::kMilliseconds;
    if (!ParseTimeUnit(*cli.time_unit, &unit)) {
      return Status::Invalid("--time-unit: '" + LogValue(*cli.time_unit) + "' is not s, ms, us or ns");
    }
    spec.time_unit = unit;
  }
  spec.timeout = cli.timeout_column;
  spec.value = cli.value_column;
  if (cli.value_json) spec.value_json = SplitList(*cli.value_json);
  if (cli.columns) spec.columns = SplitList(*cli.columns);
  spec.comments = cli.comments;
  options->tabular = std::move(spec);
  return Status::Ok();
}

// A stream not stored this time because it is in already: loaded before, or given twice in this load.
bool PrintSkipped(const LoadReport& report, const StreamReport& stream, std::ostream& out) {
  if (stream.same_as) {
    out << stream.file << ": the same batch as " << report.streams[*stream.same_as].file << " (" << stream.batch_id
        << "): loaded once\n";
    return true;
  }
  if (stream.already_merged) {
    out << stream.file << ": already merged as batch " << stream.batch_id << " (nothing staged)\n";
    return true;
  }
  return false;
}

// Nodes that reached different content versions have not merged the same batches: said, not hidden behind the
// highest count.
void PrintDivergence(const LoadReport& report, std::ostream& err) {
  for (const std::string& map : report.DivergentMaps()) {
    err << "planb: note: the storage nodes hold different content versions of " << map << ":";
    for (const auto& [node, maps] : report.node_versions) {
      const auto it = maps.find(map);
      if (it != maps.end()) err << " " << node << " " << it->second;
    }
    err << " (a node behind has not merged every batch the others have; see planb stores)\n";
  }
}

// A replacement's maps: what the files wrote, now the whole content of each (or, with a node_list, once merged).
// One merged before is a batch like any other, not applied twice: said, with how to replace again.
void PrintReplaced(const LoadReport& report, std::ostream& out, std::ostream& err) {
  std::string maps;
  for (const StreamReport& stream : report.streams) {
    if (stream.already_merged) {
      err << "planb: note: this replacement was merged before (batch " << stream.batch_id
          << "), so it was not applied again and the maps keep any rows merged since; to make these files their "
             "whole content again, load them with --replace --batch-id NEW\n";
      return;
    }
    for (const auto& entry : stream.records) maps += (maps.empty() ? "" : ", ") + entry.first;
  }
  if (maps.empty()) return;
  out << (report.distributed ? "replacement of " + maps + " stored: each node switches to it in one step as it merges"
                             : "replaced the whole content of " + maps)
      << "\n";
}

void PrintVersions(const LoadReport& report, std::ostream& out) {
  for (const auto& [map, batches] : report.versions) {
    out << "content version of " << map << ": " << batches
        << (report.distributed ? " once merged (readers: lookup --min-version " + std::to_string(batches) + ")"
                               : "")
        << "\n";
  }
}

// Rows older than a deletion merged before them are not kept (its tombstone, docs/storage-nodes.md): a user who
// deletes and loads the same files again would otherwise wonder where the rows went.
void PrintShadowed(const LoadReport& report, std::ostream& err) {
  for (const auto& [map, rows] : report.merge.rows_shadowed) {
    err << "planb note: " << rows << " row(s) of map " << map
        << " are older than a deletion merged before them and were not kept; to load them again, give them a "
           "later time (--effective-time, or a later <time>) and, for the same content, a new --batch-id "
           "(docs/storage-nodes.md, 'Deleting rows')\n";
  }
}

}  // namespace

int RunLoadCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  LoadOptions options;
  if (cli.effective_time) {
    int64_t ms = 0;
    if (!ParseIsoTime(*cli.effective_time, &ms)) {
      err << "planb: --effective-time: '" << *cli.effective_time
          << "' is not an ISO-8601 time (e.g. 2024-01-01T08:10:22.023Z)\n";
      return kExitError;
    }
    options.effective_time_ms = ms;
  }
  if (cli.batch_id) {
    if (Status s = CheckGivenBatchId(*cli.batch_id); !s.ok()) {
      err << "planb: load: " << s.message() << "\n";
      return kExitError;
    }
    options.batch_id = cli.batch_id;
  }
  options.replace = cli.replace;
  options.no_wait = cli.no_wait;
  if (Status s = TabularOptions(cli, &options); !s.ok()) {
    err << "planb: load: " << s.message() << "\n";
    return kExitError;
  }
  std::unique_ptr<ClusterDelivery> delivery;
  if (!runtime.config().cluster.single_node()) {
    delivery = std::make_unique<ClusterDelivery>(runtime);
    options.delivery = delivery.get();
  }
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    options.progress = [&err](const std::string& file, uint64_t records) {
      err << "\r" << file << ": " << records << " records read" << std::flush;
    };
    options.upload_progress = [&err](const std::string& file, const std::string& node, uint64_t bytes,
                                     uint64_t total) {
      const uint64_t percent = total == 0 ? 100 : bytes * 100 / total;
      err << "\r\033[K" << file << ": uploading to " << node << ": " << percent << "% of " << total << " bytes"
          << std::flush;
    };
  }
  LoadReport report;
  Status s = RunLoad(runtime, cli.args, options, &report);
  if (terminal) err << "\r\033[K" << std::flush;  // clear the progress line
  if (!s.ok() && report.distributed) {
    PrintDeliveries(report, out);
    err << "planb: load failed: " << s.message()
        << "\nWhat each node stored is listed on stdout. Load the same files again once the cause is fixed: loads "
           "are idempotent.\n";
    return kExitError;
  }
  if (!s.ok() && report.staged) {
    PrintLocalOutcome(report, out);
    PrintEarlierTrouble(report, err);
    PrintHeldBack(report, err);
    err << "planb: load staged its streams, but not every stream merged: " << s.message()
        << "\nThe streams merged and not merged are listed on stdout; those not merged stay queued in "
        << runtime.home().staging() << " (or quarantined, as said above; see planb stores) and merge once the "
        << "cause is fixed.\n";
    return kExitError;
  }
  if (!s.ok()) {
    err << "planb: load failed, nothing was staged or merged: " << s.message() << "\n";
    return kExitError;
  }
  for (const StreamReport& stream : report.streams) PrintRecords(stream, out);
  if (!report.distributed) {
    for (const StreamReport& stream : report.streams) PrintSkipped(report, stream, out);
    out << "merged " << report.merge.batches << " batch(es) into the shards in " << runtime.home().shards() << "\n";
    if (options.replace) PrintReplaced(report, out, err);
    PrintVersions(report, out);
    PrintShadowed(report, err);
    PrintEarlierTrouble(report, err);
    PrintHeldBack(report, err);
    return kExitOk;
  }
  for (const StreamReport& stream : report.streams) {
    if (stream.same_as) {
      PrintSkipped(report, stream, out);
      continue;
    }
    const size_t stored = static_cast<size_t>(std::count_if(stream.deliveries.begin(), stream.deliveries.end(),
                                                            [](const NodeDelivery& d) { return d.status.ok(); }));
    out << stream.file << ": batch of " << stream.batch_bytes << " bytes stored on " << stored << " storage node(s)";
    if (stored < stream.deliveries.size()) {
      out << " of " << stream.deliveries.size() << " (write_quorum " << runtime.config().cluster.WriteQuorum() << ")";
    }
    out << "\n";
    // The load succeeded: the nodes listed as not stored get the batch by catch-up.
    for (const NodeDelivery& d : stream.deliveries) PrintNodeDelivery(d, true, out);
  }
  if (options.replace) PrintReplaced(report, out, err);
  PrintVersions(report, out);
  PrintDivergence(report, err);
  PrintHeldBack(report, err);
  return kExitOk;
}

}  // namespace planb
