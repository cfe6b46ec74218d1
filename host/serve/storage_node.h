// `planb serve`: one storage node. Accepts uploads (upload_receiver.h) and runs the merge processor perpetually
// (the design's "Plan B Merge Processor"): a batch is merged as soon as it is staged, whether it arrived over the
// network or was moved into staging/ by a load on this machine. It serves snapshots of its shards to readers
// (SNAPSHOT/FETCH, snapshot_source.h).
// Lookups and queries by other processes keep working meanwhile: nothing holds the home exclusively.
// Thread-safety: Run() on one thread; the stop flag may be set from anywhere (a signal handler).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "host/catchup/peer_catch_up.h"
#include "host/common/log_file.h"
#include "host/common/read_budget.h"
#include "host/monitoring/http_endpoint.h"
#include "host/monitoring/node_metrics.h"
#include "host/receiver/upload_receiver.h"
#include "host/runtime.h"
#include "host/serve/snapshot_diff_source.h"
#include "host/serve/snapshot_source.h"

namespace planb {

struct ServeOptions {
  std::string bind;        // "" = this node's endpoint from the config
  std::string ready_file;  // when set: written (atomically) with the bound endpoint once the node serves
  // How often the merge loop looks at staging/ without being told (batches moved in by local loads).
  int64_t merge_poll_ms = 500;
  // After a failed merge, the queue is retried this often (the cause may be fixed meanwhile: disk space).
  int64_t merge_retry_ms = 5000;
  // When set, log lines go to this file (log_file) instead of the stream given to the node.
  LogFile* log_file = nullptr;
  // When set: counts SIGHUPs; each new one reopens log_file (logrotate) and is logged. The node never stops on it.
  const std::atomic<uint64_t>* hangups = nullptr;
};

// Whether binding `endpoint` may be reached from other machines: a tcp:// address other than 127.x.x.x,
// localhost and [::1] (a wildcard, 0.0.0.0, any other address or host name), or a transport other than tcp://,
// ipc:// and inproc://. Without keys such a bind needs allow_plaintext.
bool ListensBeyondThisHost(const std::string& endpoint);

class StorageNode final : public BatchSink {
 public:
  // `log` gets one line per event (timestamped by the caller's sink).
  StorageNode(Runtime& runtime, ServeOptions options, std::ostream& log);
  ~StorageNode() override;

  // Serves until `stop` becomes true, then finishes the merge in hand (or leaves its batch staged), joins and
  // returns. Errors: this node is not a storage node, the endpoint cannot be bound.
  Status Run(const std::atomic<bool>& stop);

  // BatchSink
  Status Accept(const std::string& zip_path, const std::string& batch_id, const MapScope& scope,
                uint64_t* sequence, std::string* already_merged) override;
  MergeState MergeStateOf(uint64_t sequence, std::string* error) override;
  // Runs the typed lookup or query against this node's runtime with the functions the CLI on this node runs, under
  // a cost budget of the node's remote read caps (stdout past protocol::kMaxReadOutput: exit 2 and
  // kReadOutputTooLarge). Refuses a map outside `scope`.
  Status ExecuteRead(const protocol::ReadRequest& request, const MapScope& scope,
                     protocol::ReadResult* result) override;
  // A zip of a consistent copy of the shard of `map` in outgoing/, or not modified (SnapshotSource::Prepare).
  Status PrepareSnapshot(const std::string& map, const ContentVersion& have, PreparedSnapshot* out) override;
  Status PrepareSnapshotSince(const std::string& map, const SnapshotSince& since, PreparedSnapshot* out) override;
  Status CheckLoad(const protocol::PrepareRequest& request, protocol::PrepareReply* reply) override;
  Status ListMerged(const protocol::ListMergedRequest& request, protocol::MergedList* reply) override;
  Status PrepareRetainedBatch(const std::string& batch_id, PreparedSnapshot* out) override;

 private:
  // ExecuteRead's work; ExecuteRead times it for the metrics.
  Status RunRead(const protocol::ReadRequest& request, const MapScope& scope, protocol::ReadResult* result);
  void MergeLoop();
  // Starts /metrics, /healthz and /readyz on metrics_bind when configured (docs/operations.md).
  Status StartHttp();
  HttpResponse Readyz() const;
  // Every kOpsTickMs until the stop: reopens log_file after a SIGHUP, and pings systemd's watchdog while the merge
  // thread runs (WATCHDOG_USEC; a node whose merges died is restarted).
  void OpsLoop();
  // Sets stopping_ and joins the merge, catch-up and ops threads, then stops the HTTP listener. Idempotent.
  void StopThreads();
  // Every catch_up_interval: one catch-up pass (peer_catch_up.h) over the peers and maps.
  void CatchUpLoop();
  // Catch-up's Stage: a fetched batch verified and staged as an upload from a client allowed every map.
  Status StageFetched(const std::string& zip_path, const std::string& batch_id);
  // kIOError "catching up: ..." while catch-up says this node is behind on `map`; else OK.
  Status RefuseWhileBehind(const std::string& map, const char* what) const;
  // Deletes retained batch zips past batch_retention(_bytes), on the cleanup schedule.
  void PruneRetained();
  // On the merge thread: `planb cleanup`'s work every min_time_to_keep_env_open (at least every second).
  void CleanUpSnapshotsIfDue();
  // Every maintain_interval (the first time at the first merge pass): one maintenance pass over the shards,
  // between merges, logging what it removed per map and any failure.
  void MaintainIfDue();
  void Log(const std::string& line);
  // ExecuteRead under the read.stall fault.
  static Status StallRead(ReadBudget& budget, protocol::ReadResult* result);

  Runtime& runtime_;
  const ServeOptions options_;
  NodeMetrics metrics_;
  HttpEndpoint http_;
  // /readyz's disk floor: ready_min_free_disk, else the margin loads keep free (measured once, at StartHttp).
  uint64_t ready_floor_bytes_ = 0;
  std::atomic<bool> merge_running_{false};  // true from the merge thread's start until its loop ends
  std::thread ops_;
  std::condition_variable ops_wakeup_;  // with merge_mutex_: the stop
  std::ostream& log_;
  std::mutex log_mutex_;

  std::mutex merge_mutex_;
  std::condition_variable merge_wakeup_;
  bool merge_requested_ = false;
  std::atomic<bool> stopping_{false};
  // Run's stop flag (SIGTERM, SIGINT), which remote reads in flight watch: the receiver joins its read threads
  // before Run sets stopping_, so they must end on the signal itself. Set before the receiver starts.
  const std::atomic<bool>* signalled_ = &stopping_;
  // Guarded by merge_mutex_: staged batches that failed their last merge or are held back behind a quarantined
  // or failing batch, with why (what STATUS answers for them).
  std::map<uint64_t, std::string> troubled_;
  std::string last_held_;  // merge thread only: the held-back summary last logged
  std::chrono::steady_clock::time_point next_cleanup_{};  // merge thread only
  std::chrono::steady_clock::time_point next_maintenance_{};  // merge thread only
  std::thread merger_;
  SnapshotSource snapshots_;
  SnapshotDiffSource diffs_;
  std::unique_ptr<PeerCatchUp> catch_up_;  // set before the receiver starts when the node has peers
  std::thread catcher_;
  std::condition_variable catch_up_wakeup_;  // with merge_mutex_: the stop
};

}  // namespace planb
