#include "host/ingest/load_job.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <filesystem>
#include <memory>

#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/ingest/batch_fingerprint.h"
#include "host/ingest/batch_ids.h"
#include "host/ingest/load_check.h"
#include "host/ingest/merged_check.h"
#include "host/ingest/node_checks.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/ingest/stream_writer.h"
#include "host/transfer/batch_zip.h"
#include "host/xml/reference_reader.h"
#include "planb/lmdb.h"

namespace planb {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kProgressEvery = 50000;

Status FileModificationTime(const std::string& file, int64_t* ms) {
  // stat's nanoseconds, not std::filesystem's clock (whose conversion to system time is inexact in C++17).
  struct stat info;
  if (::stat(file.c_str(), &info) != 0) return Status::IOError(file + ": " + std::strerror(errno));
  *ms = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1000000;
  return Status::Ok();
}

// Reads `file` into `writer` (and its records into `fingerprint`), counting skipped records into `report`.
Status ReadInto(const std::string& file, const LoadOptions& options, StreamWriter* writer,
                BatchFingerprint* fingerprint, StreamReport* report) {
  int64_t effective_time = 0;
  if (options.mmdb) {
    // The file's own build time, unless --effective-time says otherwise (mmdb_records.h).
  } else if (options.effective_time_ms) {
    effective_time = *options.effective_time_ms;
  } else if (file == "-" && options.tabular) {
    effective_time = CurrentTimeMs();  // standard input has no modification time
  } else {
    PLANB_RETURN_IF_ERROR(FileModificationTime(file, &effective_time));
  }
  uint64_t records = 0;
  const RecordHandler handler = [&](const ParsedRecord& parsed) {
    if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) {
      return Status::Internal("interrupted");
    }
    if (options.only_maps && options.only_maps->count(std::string(parsed.map)) == 0) {
      ++report->skipped;
      return Status::Ok();
    }
    PLANB_RETURN_IF_ERROR(writer->Add(parsed.map, parsed.record));
    fingerprint->Add(parsed.map, parsed.record);
    if (++records % kProgressEvery == 0 && options.progress) options.progress(file, records);
    return Status::Ok();
  };
  if (options.mmdb) return ReadMmdbRecords(file, *options.mmdb, options.effective_time_ms, handler);
  return options.tabular ? ReadTabularFile(file, *options.tabular, effective_time, handler)
                         : ReadReferenceDataFile(file, effective_time, handler);
}

// One stream of `files` (one file, or every file of a --replace), finished.
Status WriteStream(const std::vector<std::string>& files, const LoadOptions& options, StreamWriter* writer,
                   StreamReport* report) {
  BatchFingerprint fingerprint(options.replace ? "replace" : "load");
  for (const std::string& file : files) {
    PLANB_RETURN_IF_ERROR(ReadInto(file, options, writer, &fingerprint, report));
  }
  report->file = files.front();
  for (size_t i = 1; i < files.size(); ++i) report->file += " + " + files[i];
  PLANB_RETURN_IF_ERROR(writer->Finish().WithContext(report->file));
  report->batch_id = fingerprint.BatchId();  // replaced by --batch-id's (RunLoad)
  report->records = writer->RecordCounts();
  for (const auto& entry : report->records) {
    std::error_code ec;
    const uintmax_t bytes = fs::file_size(writer->dir() + "/" + entry.first + "/data.mdb", ec);
    if (ec) return Status::IOError(writer->dir() + "/" + entry.first + "/data.mdb: " + ec.message());
    report->map_bytes[entry.first] = bytes;
  }
  return Status::Ok();
}

Status WriteStreams(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& options,
                    std::vector<std::unique_ptr<StreamWriter>>* writers, LoadReport* report) {
  for (const std::string& file : files) {
    std::error_code ec;
    fs::file_status status = fs::status(file, ec);
    if (file == "-" && options.tabular) status = fs::file_status(fs::file_type::regular);
    if (!fs::exists(status)) return Status::Invalid(file + ": no such file");
    if (!fs::is_regular_file(status)) return Status::Invalid(file + ": not a regular file");
  }
  // One stream per file; a replacement is one stream of them all (the map's new content is one batch).
  std::vector<std::vector<std::string>> streams;
  if (options.replace) {
    streams.push_back(files);
  } else {
    for (const std::string& file : files) streams.push_back({file});
  }
  for (const std::vector<std::string>& stream_files : streams) {
    writers->push_back(
        std::make_unique<StreamWriter>(runtime.catalog(), runtime.home().writer() + "/" + StreamWriter::NewStreamName()));
    StreamReport stream;
    PLANB_RETURN_IF_ERROR(WriteStream(stream_files, options, writers->back().get(), &stream));
    // A replacement's time is its newest row's (docs/storage-nodes.md): one without rows could not be ordered
    // against other batches, and replacing a map by nothing is what a deletion does.
    if (options.replace && stream.records.empty()) {
      return Status::Invalid(stream.file + ": --replace: no records, so no map would be replaced (to empty a map, "
                             "planb delete MAP --all)");
    }
    report->streams.push_back(std::move(stream));
  }
  return Status::Ok();
}

