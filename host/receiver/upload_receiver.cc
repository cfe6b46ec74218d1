#include "host/receiver/upload_receiver.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <zmq_addon.hpp>

#include "host/common/file_util.h"
#include "host/common/hex.h"
#include "host/receiver/upload_receiver_impl.h"

namespace planb {

namespace {

using protocol::Command;
using protocol::UploadState;

constexpr auto kMaxPollWait = std::chrono::milliseconds(100);
// Messages taken per wake-up before the loop looks at its timers again, so a flood of chunks cannot starve
// long-poll deadlines or the stop flag.
constexpr int kMaxMessagesPerTurn = 256;
constexpr auto kMergeCheckInterval = std::chrono::milliseconds(20);

std::string_view View(const zmq::message_t& m) { return {static_cast<const char*>(m.data()), m.size()}; }

// The right each request needs (docs/security.md): everything a load asks is `upload`.
Right RightOf(Command command) {
  switch (command) {
    case Command::kRead:
      return Right::kRead;
    case Command::kSnapshot:
    case Command::kSnapshotSince:
    case Command::kFetch:
      return Right::kSnapshot;
    case Command::kListMerged:
    case Command::kOfferBatch:
      return Right::kNode;
    default:  // BEGIN, CHUNK, COMMIT, STATUS, PREPARE
      return Right::kUpload;
  }
}

// Every occurrence of `from` in `text` replaced by `to`, in one pass ("" replaces nothing).
void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  if (from.empty() || text->find(from) == std::string::npos) return;
  std::string out;
  out.reserve(text->size());
  size_t start = 0;
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, start)) {
    out.append(*text, start, at - start).append(to);
    start = at + from.size();
  }
  out.append(*text, start, std::string::npos);
  *text = std::move(out);
}


}  // namespace

Status UploadReceiver::Impl::Bind(const std::string& endpoint, std::string* bound) {
  try {
    router_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    // A frame far past the chunk size cannot be a chunk: zmq drops such a peer instead of buffering it.
    router_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(settings_.chunk_size) * 2 + 65536);
    router_->set(zmq::sockopt::handshake_ivl, static_cast<int>(std::clamp<int64_t>(settings_.handshake_timeout_ms, 1, INT32_MAX)));
    const Status secured = access_.Secure(context_, *router_);
    if (!secured.ok()) {
      router_.reset();
      return secured;
    }
    ConnectionLimits limits;
    limits.max_connections = std::max<uint32_t>(settings_.max_connections, 1);
    limits.max_per_owner = static_cast<uint32_t>(ClientShare(limits.max_connections));
    limits.idle_timeout_ms = settings_.idle_connection_timeout_ms;
    // Before binding, so that the guard sees every connection from the first.
    connections_ = std::make_unique<ConnectionGuard>(context_, *router_, access_.curve(), limits,
                                                     [this](const std::string& line) { Log(line); });
    router_->bind(endpoint);
    *bound = router_->get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    connections_.reset();
    router_.reset();
    return Status::IOError("cannot bind upload receiver to " + endpoint + ": " + e.what());
  }
  return Status::Ok();
}

Status UploadReceiver::Impl::Start() {
  if (started_) return Status::Ok();
  if (router_ == nullptr) return Status::Internal("upload receiver: Start before a successful Bind");
  PLANB_RETURN_IF_ERROR(MakeDirectories(settings_.receive_dir));
  ClearStaleParts();
  PLANB_RETURN_IF_ERROR(worker_.Start(context_).WithContext("upload receiver"));
  Status status = read_worker_.Start(context_).WithContext("upload receiver");
  if (status.ok()) status = snapshot_worker_.Start(context_).WithContext("upload receiver");
  if (!status.ok()) {
    snapshot_worker_.Stop();
    read_worker_.Stop();
    worker_.Stop();
    return status;
  }
  started_ = true;
  return Status::Ok();
}

