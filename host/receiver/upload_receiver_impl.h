// UploadReceiver's insides, shared by upload_receiver.cc (socket loop, long-poll waiters, expiry),
// receiver_commands.cc (BEGIN, CHUNK, COMMIT, STATUS, READ) and upload_receiver_snapshots.cc (SNAPSHOT, FETCH).
// Everything here runs on the Run thread only, apart from BatchSink::Accept, ExecuteRead and PrepareSnapshot,
// which the accept, read and snapshot workers (LoopWorkers) run on threads of their own.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "host/common/hex.h"
#include "host/common/log_text.h"
#include "host/receiver/accept_worker.h"
#include "host/receiver/fair_read_queue.h"
#include "host/receiver/connection_guard.h"
#include "host/receiver/read_worker.h"
#include "host/receiver/reply_backlog.h"
#include "host/receiver/snapshot_serving.h"
#include "host/receiver/snapshot_worker.h"
#include "host/receiver/upload_receiver.h"
#include "host/receiver/upload_session.h"
#include "host/monitoring/node_metrics.h"
#include "host/transfer/protocol.h"

namespace planb {

class UploadReceiver::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  Impl(zmq::context_t& context, ReceiverSettings settings, BatchSink& sink, LogFunction log)
      : context_(context),
        settings_(std::move(settings)),
        sink_(sink),
        log_(std::move(log)),
        access_(settings_.access, [this](const std::string& line) { Log(line); }),
        worker_(MakeAcceptWorker(sink)),
        read_worker_(MakeReadWorker(sink)),
        reads_(FairReadLimitsFor(kReadThreads, settings_.max_pending_reads)),
        snapshot_worker_(MakeSnapshotWorker(sink)),
        backlog_(settings_.max_unread_reply_bytes) {
    // A sender refuses a READY outside 1..protocol::kMaxUploadChunkSize: never advertise one.
    settings_.chunk_size = std::clamp<uint32_t>(settings_.chunk_size, 1, protocol::kMaxUploadChunkSize);
  }

  Status Bind(const std::string& endpoint, std::string* bound);
  Status Start();
  Status Run(const std::atomic<bool>& stop);

 private:
  struct Waiter {  // a held (long-polled) STATUS request; at most one per token
    std::string routing_id;
    uint64_t request_id;
    Token token;
    Clock::time_point deadline;
  };

  // upload_receiver.cc
  Status Serve(const std::atomic<bool>& stop);
  void HandleMessage(std::vector<zmq::message_t>& frames);
  void TakeAcceptResults();
  void TakeReadResults();
  void TakeSnapshotResults();
  void ServeWaiters(Clock::time_point now);
  void ExpireIdle(Clock::time_point now);
  void DropAll();
  void ClearStaleParts();
  void Reply(const std::string& routing_id, protocol::Command command, uint64_t request_id, const std::string& payload);
  // A reply whose payload counts in `client`'s backlog of unread replies until ZeroMQ has written it (READ_RESULT).
  void ReplyCounted(const std::string& routing_id, protocol::Command command, uint64_t request_id,
                    const std::string& client, std::string payload);
  // kFull "busy: N bytes of replies to this client are not yet read ..." when a reply of `bytes` would take
  // `client` over max_unread_reply_bytes, else OK.
  Status CheckBacklog(const std::string& client, uint64_t bytes) const;
  // A reply with a third frame of bytes (FETCH_DATA).
  void ReplyWithData(const std::string& routing_id, protocol::Command command, uint64_t request_id,
                     const std::string& payload, zmq::message_t data);
  // Answers ERROR and logs the error with the batch id when known, else with the sender's routing id.
  // `logged`, when given, is logged instead of `status` (the fuller text the sender is not told: ForSender).
  void ReplyError(const std::string& routing_id, uint64_t request_id, const Status& status,
                  const std::string& batch_id, const Status* logged = nullptr);
  // `status` as a sender is told it: the upload's part file (named by its token) as "the upload of batch ID",
  // no paths of the node's directories, no figures of its free space. The log keeps the full text.
  Status ForSender(const Status& status, const UploadSession* upload) const;
  // The same for any text sent to a peer (a READ's stderr): the home's path as "<home>".
  std::string ForSenderText(std::string message, const UploadSession* upload) const;
  // Answers ERROR for a request access_ refused (and logged, once a minute per client, right and map).
  // `right`: the right checked, counted in the metrics.
  void ReplyRefused(const std::string& routing_id, uint64_t request_id, const Status& status, Right right);
  // The request being handled is an upload's (BEGIN, CHUNK, COMMIT): its errors count as upload refusals.
  bool handling_upload_ = false;
  void Log(const std::string& line) {
    if (log_) log_(line);
  }
  // Logs an error a peer caused: `what` ("upload error", "snapshot error") + " " + `about` + ": " + the message
  // (escaped, capped) + " (from " + `from` + ")" when `from` names the client, each kind (the client with keys,
  // what, code and the message's fixed start) at most once per 10 s with a count of those suppressed.
  // REQUIRES: `about` and `from` are already escaped (LogValue, ClientAccess::Identify).
  void LogPeerError(const std::string& what, const Status& status, const std::string& about, const std::string& from);