// Every shard the streams will merge into must open (an LMDB file with the configured layout) before anything
// is staged, so that a bad shard fails the load before any other shard changes.
Status CheckShards(Runtime& runtime, const LoadReport& report) {
  for (const StreamReport& stream : report.streams) {
    for (const auto& entry : stream.records) {
      std::shared_ptr<MapEnv> shard;
      Status s = runtime.OpenShard(entry.first, &shard);
      if (!s.ok() && s.code() != Code::kNotFound) return s;
    }
  }
  return Status::Ok();
}

// PREPARE's request: every map of the load with the bytes all its streams add to it.
protocol::PrepareRequest LoadNeeds(const LoadReport& report) {
  std::map<std::string, uint64_t> bytes;
  for (const StreamReport& stream : report.streams) {
    for (const auto& [map, size] : stream.map_bytes) bytes[map] += size;
  }
  protocol::PrepareRequest request;
  for (const auto& [map, size] : bytes) request.maps.push_back({map, size});
  return request;
}

// After the deliveries: each node's count grows by the streams it staged (not those it had merged already), and
// the load's versions are the highest any node reaches.
void CountDeliveredVersions(LoadReport* report) {
  for (const StreamReport& stream : report->streams) {
    for (const NodeDelivery& d : stream.deliveries) {
      if (!d.status.ok() || !d.already_merged.empty()) continue;
      for (const auto& entry : stream.records) ++report->node_versions[d.node][entry.first];
    }
  }
  report->versions.clear();
  for (const auto& [node, maps] : report->node_versions) {
    for (const auto& [map, batches] : maps) report->versions[map] = std::max(report->versions[map], batches);
  }
}

Status CheckNodes(Runtime& runtime, const LoadOptions& options, LoadReport* report) {
  const protocol::PrepareRequest request = LoadNeeds(*report);
  std::vector<NodeCheck> checks;
  if (runtime.config().cluster.single_node()) {
    checks.resize(1);
    checks[0].node = runtime.home().root();
    checks[0].local = true;
    checks[0].status = CheckLoadLocally(runtime, request, &checks[0].reply);
  } else {
    if (options.delivery == nullptr) return Status::Internal("load: a node_list but no BatchDelivery");
    options.delivery->Check(request, &checks);
  }
  // The highest count any node reported (they agree unless a node is behind) plus this load's batches makes the
  // load's versions (CountDeliveredVersions).
  PLANB_RETURN_IF_ERROR(JudgeNodeChecks(
      checks, runtime.config().cluster.single_node() ? 1 : runtime.config().cluster.WriteQuorum(), "load",
      &report->node_versions, options.no_wait ? &report->held_back : nullptr,
      "load --no-wait stages it anyway: its batches then merge once the quarantined batch is released"));
  if (runtime.config().cluster.single_node()) {
    report->node_versions.clear();  // read from the shards once merged
    report->held_back.clear();      // this process merges: its streams held back are named (JudgeLocalMerge)
  }
  return Status::Ok();
}

// Single node: the versions the shards reached, read back after the merge.
void ReadMergedVersions(Runtime& runtime, LoadReport* report) {
  for (const StreamReport& stream : report->streams) {
    for (const auto& entry : stream.records) {
      std::shared_ptr<MapEnv> shard;
      ContentVersion version;
      Txn txn;
      if (!runtime.OpenShard(entry.first, &shard).ok() || !txn.Begin(shard->env(), MDB_RDONLY).ok() ||
          !ReadContentVersion(txn.get(), shard->meta(), &version).ok()) {
        continue;
      }
      report->versions[entry.first] = version.batches;
    }
  }
}


bool NeedsSynchronisedMerge(const Runtime& runtime, const StreamReport& stream) {
  for (const auto& entry : stream.records) {
    const MapConfig* map = runtime.config().FindMap(entry.first);
    if (map != nullptr && map->synchronise_merge) return true;
  }
  return false;
}