Status UploadReceiver::Impl::Run(const std::atomic<bool>& stop) {
  if (router_ == nullptr) return Status::Internal("upload receiver: Run before a successful Bind");
  PLANB_RETURN_IF_ERROR(Start());
  Status status = Serve(stop);
  started_ = false;
  snapshot_worker_.Stop();
  read_worker_.Stop();
  worker_.Stop();
  TakeAcceptResults();
  DropAll();
  return status;
}

Status UploadReceiver::Impl::Serve(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    Clock::time_point now = Clock::now();
    auto wait = kMaxPollWait;
    for (const Waiter& w : waiters_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(w.deadline - now);
      wait = std::max(std::chrono::milliseconds(0), std::min(wait, left));
    }
    zmq::socket_t* zap = access_.zap_socket();
    zmq::pollitem_t items[] = {{router_->handle(), 0, ZMQ_POLLIN, 0},
                               {worker_.wake_socket().handle(), 0, ZMQ_POLLIN, 0},
                               {read_worker_.wake_socket().handle(), 0, ZMQ_POLLIN, 0},
                               {snapshot_worker_.wake_socket().handle(), 0, ZMQ_POLLIN, 0},
                               {connections_->events().handle(), 0, ZMQ_POLLIN, 0},
                               {zap == nullptr ? nullptr : zap->handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, zap == nullptr ? 5 : 6, wait);
      // Only the sockets that became readable are read: every zmq receive, even one that finds nothing, makes a
      // poll(2) of its own, and a turn that read all six cost a remote lookup a sixth of its round trip.
      const auto ready = [&items](size_t i) { return (items[i].revents & ZMQ_POLLIN) != 0; };
      // New connections are counted (or refused) before their requests.
      if (ready(4)) connections_->TakeEvents(Clock::now());
      if (settings_.metrics != nullptr) settings_.metrics->ConnectionsHeld(connections_->Open());
      if (zap != nullptr && ready(5)) access_.ServeZap();  // handshakes first: a connection waits for its answer
      if (ready(1)) TakeAcceptResults();  // these also drain the wake-up sockets
      if (ready(2)) TakeReadResults();
      if (ready(3)) TakeSnapshotResults();
      for (int i = 0; i < kMaxMessagesPerTurn && (items[0].revents & ZMQ_POLLIN); ++i) {
        std::vector<zmq::message_t> frames;
        if (!zmq::recv_multipart(*router_, std::back_inserter(frames), zmq::recv_flags::dontwait)) break;
        HandleMessage(frames);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal (the stop flag may have been set by its handler)
      return Status::IOError(std::string("upload receiver: ") + e.what());
    }
    now = Clock::now();
    ServeWaiters(now);
    ExpireIdle(now);
    connections_->CloseIdle(now);
  }
  return Status::Ok();
}

