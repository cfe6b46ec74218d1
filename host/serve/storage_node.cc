#include "host/serve/storage_node.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <streambuf>
#include <thread>
#include <vector>

#include "host/catchup/batch_retention.h"
#include "host/catchup/merged_listing.h"
#include "host/catchup/peer_access.h"
#include "host/commands/command_line.h"
#include "host/common/file_hash.h"
#include "host/commands/read_commands.h"
#include "host/commands/remote_read_request.h"

#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/common/read_budget.h"
#include "host/ingest/batch_verifier.h"
#include "host/ingest/load_check.h"
#include "host/ingest/merge_processor.h"
#include "host/ingest/merged_check.h"
#include "host/ingest/quarantine.h"
#include "host/ingest/staging_store.h"
#include "host/maintain/maintenance_runner.h"
#include "host/query/lexer.h"
#include "host/serve/node_state_collector.h"
#include "host/serve/node_log_events.h"
#include "host/serve/node_readiness.h"
#include "host/serve/open_files_limit.h"

#include <prometheus/text_serializer.h>
#include <systemd/sd-daemon.h>

namespace planb {

namespace {

std::string CheckDirFor(const std::string& zip_path) { return zip_path + ".check"; }

std::string JoinMaps(const std::vector<std::string>& maps) {
  std::string text;
  for (const std::string& map : maps) text += (text.empty() ? "" : ",") + map;
  return text;
}

// The longest log line written; values in it are capped far below (kLogValueCap), this bounds the rest.
constexpr size_t kMaxLogLine = 4096;

// A string sink that keeps at most `limit` bytes and remembers that more were written: a query over a huge map
// must not grow the node's memory without bound before the reply is refused.
class CappedStringBuf : public std::streambuf {
 public:
  explicit CappedStringBuf(size_t limit) : limit_(limit) {}
  bool exceeded() const { return exceeded_; }
  std::string Take() { return std::move(text_); }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const size_t room = limit_ - text_.size();
    if (static_cast<size_t>(n) > room) {
      exceeded_ = true;
      text_.append(s, room);
    } else {
      text_.append(s, static_cast<size_t>(n));
    }
    return n;  // never fail the writer: it would only stop halfway and the result is refused anyway
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }

 private:
  size_t limit_;
  bool exceeded_ = false;
  std::string text_;
};

// The literals (texts and numbers) of a --where: what its cost grows with. One that does not tokenize counts 0:
// the query's own parser reports it.
uint64_t CountWhereTerms(const std::string& where) {
  std::vector<query::Token> tokens;
  if (!query::Tokenize(where, &tokens).ok()) return 0;
  uint64_t terms = 0;
  for (const query::Token& token : tokens) {
    if (token.kind == query::TokenKind::kText || token.kind == query::TokenKind::kNumber) ++terms;
  }
  return terms;
}

}  // namespace

bool ListensBeyondThisHost(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return false;
  // Another transport is not ours to judge: treated as open. Without one, zmq refuses the bind itself.
  if (endpoint.rfind("tcp://", 0) != 0) return endpoint.find("://") != std::string::npos;
  std::string host = endpoint.substr(6, endpoint.rfind(':') == std::string::npos || endpoint.rfind(':') < 6
                                            ? std::string::npos
                                            : endpoint.rfind(':') - 6);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return !(host == "localhost" || host == "::1" || (host.rfind("127.", 0) == 0 && host.size() > 4));
}

StorageNode::StorageNode(Runtime& runtime, ServeOptions options, std::ostream& log)
    : runtime_(runtime), options_(std::move(options)), log_(log), snapshots_(runtime), diffs_(runtime) {}

StorageNode::~StorageNode() { StopThreads(); }

void StorageNode::StopThreads() {
  {
    // Under the lock the threads wait with: a wake-up between a thread's look at stopping_ and its wait is not
    // lost (the catch-up thread would sleep a whole catch_up_interval, past the 10 s a stop may take).
    std::lock_guard<std::mutex> lock(merge_mutex_);
    stopping_ = true;
  }
  merge_wakeup_.notify_all();
  catch_up_wakeup_.notify_all();
  ops_wakeup_.notify_all();
  if (merger_.joinable()) merger_.join();
  if (catcher_.joinable()) catcher_.join();
  if (ops_.joinable()) ops_.join();
  http_.Stop();
}