// The id each stream's batch goes by on every node (in its manifest, in BEGIN, in the shards' content versions):
// its content's, or --batch-id's (batch_ids.h). A stream whose id an earlier one has (the same file twice) is
// that stream again: it is not sent.
void AssignBatchIds(const LoadOptions& options, const std::string& name_space, LoadReport* report) {
  std::vector<std::string> content_ids;
  for (const StreamReport& stream : report->streams) content_ids.push_back(stream.batch_id);
  const std::vector<std::string> ids = StreamBatchIds(options.batch_id, content_ids, name_space);
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < report->streams.size(); ++i) {
    report->streams[i].batch_id = ids[i];
    const auto [it, inserted] = first.emplace(ids[i], i);
    if (!inserted) report->streams[i].same_as = it->second;
  }
}

// Zips each finished stream into writer/<stream>.zip (and drops its LMDB files): the batch as staging/ keeps it.
Status ZipStreams(Runtime& runtime, const std::vector<std::unique_ptr<StreamWriter>>& writers,
                  const LoadOptions& load_options, std::vector<std::string>* zips, LoadReport* report) {
  for (size_t i = 0; i < writers.size(); ++i) {
    if (report->streams[i].same_as) {  // not sent: no zip
      zips->emplace_back();
      writers[i]->Discard();
      continue;
    }
    ZipOptions options;
    // Batches that only move on this machine are stored, not deflated: nothing would be gained.
    options.compress = !runtime.config().cluster.single_node();
    options.batch_id = report->streams[i].batch_id;
    options.replace = load_options.replace;
    const std::string zip = writers[i]->dir() + ".zip";
    zips->push_back(zip);
    PLANB_RETURN_IF_ERROR(ZipBatch(writers[i]->dir(), zip, options).WithContext(report->streams[i].file));
    std::error_code ec;
    report->streams[i].batch_bytes = fs::file_size(zip, ec);
    writers[i]->Discard();
  }
  return Status::Ok();
}

// Merge errors and reasons can quote a batch's bytes: escaped (one line each), capped like quarantine's.
constexpr size_t kReasonCap = 1000;

// Why a stream's batch is held back: the batch at the root of the block, quarantined (then how to release it) or
// still failing (it is tried again by the next merge).
std::string HeldBackWhy(Runtime& runtime, const HeldBatch& held, const MergeReport& merge) {
  std::vector<QuarantinedBatch> quarantined = merge.quarantined;
  std::vector<QuarantinedBatch> earlier;
  if (ListQuarantine(runtime.home(), &earlier).ok()) {
    quarantined.insert(quarantined.end(), earlier.begin(), earlier.end());
  }
  for (const QuarantinedBatch& batch : quarantined) {
    if (batch.name != held.by) continue;
    return "held back: map " + held.map + " is blocked by quarantined batch " + QuarantineDir(runtime.home()) + "/" +
           held.by + " (see planb stores); " + QuarantineReleaseHint(runtime.home(), held.by);
  }
  return "held back: map " + held.map + " is blocked by batch " + held.by +
         ", whose merge is failing (it is tried again by the next load or merge, and quarantined after " +
         std::to_string(kMaxMergeAttempts) + " failures; see planb stores)";
}

// Why stream `stream` (staged, not merged) did not merge, from the merge's report; `merged` is what the merge
// run returned (a failure before or outside the batches, e.g. the merge lock).
std::string WhyNotMerged(Runtime& runtime, const StreamReport& stream, const Status& merged, const MergeReport& merge,
                         Code* code) {
  const auto failed = merge.failed.find(stream.sequence);
  if (failed != merge.failed.end()) {
    *code = merged.ok() ? Code::kInvalidArgument : merged.code();
    return "its merge failed (it stays staged; the next load or merge tries it again): " +
           LogValue(failed->second, kReasonCap);
  }
  const std::string name = StagingStore::BatchFileName(stream.sequence);
  for (const QuarantinedBatch& batch : merge.quarantined) {
    if (batch.name == name) {
      return "quarantined in " + QuarantineDir(runtime.home()) + " (see planb stores): " +
             LogValue(batch.reason, kReasonCap);
    }
  }
  for (const HeldBatch& batch : merge.held) {
    if (batch.sequence == stream.sequence) return HeldBackWhy(runtime, batch, merge);
  }
  if (!merged.ok()) {
    *code = merged.code();
    return "merging stopped: " + merged.message();
  }
  return "not merged (still staged)";
}

