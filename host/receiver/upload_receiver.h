// The storage node's side of uploads: a ROUTER socket serving any number of senders (docs/protocol.md).
// Chunks are written to receive/<token>.part as they arrive (bounded memory: the sender keeps at most its window
// in flight; bounded files: at most max_open_uploads at once, each begun only when receive/ has room for it twice);
// on commit the file is checked (size, XXH3 checksum), fsynced and handed to the BatchSink, which
// verifies and stages it. Only then does a status request answer "staged". Malformed messages, unknown
// versions or commands get an error reply and a log line; the receiver keeps serving.
// It also serves snapshots of the node's shards (SNAPSHOT, then FETCH in chunks): the sink prepares a zip on a
// worker thread; the receiver keeps it open (so a zip replaced meanwhile stays readable) and serves its bytes.
// Thread-safety: Run() on one thread; Stop() from any thread (or a signal handler via the stop flag).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/receiver/client_access.h"
#include "host/receiver/snapshot_offer.h"
#include "host/storage/content_version.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

namespace planb {

// Where committed uploads go. Implemented by the storage node (verify + stage + merge state); tests may use a
// simpler real one. Thread-safety: Accept runs on the receiver's accept worker thread (one batch at a time),
// ExecuteRead on its read worker threads (kReadThreads requests at once), PrepareSnapshot on its snapshot worker thread
// (one request at a time), MergeStateOf on the Run thread; they may overlap.
class BatchSink {
 public:
  enum class MergeState { kPending, kMerged, kFailed };
  virtual ~BatchSink() = default;
  // Verifies the complete zip at `zip_path` and moves it into staging/. On error the file is left for the
  // receiver to delete and nothing is staged; the status goes back to the sender as is. A batch naming a map
  // outside `scope` (the maps its sender's client may upload to) is refused (kPermissionDenied). A verified batch
  // this node has already merged (its manifest id recorded in every map's shard) is not staged again: OK with
  // `*already_merged` set to that id, `*sequence` 0, and the file left for the receiver to delete.
  virtual Status Accept(const std::string& zip_path, const std::string& batch_id, const MapScope& scope,
                        uint64_t* sequence, std::string* already_merged) = 0;
  // Whether staged batch `sequence` has been merged; kFailed with `error` when its merge failed (it stays queued
  // and is retried, so kFailed may later become kMerged).
  virtual MergeState MergeStateOf(uint64_t sequence, std::string* error) = 0;
  // Runs the typed READ `request` (a lookup or a query, its fields already bounded by the decoder) and fills its
  // exit status, stdout and stderr. A non-OK status means the request was refused, not that the read failed; it
  // goes back as an ERROR reply: among them kPermissionDenied for a map outside `scope` (the maps the sender's
  // client may read).
  virtual Status ExecuteRead(const protocol::ReadRequest& request, const MapScope& scope,
                             protocol::ReadResult* result) {
    (void)request, (void)scope, (void)result;
    return Status::NotSupported("this node does not run READ requests");
  }
  // SNAPSHOT: a zip of a consistent copy of `map`'s shard newer than `have`, or not_modified when the shard is at
  // `have`. The zip stays where it is until the receiver has opened it (it may be unlinked after that). A non-OK
  // status goes back as an ERROR with its code: kNotFound for a map this node does not have or has no shard of.
  virtual Status PrepareSnapshot(const std::string& map, const ContentVersion& have, PreparedSnapshot* out) {
    (void)map, (void)have, (void)out;
    return Status::NotSupported("this node does not serve snapshots");
  }
  // SNAPSHOT_SINCE: as PrepareSnapshot, or a diff (`out->diff`: the batches merged since `since`,
  // host/serve/snapshot_diff_source.h) when the node can make one. By default, what PrepareSnapshot answers.
  virtual Status PrepareSnapshotSince(const std::string& map, const SnapshotSince& since, PreparedSnapshot* out) {
    return PrepareSnapshot(map, since.have, out);
  }
  // LIST_MERGED (catch-up): the batches merged into `request.map`'s shard after `request.after`, at most
  // `request.limit`, with the map's content version. Runs on the Run thread: reads of one LMDB page run, no more.
  // kNotFound for a map this node does not have.
  virtual Status ListMerged(const protocol::ListMergedRequest& request, protocol::MergedList* reply) {
    (void)request, (void)reply;
    return Status::NotSupported("this node does not answer LIST_MERGED");
  }
  // OFFER_BATCH (catch-up): the retained zip of batch `batch_id` with its size and checksum (`map` empty,
  // `version` zeros, `create_time_ms` when it was merged). kNotFound when it is not retained. Runs on the snapshot
  // worker.
  virtual Status PrepareRetainedBatch(const std::string& batch_id, PreparedSnapshot* out) {
    (void)batch_id, (void)out;
    return Status::NotSupported("this node does not offer batches");
  }
  // PREPARE: whether this node could take a load writing `request`'s maps; one answer per map, in order. Runs on
  // the Run thread, so it must be quick (no merge, no fsync). A non-OK status goes back as an ERROR.
  virtual Status CheckLoad(const protocol::PrepareRequest& request, protocol::PrepareReply* reply) {
    (void)request, (void)reply;
    return Status::NotSupported("this node does not answer PREPARE");
  }
};

class NodeMetrics;

struct ReceiverSettings {
  // Counted into when set (`planb serve`'s metrics); the receiver's outcomes, refusals and bytes.
  NodeMetrics* metrics = nullptr;
  std::string receive_dir;  // the home's receive/; cleared of stale parts at start
  // The node's home: its path is named "<home>" in what peers are told (errors, a READ's stderr); "" = none.
  std::string home_dir;
  // The largest chunk accepted (the sender is told); kept within 1..protocol::kMaxUploadChunkSize.
  uint32_t chunk_size = 1u << 20;
  uint32_t window = 8;                             // chunks the sender may have in flight (the sender is told)
  int64_t status_hold_ms = 1000;                   // a status request waits up to this long for a change (long poll)
  // A receiving upload that sends nothing this long loses its place, its part file and its disk reservation
  // (the config's upload_idle_timeout); a served snapshot without a FETCH this long is closed.
  int64_t idle_upload_expiry_ms = 30 * 1000;
  // A finished upload (staged, merged, failed) holds no slot, file or space, only its answer to STATUS: kept longer.
  int64_t finished_upload_expiry_ms = 10 * 60 * 1000;
  uint64_t max_upload_bytes = uint64_t{64} << 30;  // larger declared sizes are refused at begin
  // Uploads receiving or verifying at once (each holds a part file, and while receiving an fd): a BEGIN for a new
  // upload beyond this is answered ERROR kFull "busy: ..." and the sender retries later. Held STATUS requests
  // are capped at kHeldStatusPerOpenUpload times this.
  uint32_t max_open_uploads = 64;
  // READ requests queued or running at once; beyond this one is answered ERROR kFull "busy: ...".
  uint32_t max_pending_reads = 16;
  // SNAPSHOT requests queued or being prepared at once; beyond this one is answered ERROR kFull "busy: ...".
  uint32_t max_pending_snapshots = 8;
  // Snapshot zips held open for FETCH at once (one fd each, until idle_upload_expiry_ms without a FETCH); a
  // SNAPSHOT that would open one more is answered ERROR kFull "busy: ...".
  uint32_t max_served_snapshots = 64;
  // The share (percent, 1..100) of max_open_uploads, of the disk room for uploads and of max_served_snapshots that
  // one client may hold (with CURVE a client is its key, in plaintext a connection); at least one of each.
  uint32_t max_client_share_percent = 25;
  // Bytes per second an upload in progress and a served snapshot's fetches must keep up, averaged over each
  // window of idle_upload_expiry_ms; 0: no minimum (only the idle expiry). `planb serve` sets min_transfer_rate.
  uint64_t min_transfer_rate = 0;
  // Connections open at once (connection_guard.h): past it, or past one client's share of it
  // (max_client_share_percent), a new connection is closed as soon as it is accepted. `planb serve` lowers the
  // config's max_connections to fit under its open-files limit.
  uint32_t max_connections = 1024;
  // A connection that sends nothing this long is closed (the config's idle_connection_timeout).
  int64_t idle_connection_timeout_ms = 5 * 60 * 1000;
  // Bytes of replies (READ_RESULT, FETCH_DATA) one client may leave unread, queued in the node's memory: past
  // it, its next READ or FETCH is answered ERROR kFull "busy: ... not yet read" (reply_backlog.h). One reply
  // larger than this still goes to a client with nothing unread. The config's max_unread_reply_bytes.
  uint64_t max_unread_reply_bytes = uint64_t{128} << 20;
  // A connection that has not finished its ZMTP handshake (greeting, and with CURVE the key exchange) this long
  // is closed: a peer that connects and then sends nothing, or trickles bytes, holds a socket for no longer.
  int64_t handshake_timeout_ms = 10 * 1000;
  // CURVE and the clients' rights (client_access.h); by default plaintext, every peer may do everything.
  AccessSettings access;
};
inline constexpr uint32_t kHeldStatusPerOpenUpload = 4;

// Log lines (without a trailing newline) for the node's log, e.g. "staged batch 7 from node1a/... (1.2 MB)".
// Called on the Run thread only.
using LogFunction = std::function<void(const std::string&)>;

class UploadReceiver {
 public:
  UploadReceiver(zmq::context_t& context, ReceiverSettings settings, BatchSink& sink, LogFunction log);
  ~UploadReceiver();
  UploadReceiver(const UploadReceiver&) = delete;
  UploadReceiver& operator=(const UploadReceiver&) = delete;

  // Binds `endpoint` (tcp://host:port, or port * for any free port). `bound` gets the actual endpoint.
  Status Bind(const std::string& endpoint, std::string* bound);
  // Creates receive_dir if missing, deletes stale *.part files in it and starts the worker threads, so that a
  // caller can say the node serves only once it does (a stop signal that arrives after that finds every thread
  // up, and only Run's poll, which takes EINTR as a wake-up, to interrupt). Idempotent; on failure nothing is left
  // running. Errors: Start before a successful Bind, receive_dir not creatable, zmq failures.
  Status Start();
  // Serves until `stop` becomes true (checked at least every 100 ms); Starts first when the caller did not.
  // Partial uploads are dropped on return, after the worker finished the batch it was verifying. Errors: Run
  // before a successful Bind, Start's, zmq failures.
  Status Run(const std::atomic<bool>& stop);

 private:
  class Impl;
  Impl* impl_;
};

}  // namespace planb