void StorageNode::Log(const std::string& line) {
  const OperationsConfig& operations = runtime_.config().operations;
  const NodeLogEvent event = ClassifyNodeLine(line);
  if (event.level > operations.log_level) return;
  // Every line escaped and capped here too (log_text.h), whatever its callers did: one line per event, always.
  const std::string message = LogValue(line, kMaxLogLine);
  LogRecord record;
  record.time_ms = CurrentTimeMs();
  record.level = event.level;
  record.event = event.event;
  record.node = runtime_.config().cluster.node_name;
  record.map = MapNamedIn(message);
  record.client = ClientNamedIn(message);
  record.message = message;
  const std::string text = FormatLogLine(record, operations.log_format);
  if (options_.log_file != nullptr) return options_.log_file->Write(text);
  std::lock_guard<std::mutex> lock(log_mutex_);
  log_ << text << std::endl;
}

Status StorageNode::StartHttp() {
  const OperationsConfig& operations = runtime_.config().operations;
  if (!operations.metrics_bind) return Status::Ok();
  std::vector<std::string> maps;
  for (const auto& [map, config] : runtime_.config().maps) maps.push_back(map);
  metrics_.AddMaps(maps);
  NodeStateSources sources;
  sources.runtime = &runtime_;
  sources.merge_thread_running = [this] { return merge_running_.load(); };
  if (catch_up_ != nullptr) {
    sources.catching_up = [this](const std::string& map) {
      std::string why;
      return catch_up_->Behind(map, &why);
    };
  }
  ready_floor_bytes_ = operations.ready_min_free_disk ? *operations.ready_min_free_disk
                                                      : MeasureDiskRoom(runtime_.home().root()).margin;
  sources.ready_min_free_bytes = ready_floor_bytes_;
  sources.started_ms = CurrentTimeMs();
  auto state = std::make_shared<NodeStateCollector>(std::move(sources));
  std::map<std::string, HttpHandler> routes;
  routes["/metrics"] = [this, state] {
    std::vector<prometheus::MetricFamily> families = metrics_.registry().Collect();
    std::vector<prometheus::MetricFamily> now = state->Collect();
    families.insert(families.end(), std::make_move_iterator(now.begin()), std::make_move_iterator(now.end()));
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                        prometheus::TextSerializer().Serialize(families)};
  };
  routes["/healthz"] = [] { return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}; };
  routes["/readyz"] = [this] { return Readyz(); };
  std::string bound;
  PLANB_RETURN_IF_ERROR(http_.Start(*operations.metrics_bind, std::move(routes), HttpLimits(),
                                    [this](const std::string& line) { Log(line); }, &bound)
                            .WithContext("serve: metrics_bind"));
  Log("metrics: serving http://" + bound + "/metrics, /healthz and /readyz");
  return Status::Ok();
}

HttpResponse StorageNode::Readyz() const {
  ReadinessInputs inputs;
  inputs.home = runtime_.home().root();
  inputs.min_free_bytes = ready_floor_bytes_;
  inputs.merge_thread_running = merge_running_.load();
  if (catch_up_ != nullptr) {
    for (const auto& [map, config] : runtime_.config().maps) {
      std::string why;
      if (catch_up_->Behind(map, &why)) inputs.catching_up.push_back(map);
    }
  }
  const std::vector<std::string> problems = ReadinessProblems(inputs);
  if (problems.empty()) return HttpResponse{200, "text/plain; charset=utf-8", "ready\n"};
  std::string body;
  for (const std::string& problem : problems) body += "not ready: " + problem + "\n";
  return HttpResponse{503, "text/plain; charset=utf-8", body};
}