// A single-node load succeeds only when every stream it staged merged (with no_wait: or is held back behind
// another batch, staged). A failure of an earlier batch that held none of this load's streams back is the
// report's to show, not this load's failure.
Status JudgeLocalMerge(Runtime& runtime, const Status& merged, const LoadOptions& options, LoadReport* report_out) {
  const LoadReport& report = *report_out;
  std::string problems;
  size_t count = 0;
  Code code = Code::kInvalidArgument;  // the first stream's; held or quarantined: a batch was refused
  for (size_t i = 0; i < report.streams.size(); ++i) {
    const StreamReport& stream = report.streams[i];
    if (report.Merged(i) || stream.same_as) continue;  // a repeat is judged as the stream it repeats
    Code why_code = Code::kInvalidArgument;
    const std::string why = WhyNotMerged(runtime, stream, merged, report.merge, &why_code);
    const bool held = std::any_of(report.merge.held.begin(), report.merge.held.end(),
                                  [&stream](const HeldBatch& b) { return b.sequence == stream.sequence; });
    if (held && options.no_wait) {
      report_out->held_back.push_back(stream.file + " (batch " + std::to_string(stream.sequence) +
                                      "): staged, not merged: " + why);
      continue;
    }
    if (count == 0) code = why_code;
    ++count;
    problems += "\n  " + stream.file + " (batch " + std::to_string(stream.sequence) + "): " + why;
  }
  if (count == 0) return Status::Ok();
  return Status(code, std::to_string(count) + " of the load's " + std::to_string(report.streams.size()) +
                          " stream(s) did not merge:" + problems);
}

Status StoreLocally(Runtime& runtime, const std::vector<std::string>& zips, const LoadOptions& options,
                    LoadReport* report) {
  StagingStore staging(runtime.home());
  for (size_t i = 0; i < zips.size(); ++i) {
    StreamReport& stream = report->streams[i];
    if (stream.same_as) continue;
    std::vector<std::string> maps;
    for (const auto& entry : stream.records) maps.push_back(entry.first);
    PLANB_RETURN_IF_ERROR(IsMergedIntoEveryShard(runtime, maps, stream.batch_id, &stream.already_merged)
                              .WithContext(stream.file));
    if (stream.already_merged) continue;  // loaded before: nothing to stage
    PLANB_RETURN_IF_ERROR(staging.Stage(zips[i], &stream.sequence));
    report->staged = true;
  }
  // Single node: this process is the storage node, so it merges what it staged (and anything queued before).
  MergeProcessor merger(runtime, UnzipLimits{runtime.config().cluster.max_batch_size});
  const auto merge_start = std::chrono::steady_clock::now();
  const Status merged = merger.MergePending(&report->merge, options.stop);
  report->merge_time = std::chrono::steady_clock::now() - merge_start;
  return JudgeLocalMerge(runtime, merged, options, report);
}

Status Distribute(Runtime& runtime, const std::vector<std::string>& zips, const LoadOptions& options,
                  LoadReport* report) {
  report->distributed = true;
  for (size_t i = 0; i < zips.size(); ++i) {
    StreamReport& stream = report->streams[i];
    if (stream.same_as) continue;
    const std::string& batch_id = stream.batch_id;
    DeliveryProgress progress;
    if (options.upload_progress) {
      const std::vector<std::string>& nodes = runtime.config().cluster.node_list;
      progress = [&options, &stream, &nodes](size_t node, uint64_t bytes) {
        options.upload_progress(stream.file, nodes[node], bytes, stream.batch_bytes);
      };
    }
    Status s = options.delivery->Deliver(zips[i], batch_id, !options.no_wait && NeedsSynchronisedMerge(runtime, stream),
                                         &stream.deliveries, progress);
    stream.already_merged = !stream.deliveries.empty();
    for (const NodeDelivery& d : stream.deliveries) {
      report->staged = report->staged || (d.status.ok() && d.already_merged.empty());
      stream.already_merged = stream.already_merged && d.status.ok() && !d.already_merged.empty();
    }
    // Later streams wait: every node must stage the streams in the same order.
    if (!s.ok()) return s.WithContext(stream.file);
    static_cast<void>(RemoveTree(zips[i]));  // a leftover zip is removed with abandoned streams
  }
  CountDeliveredVersions(report);
  return Status::Ok();
}

