// UploadReceiver's insides, shared by upload_receiver.cc (socket loop, long-poll waiters, expiry) and
// receiver_commands.cc (BEGIN, CHUNK, COMMIT, STATUS, READ). Everything here runs on the Run thread only, apart
// from BatchSink::Accept and BatchSink::ExecuteRead, which the accept and read workers (LoopWorkers) run on threads
// of their own.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "host/transfer/accept_worker.h"
#include "host/transfer/protocol.h"
#include "host/transfer/read_worker.h"
#include "host/transfer/upload_receiver.h"
#include "host/transfer/upload_session.h"

namespace planb {

class UploadReceiver::Impl {
 public:
  using Clock = std::chrono::steady_clock;

  Impl(zmq::context_t& context, ReceiverSettings settings, BatchSink& sink, LogFunction log)
      : context_(context),
        settings_(std::move(settings)),
        sink_(sink),
        log_(std::move(log)),
        worker_(MakeAcceptWorker(sink)),
        read_worker_(MakeReadWorker(sink)),
        token_rng_(std::random_device{}()) {
    // A sender refuses a READY outside 1..protocol::kMaxUploadChunkSize: never advertise one.
    settings_.chunk_size = std::clamp<uint32_t>(settings_.chunk_size, 1, protocol::kMaxUploadChunkSize);
  }

  Status Bind(const std::string& endpoint, std::string* bound);
  Status Run(const std::atomic<bool>& stop);

 private:
  struct Waiter {  // a held (long-polled) STATUS request; at most one per token
    std::string routing_id;
    uint64_t request_id;
    uint64_t token;
    Clock::time_point deadline;
  };

  // upload_receiver.cc
  Status Serve(const std::atomic<bool>& stop);
  void HandleMessage(std::vector<zmq::message_t>& frames);
  void TakeAcceptResults();
  void TakeReadResults();
  void ServeWaiters(Clock::time_point now);
  void ExpireIdle(Clock::time_point now);
  void DropAll();
  void ClearStaleParts();
  void Reply(const std::string& routing_id, protocol::Command command, uint64_t request_id, const std::string& payload);
  // Answers ERROR and logs the error with the batch id when known, else with the sender's routing id.
  void ReplyError(const std::string& routing_id, uint64_t request_id, const Status& status,
                  const std::string& batch_id);
  void Log(const std::string& line) {
    if (log_) log_(line);
  }

  // receiver_commands.cc
  void HandleBegin(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  void HandleChunk(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                   std::string_view bytes);
  void HandleCommit(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  void HandleStatus(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  void HandleRead(const std::string& routing_id, uint64_t request_id, std::string_view payload);
  // The upload of `token`, or null after answering ERROR for an unknown token.
  // OK when a new upload of `begin` may start; else kFull saying why not: too many uploads in progress ("busy:
  // ...", which the sender retries), or too little free space in receive_dir ("disk full: ...", final).
  Status CheckRoomFor(const protocol::BeginRequest& begin);
  UploadSession* FindUpload(const std::string& routing_id, uint64_t request_id, protocol::Command command,
                            uint64_t token);
  // Marks the upload failed and deletes its part file; the caller answers (and so logs).
  void FailUpload(UploadSession* upload, Status status);
  // True when `upload`'s STATUS answer need not wait any longer, with the answer in `reply` either way. The
  // merge state of a staged batch whose sender synchronises the merge comes from the sink only if `ask_sink`.
  bool Settled(UploadSession* upload, protocol::StatusReply* reply, bool ask_sink = true);
  static protocol::StatusReply CurrentStatus(const UploadSession& upload);

  zmq::context_t& context_;
  ReceiverSettings settings_;
  BatchSink& sink_;
  LogFunction log_;
  AcceptWorker worker_;
  ReadWorker read_worker_;
  std::unique_ptr<zmq::socket_t> router_;
  std::mt19937_64 token_rng_;
  std::map<uint64_t, std::unique_ptr<UploadSession>> uploads_;
  std::vector<Waiter> waiters_;
  Clock::time_point next_merge_check_;
};

std::string TokenHex(uint64_t token);

}  // namespace planb