void StorageNode::OpsLoop() {
  constexpr int64_t kOpsTickMs = 200;
  uint64_t watchdog_usec = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0;
  const auto ping_every = std::chrono::microseconds(watchdog_usec / 2);
  auto next_ping = std::chrono::steady_clock::now();
  // From 0, not the count when this thread starts: a SIGHUP between the handler's installation and this line
  // must not be missed (a reopen too many is harmless).
  uint64_t hangups_seen = 0;
  std::unique_lock<std::mutex> lock(merge_mutex_);
  while (!stopping_) {
    lock.unlock();
    if (options_.hangups != nullptr && options_.hangups->load() != hangups_seen) {
      hangups_seen = options_.hangups->load();
      if (options_.log_file == nullptr) {
        Log("SIGHUP: no log_file to reopen (the log goes to stderr); still serving");
      } else {
        const Status reopened = options_.log_file->Reopen();
        Log(reopened.ok() ? "SIGHUP: reopened log_file " + options_.log_file->path()
                          : "SIGHUP: " + reopened.message() + "; still logging to the file open before");
      }
    }
    if (watchdog && merge_running_ && std::chrono::steady_clock::now() >= next_ping) {
      sd_notify(0, "WATCHDOG=1");
      next_ping = std::chrono::steady_clock::now() + ping_every;
    }
    lock.lock();
    ops_wakeup_.wait_for(lock, std::chrono::milliseconds(kOpsTickMs), [this] { return stopping_.load(); });
  }
}