// The tabular spec with the record kind of its map's type, checked; files "-" at most once.
Status PrepareTabular(const Runtime& runtime, const std::vector<std::string>& files, LoadOptions* options) {
  if (!options->tabular) return Status::Ok();
  TabularSpec& spec = *options->tabular;
  if (spec.map.empty()) return CheckTabularSpec(spec);  // says --map is required
  std::string map = spec.map;
  for (char& c : map) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const MapConfig* config = runtime.config().FindMap(map);
  if (config == nullptr) return Status::Invalid("--map " + spec.map + ": no such map in the config");
  spec.kind = config->type == "session" ? RecordKind::kSession : RecordKind::kReference;
  PLANB_RETURN_IF_ERROR(CheckTabularSpec(spec));
  if (std::count(files.begin(), files.end(), "-") > 1) return Status::Invalid("load: '-' (stdin) given twice");
  return Status::Ok();
}

// The --format mmdb map: configured, ranged with IP address keys (ipv4_only for key_format = ipv4); no stdin.
Status PrepareMmdb(const Runtime& runtime, const std::vector<std::string>& files, LoadOptions* options) {
  if (!options->mmdb) return Status::Ok();
  MmdbLoadSpec& spec = *options->mmdb;
  if (spec.map.empty()) return Status::Invalid("--map: the map the networks go to is required with --format mmdb");
  for (char& c : spec.map) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const MapConfig* config = runtime.config().FindMap(spec.map);
  if (config == nullptr) return Status::Invalid("--map " + spec.map + ": no such map in the config");
  std::string key_format = "number";
  for (const auto& [key, value] : config->plugin_options) {
    if (key == "key_format") key_format = value;
  }
  const bool ranged = config->type == "ranged" || config->type == "temporal_ranged";
  if (!ranged || (key_format != "ip" && key_format != "ipv4")) {
    return Status::Invalid("--format mmdb: map " + spec.map + " is a " + config->type + " map with key_format " +
                           key_format + "; networks go into a ranged (or temporal_ranged) map with key_format = "
                           "ip, or ipv4 for an IPv4-only file");
  }
  spec.ipv4_only = key_format == "ipv4";
  if (std::count(files.begin(), files.end(), "-") > 0) {
    return Status::Invalid("--format mmdb reads files, not standard input ('-'): libmaxminddb maps the file");
  }
  return Status::Ok();
}

}  // namespace

Status RunLoad(Runtime& runtime, const std::vector<std::string>& files, const LoadOptions& given,
               LoadReport* report) {
  if (files.empty()) return Status::Invalid("load: no input files given");
  if (given.batch_id) PLANB_RETURN_IF_ERROR(CheckGivenBatchId(*given.batch_id));
  LoadOptions options = given;
  PLANB_RETURN_IF_ERROR(PrepareTabular(runtime, files, &options));
  PLANB_RETURN_IF_ERROR(PrepareMmdb(runtime, files, &options));
  PLANB_RETURN_IF_ERROR(StreamWriter::RemoveAbandoned(runtime.home().writer()));
  std::vector<std::unique_ptr<StreamWriter>> writers;
  std::vector<std::string> zips;
  const auto write_start = std::chrono::steady_clock::now();
  Status s = WriteStreams(runtime, files, options, &writers, report);
  report->write_time = std::chrono::steady_clock::now() - write_start;
  // A storage node checks its own shards first; a processing node has none (the receivers check theirs).
  if (s.ok() && runtime.config().cluster.IsStorageNode()) s = CheckShards(runtime, *report);
  if (s.ok()) s = CheckNodes(runtime, options, report);
  if (s.ok()) AssignBatchIds(options, OwnBatchNamespace(runtime.config().cluster), report);
  if (s.ok()) s = ZipStreams(runtime, writers, options, &zips, report);
  if (s.ok()) {
    s = runtime.config().cluster.single_node() ? StoreLocally(runtime, zips, options, report)
                                               : Distribute(runtime, zips, options, report);
    if (runtime.config().cluster.single_node()) ReadMergedVersions(runtime, report);
  }
  for (const auto& writer : writers) writer->Discard();  // finished streams too: nothing is left behind
  for (const std::string& zip : zips) {
    if (!zip.empty()) static_cast<void>(RemoveTree(zip));
  }
  return s;
}

std::vector<std::string> LoadReport::DivergentMaps() const {
  std::map<std::string, std::set<uint64_t>> seen;
  for (const auto& [node, maps] : node_versions) {
    for (const auto& [map, batches] : maps) seen[map].insert(batches);
  }
  std::vector<std::string> divergent;
  for (const auto& [map, counts] : seen) {
    if (counts.size() > 1) divergent.push_back(map);
  }
  return divergent;
}

}  // namespace planb