  // receiver_commands.cc
  void HandleBegin(const std::string& routing_id, uint64_t request_id, std::string_view payload, MapScope scope);
  void HandleChunk(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                   std::string_view bytes);
  void HandleCommit(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  void HandleStatus(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  void HandleRead(const std::string& routing_id, uint64_t request_id, std::string_view payload, MapScope scope,
                  std::string client);
  // Hands the read worker every queued READ that may start now (fair_read_queue.h).
  void StartReads();
  // Runs `job` on this thread (a small lookup while no other read waits or runs: HandleRead) and answers it.
  void RunReadHere(ReadJob job);
  // Answers a finished READ: ERROR, or READ_RESULT within the client's unread bound.
  void AnswerRead(ReadJobResult& result);
  // `from`: the request's header frame, whose client access_ checks for each map asked about.
  void HandlePrepare(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                     const zmq::message_t& from);

  // upload_receiver_catchup.cc: a peer's LIST_MERGED and OFFER_BATCH (right "node").
  void HandleListMerged(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                        const zmq::message_t& from);
  void HandleOfferBatch(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                        const zmq::message_t& from);

  // upload_receiver_snapshots.cc
  void HandleSnapshot(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                      const zmq::message_t& from);
  void HandleSnapshotSince(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                           const zmq::message_t& from);
  // SNAPSHOT and SNAPSHOT_SINCE after decoding: checks the map's name, the right and the queue, then queues the job.
  void QueueSnapshot(const std::string& routing_id, uint64_t request_id, const char* request, std::string map,
                     const SnapshotSince& since, bool diff_ok, const zmq::message_t& from);
  // `client`: ClientAccess::Identify of the sender; only the client a snapshot was offered to may fetch it.
  void HandleFetch(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                   const std::string& client);
  // Whom a served snapshot's token belongs to: `client` with CURVE, nobody in particular in plaintext.
  std::string TokenOwner(const std::string& client) const;
  // Answers a prepared SNAPSHOT: NOT_MODIFIED, or an offer of the zip (opened and served under a new token).
  void OfferSnapshot(SnapshotJobResult& result);
  // Answers ERROR and logs it with the map when known, else with the sender's routing id.
  void ReplySnapshotError(const std::string& routing_id, uint64_t request_id, const Status& status,
                          const std::string& map);
  // The most of `total` one client may hold: max_client_share_percent of it, at least 1.
  uint64_t ClientShare(uint64_t total) const;
  // A token no upload or served snapshot uses, from the OS's CSPRNG (getrandom): a peer cannot guess another's.
  Token NewToken();
  // The upload of `token`, or null after answering ERROR for an unknown token.
  // OK when a new upload of `begin` may start; else kFull saying why not: too many uploads in progress ("busy:
  // ...", which the sender retries), or too little free space in receive_dir ("disk full: ...", final).
  Status CheckRoomFor(const protocol::BeginRequest& begin);
  // An upload of another owner (TokenOwner) is unknown to this sender, as one never begun.
  UploadSession* FindUpload(const std::string& routing_id, uint64_t request_id, protocol::Command command,
                            Token token, const std::string& owner);
  // Marks the upload failed (its STATUS answer: `status` ForSender) and deletes its part file; the caller answers
  // (and so logs).
  void FailUpload(UploadSession* upload, Status status);
  // True when `upload`'s STATUS answer need not wait any longer, with the answer in `reply` either way. The
  // merge state of a staged batch whose sender synchronises the merge comes from the sink only if `ask_sink`.
  bool Settled(UploadSession* upload, protocol::StatusReply* reply, bool ask_sink = true);
  static protocol::StatusReply CurrentStatus(const UploadSession& upload);

  zmq::context_t& context_;
  ReceiverSettings settings_;
  BatchSink& sink_;
  LogFunction log_;
  ClientAccess access_;
  AcceptWorker worker_;
  ReadWorker read_worker_;
  FairReadQueue reads_;
  SnapshotWorker snapshot_worker_;
  ServedSnapshots served_;
  ReplyBacklog backlog_;  // declared before router_: messages the socket still holds count into it
  std::unique_ptr<zmq::socket_t> router_;
  bool started_ = false;  // Start succeeded: the workers run
  std::unique_ptr<ConnectionGuard> connections_;  // after router_: stops monitoring it before it closes
  std::map<Token, std::unique_ptr<UploadSession>> uploads_;
  std::vector<Waiter> waiters_;
  Clock::time_point next_merge_check_;
  RepeatLimiter error_limiter_;
  // The message being handled (or the worker result being answered): its sender (ClientAccess::Identify) and
  // that sender's TokenOwner. Set by HandleMessage before it dispatches, read by the handlers it calls and by
  // the log lines of their errors.
  void SetSender(std::string client) {
    sender_ = std::move(client);
    sender_owner_ = TokenOwner(sender_);
    sender_client_.clear();  // set by HandleMessage after it, for the message it dispatches
  }
  // sender_, or "sender HEX" of `routing_id` before it is known.
  std::string Sender(const std::string& routing_id) const {
    return sender_.empty() ? "sender " + HexString(routing_id) : sender_;
  }
  std::string sender_;
  std::string sender_owner_;
  std::string sender_client_;  // with CURVE the message's client name (its section), for its batch namespace
};


}  // namespace planb