Status StorageNode::Run(const std::atomic<bool>& stop) {
  const ClusterConfig& cluster = runtime_.config().cluster;
  if (!cluster.IsStorageNode()) {
    return Status::Invalid("serve: node '" + cluster.node_name + "' is not in node_list (" +
                           (cluster.node_list.empty() ? std::string("empty") : std::string("has ") +
                                                                                  std::to_string(cluster.node_list.size()) + " node(s)") +
                           "); only storage nodes serve");
  }
  std::string endpoint = options_.bind;
  if (endpoint.empty()) {
    const auto node = cluster.nodes.find(cluster.node_name);
    if (node == cluster.nodes.end()) {
      return Status::Invalid("serve: no endpoint for node '" + cluster.node_name + "': add [node." +
                             cluster.node_name + "] endpoint = tcp://HOST:PORT, or give --bind");
    }
    endpoint = node->second.endpoint;
  }
  // One serving process per home: a second would clear the first one's uploads in flight below.
  FileLock serving;
  bool alone = false;
  PLANB_RETURN_IF_ERROR(serving.TryAcquire(runtime_.home().root() + "/.serve.lock", &alone));
  if (!alone) {
    return Status::Invalid("serve: another planb serve is already running on home " + runtime_.home().root());
  }
  // receive/ only ever holds uploads in flight and their verification scratch: nothing survives a restart.
  std::error_code ec;
  for (const std::filesystem::directory_entry& entry :
       std::filesystem::directory_iterator(runtime_.home().receive(), ec)) {
    PLANB_RETURN_IF_ERROR(RemoveTree(entry.path().string()).WithContext("serve: clearing receive/"));
  }
  // outgoing/ likewise: snapshot zips are served only by the process that made them.
  PLANB_RETURN_IF_ERROR(snapshots_.Clear().WithContext("serve: clearing outgoing/"));
  zmq::context_t context;
  ReceiverSettings settings;
  settings.receive_dir = runtime_.home().receive();
  settings.home_dir = runtime_.home().root();
  settings.max_upload_bytes = cluster.max_batch_size;
  settings.idle_upload_expiry_ms = cluster.upload_idle_timeout_ms;
  settings.min_transfer_rate = cluster.min_transfer_rate;
  settings.max_client_share_percent = cluster.max_client_share_percent;
  settings.max_unread_reply_bytes = cluster.max_unread_reply_bytes;
  // A connection may wait that long for its read: it is not idle then.
  if (cluster.idle_connection_timeout_ms <= cluster.remote_read_timeout_ms) {
    return Status::Invalid("serve: idle_connection_timeout (" + std::to_string(cluster.idle_connection_timeout_ms) +
                           " ms) must be longer than remote_read_timeout (" +
                           std::to_string(cluster.remote_read_timeout_ms) + " ms): a client waits that long for a read");
  }
  settings.idle_connection_timeout_ms = cluster.idle_connection_timeout_ms;
  settings.metrics = &metrics_;
  // Descriptors: the soft limit raised to the hard one, and connections kept to half of what the shards (an
  // environment and its lock each), uploads, served snapshots and merges leave of it.
  uint64_t open_files_before = 0;
  const uint64_t open_files = RaiseOpenFilesLimit(&open_files_before);
  if (open_files != open_files_before) {
    Log("open files: soft limit raised from " + std::to_string(open_files_before) + " to " +
        std::to_string(open_files));
  }
  const uint64_t reserved = kReservedDescriptors + 4 * uint64_t{runtime_.config().maps.size()};
  settings.max_connections = ConnectionCapUnder(open_files, reserved, cluster.max_connections);
  if (settings.max_connections < cluster.max_connections) {
    Log("connections: at most " + std::to_string(settings.max_connections) + " at once, not max_connections " +
        std::to_string(cluster.max_connections) + ": the open-files limit is " + std::to_string(open_files) +
        " and " + std::to_string(reserved) + " are kept for shards, uploads, snapshots and merges");
  }
  if (cluster.curve()) {
    settings.access.server_key = cluster.own_key->keys;
    settings.access.clients = ClientsWithPeers(cluster);
  } else if (ListensBeyondThisHost(endpoint)) {
    // Like Redis' protected mode: an open port in plaintext lets anyone who reaches it write, read and copy
    // every map, so it takes an explicit choice.
    if (!cluster.allow_plaintext) {
      return Status::Invalid("serve: refusing to bind " + endpoint +
                             " without keys: anyone who can reach it could upload into, read and copy every map. "
                             "Configure CURVE keys (docs/security.md), bind a loopback address, or set "
                             "allow_plaintext = true");
    }
    Log("WARNING: serving " + endpoint + " in plaintext without authentication (allow_plaintext = true): anyone "
        "who can reach it can upload into, read and copy every map");
  }
  signalled_ = &stop;
  UploadReceiver receiver(context, settings, *this, [this](const std::string& line) { Log(line); });
  std::string bound;
  PLANB_RETURN_IF_ERROR(receiver.Bind(endpoint, &bound).WithContext("serve: binding " + endpoint));
  // The receiver's threads start before the node says it serves (ready file, READY=1): a stop asked right after
  // that must find only the serving loop to interrupt. A stop asked while they start can make a zmq call there
  // fail with EINTR: that is the stop the operator asked for, not a failure.
  Status started = receiver.Start();
  if (!started.ok()) {
    if (!stop.load()) return started.WithContext("serve");
    Log("stopped while starting (" + started.message() + ")");
    return Status::Ok();
  }

  const bool has_peers = std::any_of(cluster.node_list.begin(), cluster.node_list.end(),
                                     [&cluster](const std::string& node) { return node != cluster.node_name; });
  if (has_peers && cluster.catch_up_interval_ms > 0) {
    catch_up_ = std::make_unique<PeerCatchUp>(
        runtime_, [this](const std::string& zip, const std::string& id) { return StageFetched(zip, id); },
        [this](const std::string& line) { Log(line); });
  }
  // Before any thread starts: a metrics_bind in use is a configuration error the node refuses to start with.
  PLANB_RETURN_IF_ERROR(StartHttp());
  merge_running_ = true;
  merger_ = std::thread([this] { MergeLoop(); });
  if (catch_up_ != nullptr) catcher_ = std::thread([this] { CatchUpLoop(); });
  ops_ = std::thread([this] { OpsLoop(); });
  if (!options_.ready_file.empty()) {
    Status ready = WriteFileAtomically(options_.ready_file, bound + "\n");
    if (!ready.ok()) {
      StopThreads();
      return ready.WithContext("serve: --ready-file");
    }
  }
  Log("serving " + bound + " (home " + runtime_.home().root() + ", " +
      (cluster.curve() ? "CURVE, " + std::to_string(cluster.clients.size()) + " client(s) allowed" : "plaintext") + ")");
  sd_notify(0, "READY=1");  // Type=notify: systemd starts what depends on the node now; a no-op elsewhere
  Status served = receiver.Run(stop);
  Log("stopping");
  sd_notify(0, "STOPPING=1");
  StopThreads();
  // --ready-file says the node serves: a stopped node must not leave it behind (kill -9 does; a supervisor
  // should use /healthz or the unit's state for liveness, docs/operations.md).
  if (!options_.ready_file.empty()) ::unlink(options_.ready_file.c_str());
  Log("stopped");
  return served;
}