void UploadReceiver::Impl::HandleMessage(std::vector<zmq::message_t>& frames) {
  if (frames.empty()) return;
  std::string routing_id(View(frames[0]));
  SetSender("");  // until the header is read and checked, the sender is its routing id (Sender())
  handling_upload_ = false;
  if (frames.size() < 2) {
    ReplyError(routing_id, 0, Status::Invalid("message has no header frame"), "");
    return;
  }
  // Counted for its connection's owner (with keys: its client); a client past its share of the connections has
  // this one closed, and its request dropped.
  const char* user = zmq_msg_gets(frames[1].handle(), "User-Id");
  if (!connections_->Seen(zmq_msg_get(frames[1].handle(), ZMQ_SRCFD),
                          user == nullptr ? std::string_view() : std::string_view(user), Clock::now())) {
    return;
  }
  protocol::Header header;
  Status status = protocol::DecodeHeader(View(frames[1]), &header);
  if (!status.ok()) return ReplyError(routing_id, header.request_id, status, "");
  if (header.version != protocol::kProtocolVersion) {
    return ReplyError(routing_id, header.request_id,
                      Status::NotSupported("unsupported protocol version " + std::to_string(header.version) +
                                           " (this node speaks " + std::to_string(protocol::kProtocolVersion) +
                                           (header.version < protocol::kProtocolVersion ? "; upgrade the client)"
                                                                                        : "; upgrade this node)")),
                      "");
  }
  if (!protocol::IsRequest(header.command)) {
    return ReplyError(routing_id, header.request_id,
                      Status::NotSupported("unknown " + protocol::CommandName(header.command) +
                                           " (this node takes BEGIN, CHUNK, COMMIT, STATUS, READ, SNAPSHOT, FETCH, PREPARE, LIST_MERGED, "
                                           "OFFER_BATCH and SNAPSHOT_SINCE)"),
                      "");
  }
  const auto command = static_cast<Command>(header.command);
  handling_upload_ = command == Command::kBegin || command == Command::kChunk || command == Command::kCommit;
  const size_t expected = command == Command::kChunk ? 3 : 2;  // frames after the routing id
  if (frames.size() - 1 != expected) {
    return ReplyError(routing_id, header.request_id,
                      Status::Invalid(protocol::CommandName(header.command) + " message has " +
                                      std::to_string(frames.size() - 1) + " frames, needs " + std::to_string(expected) +
                                      " (header, payload" + (expected == 3 ? ", chunk bytes)" : ")")),
                      "");
  }
  MapScope scope;
  // PREPARE only reads: a peer (right `node`) may ask it too (`planb stores --cluster` on a storage node); its
  // maps are checked against `upload` for everyone else (HandlePrepare).
  const bool peer_prepare = command == Command::kPrepare && access_.Holds(frames[1], Right::kNode);
  if (!peer_prepare) status = access_.Check(frames[1], RightOf(command), nullptr, &scope);
  if (!status.ok()) return ReplyRefused(routing_id, header.request_id, status, RightOf(command));
  SetSender(access_.Identify(frames[1], routing_id));
  sender_client_ = access_.ClientName(frames[1]);
  std::string_view payload = View(frames[2]);
  switch (command) {
    case Command::kBegin:
      return HandleBegin(routing_id, header.request_id, payload, std::move(scope));
    case Command::kChunk:
      return HandleChunk(routing_id, header.request_id, payload, View(frames[3]));
    case Command::kCommit:
      return HandleCommit(routing_id, header.request_id, payload);
    case Command::kStatus:
      return HandleStatus(routing_id, header.request_id, payload);
    case Command::kRead:
      return HandleRead(routing_id, header.request_id, payload, std::move(scope), sender_);
    case Command::kSnapshot:
      return HandleSnapshot(routing_id, header.request_id, payload, frames[1]);
    case Command::kSnapshotSince:
      return HandleSnapshotSince(routing_id, header.request_id, payload, frames[1]);
    case Command::kFetch:
      return HandleFetch(routing_id, header.request_id, payload, sender_);
    case Command::kPrepare:
      return HandlePrepare(routing_id, header.request_id, payload, frames[1]);
    case Command::kListMerged:
      return HandleListMerged(routing_id, header.request_id, payload, frames[1]);
    case Command::kOfferBatch:
      return HandleOfferBatch(routing_id, header.request_id, payload, frames[1]);
    default:
      return;
  }
}