Status StorageNode::Accept(const std::string& zip_path, const std::string& batch_id, const MapScope& scope,
                           uint64_t* sequence, std::string* already_merged) {
  *sequence = 0;
  already_merged->clear();
  const UnzipLimits limits{runtime_.config().cluster.max_batch_size};
  // The sender knows its batch by id, not by this node's file name: errors lead with the id.
  const std::string context = "batch " + batch_id;
  PLANB_RETURN_IF_ERROR(VerifyBatch(runtime_, zip_path, CheckDirFor(zip_path), limits, VerifyOptions(), scope).WithContext(context));
  // A load retried after a failure sends again what it sent before, under the same ids: what is merged here
  // already is answered as such rather than staged for a merge that would change nothing.
  std::string recorded_id;
  std::vector<std::string> maps;
  UnzipLimits verified = limits;
  verified.allow_deletes = true;  // VerifyBatch admitted its delete entries
  PLANB_RETURN_IF_ERROR(ReadBatchId(zip_path, verified, &recorded_id, &maps).WithContext(context));
  // The id the sender's rights were checked for (BEGIN's, in its namespace) is the id the batch is merged under.
  if (recorded_id != batch_id) {
    return Status::Invalid(context + ": its manifest names batch " + LogValue(recorded_id) +
                           ", not the id it was uploaded under");
  }
  bool merged = false;
  PLANB_RETURN_IF_ERROR(IsMergedIntoEveryShard(runtime_, maps, recorded_id, &merged).WithContext(context));
  if (merged) {
    *already_merged = recorded_id;
    return Status::Ok();
  }
  StagingStore staging(runtime_.home());
  PLANB_RETURN_IF_ERROR(staging.Stage(zip_path, sequence).WithContext(context));
  {
    std::lock_guard<std::mutex> lock(merge_mutex_);
    merge_requested_ = true;
  }
  merge_wakeup_.notify_all();
  return Status::Ok();
}

Status StorageNode::StageFetched(const std::string& zip_path, const std::string& batch_id) {
  uint64_t sequence = 0;
  std::string already_merged;
  return Accept(zip_path, batch_id, std::nullopt, &sequence, &already_merged);
}

Status StorageNode::RefuseWhileBehind(const std::string& map, const char* what) const {
  std::string why;
  if (catch_up_ == nullptr || !catch_up_->Behind(NormaliseMapName(map), &why)) return Status::Ok();
  return Status::IOError("catching up: node " + runtime_.config().cluster.node_name + " serves no " + what +
                         " of map " + LogValue(map) + " until it has merged what its peers have (" + why +
                         "); ask another node");
}

void StorageNode::CatchUpLoop() {
  const auto interval = std::chrono::milliseconds(runtime_.config().cluster.catch_up_interval_ms);
  while (!stopping_) {
    catch_up_->RunPass(stopping_);
    std::unique_lock<std::mutex> lock(merge_mutex_);
    catch_up_wakeup_.wait_for(lock, interval, [this] { return stopping_.load(); });
  }
}

void StorageNode::PruneRetained() {
  const ClusterConfig& cluster = runtime_.config().cluster;
  if (!RetainsMergedBatches(cluster)) return;
  RetentionPruned pruned;
  const Status status = PruneRetainedBatches(runtime_.home(), cluster.batch_retention_ms, cluster.batch_retention_bytes,
                                             CurrentTimeMs(), &pruned);
  if (pruned.files > 0) {
    Log("retention: deleted " + std::to_string(pruned.files) + " retained batch zip(s), " +
        std::to_string(pruned.bytes) + " bytes (batch_retention " + std::to_string(cluster.batch_retention_ms) +
        " ms, batch_retention_bytes " + std::to_string(cluster.batch_retention_bytes) + ")");
  }
  if (!status.ok()) Log("retention: pruning failed (will retry): " + status.message());
}

Status StorageNode::ListMerged(const protocol::ListMergedRequest& request, protocol::MergedList* reply) {
  return ListMergedBatches(runtime_, request, reply);
}

Status StorageNode::PrepareRetainedBatch(const std::string& batch_id, PreparedSnapshot* out) {
  *out = PreparedSnapshot();
  out->zip_path = RetainedBatchPath(runtime_.home(), batch_id);
  struct stat st;
  if (::lstat(out->zip_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("batch " + LogValue(batch_id) + " is not retained on this node (never merged here, or "
                            "older than batch_retention)");
  }
  out->create_time_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000;
  Status hashed = HashFile(out->zip_path, &out->size, &out->checksum);
  // Pruned between the look and the read: as if it had not been retained.
  if (hashed.code() == Code::kNotFound) {
    return Status::NotFound("batch " + LogValue(batch_id) + " is no longer retained on this node");
  }
  return hashed;
}

Status StorageNode::CheckLoad(const protocol::PrepareRequest& request, protocol::PrepareReply* reply) {
  return CheckLoadLocally(runtime_, request, reply);
}

BatchSink::MergeState StorageNode::MergeStateOf(uint64_t sequence, std::string* error) {
  StagingStore staging(runtime_.home());
  if (!staging.Contains(sequence)) {
    const std::string quarantined = QuarantineDir(runtime_.home()) + "/" + StagingStore::BatchFileName(sequence);
    std::error_code ec;
    if (!std::filesystem::exists(quarantined, ec)) return MergeState::kMerged;
    *error = "batch quarantined after failed merges (" + quarantined + ")";
    return MergeState::kFailed;
  }
  std::lock_guard<std::mutex> lock(merge_mutex_);
  const auto troubled = troubled_.find(sequence);
  if (troubled != troubled_.end()) {
    *error = troubled->second;
    return MergeState::kFailed;
  }
  return MergeState::kPending;
}

Status StorageNode::ExecuteRead(const protocol::ReadRequest& request, const MapScope& scope,
                                protocol::ReadResult* result) {
  const auto started = std::chrono::steady_clock::now();
  const Status read = RunRead(request, scope, result);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string_view outcome = RefusalReason(read);
  if (read.ok()) outcome = result->exit_code == kExitOk ? "ok" : result->exit_code == 1 ? "no_match" : "error";
  metrics_.RemoteRead(outcome, seconds);
  return read;
}

Status StorageNode::RunRead(const protocol::ReadRequest& request, const MapScope& scope,
                            protocol::ReadResult* result) {
  if (!ScopeAllows(scope, request.map)) return Status::PermissionDenied("not authorised for read on " + LogValue(request.map));
  PLANB_RETURN_IF_ERROR(RefuseWhileBehind(request.map, "remote reads"));
  const ClusterConfig& cluster = runtime_.config().cluster;
  if (request.where) {
    // A peer's where costs parse time and memory per term before a row is read: capped (exit 2, as the CLI).
    const uint64_t terms = CountWhereTerms(*request.where);
    if (terms > cluster.max_remote_where_terms) {
      result->exit_code = kExitError;
      result->out.clear();
      result->err = "planb: remote read cap: --where has " + std::to_string(terms) + " terms, more than this node's " +
                    "max_remote_where_terms of " + std::to_string(cluster.max_remote_where_terms) + "\n";
      return Status::Ok();
    }
  }
  // This request's own budget, handed to the read functions (they charge it per row examined).
  ReadBudget budget({cluster.max_remote_rows_examined, cluster.max_remote_bytes_examined,
                     std::chrono::steady_clock::now() + std::chrono::milliseconds(cluster.remote_read_timeout_ms),
                     cluster.remote_read_timeout_ms, signalled_});
  if (FaultPointActiveFor("read.stall", request.map)) return StallRead(budget, result);
  CappedStringBuf out_buffer(protocol::kMaxReadOutput);
  std::ostream out_stream(&out_buffer);
  std::ostringstream err_stream;
  // A few reads at once (the receiver's read pool); the catalog is read-only and EnvCache is thread-safe, so
  // reads overlap each other and merges as separate lookup processes would.
  result->exit_code = request.kind == protocol::ReadKind::kLookup
                          ? RunLookup(runtime_, LookupRequestFrom(request), &budget, out_stream, err_stream)
                          : RunQuery(runtime_, QueryRequestFrom(request), &budget, out_stream, err_stream);
  out_stream.flush();
  if (out_buffer.exceeded()) {
    result->exit_code = kExitError;
    result->out.clear();
    result->err = protocol::kReadOutputTooLarge;
    return Status::Ok();
  }
  // A query stopped by its cap printed part of its rows: send none, only the error (exit 2).
  if (budget.spent()) {
    result->exit_code = kExitError;
    result->out.clear();
  } else {
    result->out = out_buffer.Take();
  }
  result->err = err_stream.str();
  return Status::Ok();
}

// The read.stall fault (fault_point.h): a read whose every row is large and slow, as a scan of rows of megabytes
// compared against long needles is, so that tests can hold read threads without building gigabytes of data. It
// charges its budget as such a read would and ends the same way, on a cap or on the node's stop.
Status StorageNode::StallRead(ReadBudget& budget, protocol::ReadResult* result) {
  Status charged;
  while (charged.ok()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    charged = budget.ChargeRow(kReadBudgetClockBytes);
  }
  result->exit_code = kExitError;
  result->out.clear();
  result->err = "planb: " + charged.message() + "\n";
  return Status::Ok();
}

Status StorageNode::PrepareSnapshot(const std::string& map, const ContentVersion& have, PreparedSnapshot* out) {
  PLANB_RETURN_IF_ERROR(RefuseWhileBehind(map, "snapshots"));
  return snapshots_.Prepare(map, have, out);
}

Status StorageNode::PrepareSnapshotSince(const std::string& map, const SnapshotSince& since, PreparedSnapshot* out) {
  PLANB_RETURN_IF_ERROR(RefuseWhileBehind(map, "snapshots"));
  std::string why_whole;
  Status diffed = diffs_.Prepare(map, since, out, &why_whole);
  if (diffed.ok() && out->diff) return diffed;
  // Any reason not to diff leaves the whole snapshot, which is always right: only a failure is worth a line.
  if (!diffed.ok()) Log("snapshot diff failed for " + LogValue(map) + ", offering the whole snapshot: " + diffed.message());
  if (!why_whole.empty()) Log("no snapshot diff for " + LogValue(map) + ": " + why_whole);
  return snapshots_.Prepare(map, since.have, out);
}

// A storage node reads its shards, but its home may still hold snapshots (from before it joined node_list, or
// a reader sharing the home): superseded ones nobody holds are deleted on the same schedule as a Reader's.
void StorageNode::CleanUpSnapshotsIfDue() {
  const auto now = std::chrono::steady_clock::now();
  const auto interval = std::chrono::milliseconds(std::max<int64_t>(runtime_.config().cluster.min_time_to_keep_env_open_ms, 1000));
  if (now < next_cleanup_) return;
  next_cleanup_ = now + interval;
  PruneRetained();
  CleanupReport report;
  const Status cleaned = runtime_.snapshots()->Cleanup(&report);
  for (const std::string& path : report.deleted) Log("cleanup: removed " + path);
  for (const std::string& path : report.synced) Log("cleanup: synced " + path);
  if (!cleaned.ok()) Log("cleanup failed (will retry): " + cleaned.message());
}

void StorageNode::MaintainIfDue() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_maintenance_) return;
  next_maintenance_ = now + std::chrono::milliseconds(runtime_.config().maintain_interval_ms);
  MaintenanceOptions options;
  options.now_ms = CurrentTimeMs();
  options.stop = &stopping_;
  options.on_map = [this](const MapMaintenanceReport& map) {
    const bool removed = map.rows.stats.rows_deleted + map.rows.stats.rows_condensed + map.rows.keys_swept +
                             map.rows.batches_pruned + map.rows.tombstones_pruned > 0;
    if (!map.status.ok() || removed || map.reclaimed) Log("maintenance: " + DescribeMapMaintenance(map, false));
  };
  MaintenanceReport report;
  const Status maintained = RunMaintenance(runtime_, options, &report);
  for (const OrphanShard& orphan : report.orphans.deleted) {
    Log("maintenance: orphan shard " + orphan.map + " deleted (not configured since " +
        FormatIsoTime(orphan.first_seen_ms) + ")");
  }
  if (!report.orphans.record_problem.empty()) Log("maintenance: " + report.orphans.record_problem);
  if (!maintained.ok()) Log("maintenance failed (next try in maintain_interval): " + maintained.message());
}