void UploadReceiver::Impl::Reply(const std::string& routing_id, Command command, uint64_t request_id,
                                 const std::string& payload) {
  // ROUTER sends never block: a reply to a sender that has gone away is dropped, as it should be.
  router_->send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(zmq::buffer(protocol::EncodeHeader(command, request_id)),
                zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(zmq::buffer(payload), zmq::send_flags::dontwait);
}

void UploadReceiver::Impl::ReplyCounted(const std::string& routing_id, Command command, uint64_t request_id,
                                        const std::string& client, std::string payload) {
  router_->send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(zmq::buffer(protocol::EncodeHeader(command, request_id)),
                zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(backlog_.Message(client, std::move(payload)), zmq::send_flags::dontwait);
}

Status UploadReceiver::Impl::CheckBacklog(const std::string& client, uint64_t bytes) const {
  uint64_t unread = 0;
  if (backlog_.Admits(client, bytes, &unread)) return Status::Ok();
  return Status(Code::kFull, "busy: " + std::to_string(unread) +
                                 " bytes of replies to this client are not yet read (max_unread_reply_bytes " +
                                 std::to_string(backlog_.max_per_client()) + "); read them before asking for more");
}

void UploadReceiver::Impl::ReplyWithData(const std::string& routing_id, Command command, uint64_t request_id,
                                         const std::string& payload, zmq::message_t data) {
  router_->send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(zmq::buffer(protocol::EncodeHeader(command, request_id)),
                zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(zmq::buffer(payload), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_->send(data, zmq::send_flags::dontwait);
}

void UploadReceiver::Impl::ReplyError(const std::string& routing_id, uint64_t request_id, const Status& status,
                                      const std::string& batch_id, const Status* logged) {
  const Status& line = logged != nullptr ? *logged : status;
  if (handling_upload_ && settings_.metrics != nullptr) settings_.metrics->UploadRefused(status);
  if (batch_id.empty()) {
    LogPeerError("upload error", line, "from " + Sender(routing_id), "");
  } else {
    LogPeerError("upload error", line, "for batch " + LogValue(batch_id), Sender(routing_id));
  }
  const Status told = ForSender(status, nullptr);  // the log above keeps the node's paths; the sender does not
  Reply(routing_id, Command::kError, request_id,
        protocol::EncodeError({static_cast<uint16_t>(told.code()), told.message()}));
}

Status UploadReceiver::Impl::ForSender(const Status& status, const UploadSession* upload) const {
  return Status(status.code(), ForSenderText(status.message(), upload));
}

std::string UploadReceiver::Impl::ForSenderText(std::string message, const UploadSession* upload) const {
  const auto replace_all = [&message](const std::string& from, const std::string& to) { ReplaceAll(&message, from, to); };
  // DiskRoom::Describe (a directory, how much its disk has free): the log keeps it, a sender does not need it.
  static const std::regex room("[^ ;,]* has [0-9]+ bytes free and keeps [0-9]+ free \\(the larger of [0-9]+ bytes "
                               "and 1% of the filesystem\\)");
  message = std::regex_replace(message, room, "the node has too little room (its log says how much)");
  // The part file's name is the upload's token; the directories are the node's business.
  if (upload != nullptr) replace_all(upload->part_path(), "the upload of batch " + upload->batch_id());
  replace_all(settings_.receive_dir + "/", "");
  replace_all(settings_.receive_dir, "the node's receive directory");
  // Anything else under the home (shards, snapshots, staging): named relative to it.
  if (settings_.home_dir.size() > 1) replace_all(settings_.home_dir, "<home>");
  return message;
}

void UploadReceiver::Impl::ReplyRefused(const std::string& routing_id, uint64_t request_id, const Status& status,
                                        Right right) {
  if (settings_.metrics != nullptr) settings_.metrics->ClientRefused(RightName(right));
  Reply(routing_id, Command::kError, request_id,
        protocol::EncodeError({static_cast<uint16_t>(status.code()), status.message()}));
}

void UploadReceiver::Impl::LogPeerError(const std::string& what, const Status& status, const std::string& about,
                                        const std::string& from) {
  // The kind: the code and the message's words before its first quote or digit, where the peer's values and
  // sizes start ("map '...' is not in the config", "busy: 64 ..."), so that varying them makes no new kind.
  const std::string& message = status.message();
  const size_t fixed = std::min<size_t>(message.find_first_of("'0123456789"), 32);
  // Per client too (with keys: its name), so that one client's flood does not hide another's errors; in
  // plaintext every connection is alike, so all share the kind.
  const std::string kind = sender_owner_ + " " + what + " " + std::to_string(static_cast<int>(status.code())) + " " +
                           message.substr(0, fixed);
  uint64_t suppressed = 0;
  if (!error_limiter_.Admit(kind, Clock::now(), &suppressed)) return;
  Log(what + " " + about + ": " + LogValue(status.message(), 2 * kLogValueCap) +
      (from.empty() ? "" : " (from " + from + ")") +
      (suppressed > 0 ? " (" + std::to_string(suppressed) + " similar suppressed)" : ""));
}

void UploadReceiver::Impl::TakeAcceptResults() {
  for (AcceptWorker::Result& result : worker_.TakeResults()) {
    auto it = uploads_.find(result.token);
    if (it == uploads_.end()) continue;
    UploadSession* upload = it->second.get();
    upload->last_touch = Clock::now();
    if (result.status.ok() && !result.already_merged.empty()) {
      // Nothing staged: the batch is in already (a retried load). The part file is the receiver's to remove.
      upload->RemovePart();
      upload->state = UploadState::kAlreadyMerged;
      upload->merged_as = result.already_merged;
      if (settings_.metrics != nullptr) settings_.metrics->UploadAlreadyMerged();
      Log("batch (id " + LogValue(upload->batch_id()) + ") from " + upload->client +
          " is already merged here (as " + LogValue(result.already_merged) + "); not staged again");
    } else if (result.status.ok()) {
      upload->state = UploadState::kStaged;
      upload->sequence = result.sequence;
      if (settings_.metrics != nullptr) settings_.metrics->UploadStaged();
      // Named by who sent it, not by the batch id, which is the sender's to choose.
      Log("staged batch " + std::to_string(result.sequence) + " (id " + LogValue(upload->batch_id()) + ") from " +
          upload->client + " (" + std::to_string(upload->begin().total_size) + " bytes)");
    } else {
      // The sink's status names the zip and what is wrong with it; the sender gets it with its batch named
      // instead of the node's part file, and without the node's paths and free space (ForSender).
      upload->RemovePart();
      upload->state = UploadState::kFailed;
      upload->error = ForSender(result.status, upload);
      if (settings_.metrics != nullptr) settings_.metrics->UploadRefused(result.status);
      LogPeerError("upload error", result.status, "for batch " + LogValue(upload->batch_id()), upload->client);
    }
  }
}

void UploadReceiver::Impl::TakeReadResults() {
  handling_upload_ = false;
  for (ReadWorker::Result& result : read_worker_.TakeResults()) {
    reads_.Finished(result.client);
    AnswerRead(result);
  }
  StartReads();
}

void UploadReceiver::Impl::AnswerRead(ReadJobResult& result) {
  SetSender(result.client);  // for the log line of an error: the message being answered is that client's
  if (!result.status.ok()) return ReplyError(result.routing_id, result.request_id, result.status, "");
  // A read's messages may name the node's files (a shard's path, its home): said relative to the home. (Only
  // that: a lookup's stderr can be megabytes of "no key" lines, too long for the patterns of ForSender.)
  if (settings_.home_dir.size() > 1) ReplaceAll(&result.result.err, settings_.home_dir, "<home>");
  std::string payload = protocol::EncodeReadResult(result.result);
  // Checked again now that the size is known: reads admitted together must not pile up unread either.
  const Status room = CheckBacklog(result.client, payload.size());
  if (!room.ok()) return ReplyError(result.routing_id, result.request_id, room, "");
  ReplyCounted(result.routing_id, Command::kReadResult, result.request_id, result.client, std::move(payload));
}

void UploadReceiver::Impl::RunReadHere(ReadJob job) {
  ReadJobResult result{std::move(job.routing_id), job.request_id, Status(), {}, job.client};
  try {
    result.status = sink_.ExecuteRead(job.request, job.scope, &result.result);
  } catch (const std::exception& e) {  // as the read worker does: the request fails, the loop goes on
    result.status = Status::Internal("READ lookup of map " + LogValue(job.request.map) + ": " + e.what());
  }
  AnswerRead(result);
}

void UploadReceiver::Impl::StartReads() {
  for (ReadJob& job : reads_.TakeStartable()) read_worker_.Submit(std::move(job));
}

void UploadReceiver::Impl::ServeWaiters(Clock::time_point now) {
  SetSender("");  // answers to held requests: the log names their routing ids
  // The loop turns once per batch of chunks under load: ask the sink about merges only every so often.
  const bool ask_sink = now >= next_merge_check_;
  if (ask_sink) next_merge_check_ = now + kMergeCheckInterval;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    auto upload = uploads_.find(it->token);
    protocol::StatusReply reply;
    if (upload == uploads_.end()) {
      FindUpload(it->routing_id, it->request_id, Command::kStatus, it->token, "");
    } else if (Settled(upload->second.get(), &reply, ask_sink || now >= it->deadline) || now >= it->deadline) {
      Reply(it->routing_id, Command::kStatusReply, it->request_id, protocol::EncodeStatusReply(reply));
    } else {
      ++it;
      continue;
    }
    it = waiters_.erase(it);
  }
}

void UploadReceiver::Impl::ExpireIdle(Clock::time_point now) {
  const auto expiry = std::chrono::milliseconds(settings_.idle_upload_expiry_ms);
  const auto finished_expiry =
      std::chrono::milliseconds(std::max(settings_.idle_upload_expiry_ms, settings_.finished_upload_expiry_ms));
  for (auto it = uploads_.begin(); it != uploads_.end();) {
    UploadSession& upload = *it->second;
    const auto idle = now - upload.last_touch;
    // A verifying upload belongs to the worker until its result is in.
    if (upload.state == UploadState::kVerifying) {
      ++it;
      continue;
    }
    const bool receiving = upload.state == UploadState::kReceiving;
    std::string why;
    if (idle >= (receiving ? expiry : finished_expiry)) {
      why = "nothing for " + std::to_string(settings_.idle_upload_expiry_ms) + " ms: upload_idle_timeout";
    } else if (receiving) {
      why = upload.pace.Check(now, upload.received(), upload.begin().total_size - upload.received(), expiry,
                              settings_.min_transfer_rate);
    }
    if (why.empty()) {
      ++it;
      continue;
    }
    if (receiving) {
      Log("dropping " + std::string(idle >= expiry ? "idle" : "slow") + " partial upload of batch " +
          LogValue(upload.batch_id()) + " from " + upload.client + " (" + std::to_string(upload.received()) + " of " +
          std::to_string(upload.begin().total_size) + " bytes received, " + why + ")");
      upload.RemovePart();
    }
    it = uploads_.erase(it);
  }
  for (const ServedSnapshots::Closed& closed : served_.ExpireIdle(now, expiry, settings_.min_transfer_rate)) {
    Log("closed " + closed.how + " snapshot of " + closed.map + " served to " + closed.client + " (" + closed.why + ")");
  }
}

void UploadReceiver::Impl::DropAll() {
  size_t partial = 0;
  for (auto& [token, upload] : uploads_) {
    if (upload->state == UploadState::kReceiving || upload->state == UploadState::kVerifying) ++partial;
    upload->RemovePart();
  }
  if (partial > 0) Log("upload receiver stopping: dropped " + std::to_string(partial) + " unfinished upload(s)");
  uploads_.clear();
  waiters_.clear();
  served_.Clear();
}

void UploadReceiver::Impl::ClearStaleParts() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(settings_.receive_dir, ec)) {
    if (entry.path().extension() == ".part") {
      std::filesystem::remove(entry.path(), ec);
      Log("removed stale partial upload " + entry.path().string());
    }
  }
}

UploadReceiver::UploadReceiver(zmq::context_t& context, ReceiverSettings settings, BatchSink& sink, LogFunction log)
    : impl_(new Impl(context, std::move(settings), sink, std::move(log))) {}

UploadReceiver::~UploadReceiver() { delete impl_; }

Status UploadReceiver::Bind(const std::string& endpoint, std::string* bound) { return impl_->Bind(endpoint, bound); }

Status UploadReceiver::Start() { return impl_->Start(); }

Status UploadReceiver::Run(const std::atomic<bool>& stop) { return impl_->Run(stop); }

}  // namespace planb