namespace {

// A failure's text without its figures (free bytes, sizes, counts): what "the same failure" means for logging it
// once, since the free-bytes figure in a disk-full message changes with every retry.
std::string FailureKind(const std::string& message) {
  std::string kind;
  for (const char c : message) {
    if (c >= '0' && c <= '9') {
      if (kind.empty() || kind.back() != '#') kind += '#';
    } else {
      kind += c;
    }
  }
  return kind;
}

}  // namespace

void StorageNode::MergeLoop() {
  struct Running {  // /readyz and the watchdog see a merge thread that ended, however it ended
    std::atomic<bool>& flag;
    ~Running() { flag = false; }
  } running{merge_running_};
  MergeProcessor merger(runtime_, UnzipLimits{runtime_.config().cluster.max_batch_size});
  std::string last_error;
  while (!stopping_) {
    MergeReport report;
    const Status merged = merger.MergePending(&report, &stopping_);
    if (!merged.ok()) metrics_.MergeFailed();
    metrics_.BatchesMerged(report.batches);
    for (const auto& [map, rows] : report.rows_merged) metrics_.RowsMerged(map, rows);
    for (const auto& [map, rows] : report.rows_deleted) metrics_.RowsDeleted(map, rows);
    for (size_t i = 0; i < report.quarantined.size(); ++i) metrics_.BatchQuarantined();
    if (report.batches > 0) {
      uint64_t rows = 0;
      for (const auto& entry : report.rows_merged) rows += entry.second;
      uint64_t deleted = 0;
      for (const auto& entry : report.rows_deleted) deleted += entry.second;
      Log("merged " + std::to_string(report.batches) + " batch(es) through batch " +
          std::to_string(report.last_sequence) + " (" + std::to_string(rows) + " rows" +
          (deleted == 0 ? std::string() : ", " + std::to_string(deleted) + " rows deleted") + ")");
      for (const auto& [map, shadowed] : report.rows_shadowed) {
        Log("map " + LogValue(map) + ": " + std::to_string(shadowed) +
            " merged row(s) were older than a deletion merged before them and were deleted by its tombstone");
      }
    }
    for (const QuarantinedBatch& batch : report.quarantined) {
      Log("quarantined batch " + batch.name + " (maps " + (batch.maps_known ? JoinMaps(batch.maps) : "unknown") +
          ") in " + QuarantineDir(runtime_.home()) + ": " + batch.reason);
    }
    std::string held;
    for (const HeldBatch& batch : report.held) {
      held += (held.empty() ? "" : "; ") + batch.name + " (map " + batch.map + " blocked by " + batch.by + ")";
    }
    if (held != last_held_ && !held.empty()) Log("held back, waiting for the operator: " + held);
    last_held_ = held;
    int64_t wait_ms = options_.merge_poll_ms;
    {
      std::lock_guard<std::mutex> lock(merge_mutex_);
      troubled_ = report.failed;
      for (const HeldBatch& batch : report.held) {
        troubled_[batch.sequence] = "held back: map " + batch.map + " is blocked by batch " + batch.by +
                                    " (quarantined or failing; see planb stores)";
      }
      if (!merged.ok()) wait_ms = options_.merge_retry_ms;
    }
    // The same failure every retry is logged once, not every few seconds, whatever its figures say meanwhile.
    const std::string error_kind = merged.ok() ? std::string() : FailureKind(merged.message());
    if (!merged.ok() && error_kind != last_error) Log("merge failed (will retry): " + merged.message());
    last_error = error_kind;
    if (report.batches > 0 && FaultPointActive("merge.thread_exit")) {
      Log("merge thread: ending at fault point merge.thread_exit (staged batches are no longer merged)");
      return;
    }
    CleanUpSnapshotsIfDue();
    MaintainIfDue();
    std::unique_lock<std::mutex> lock(merge_mutex_);
    merge_wakeup_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                           [this] { return merge_requested_ || stopping_.load(); });
    merge_requested_ = false;
  }
}

}  // namespace planb
