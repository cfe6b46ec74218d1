// UploadReceiver's request handlers (BEGIN, CHUNK, COMMIT, STATUS, READ) and the upload states they move; the socket
// loop around them is in upload_receiver.cc.

#include <algorithm>
#include <chrono>

#include "host/common/disk_room.h"
#include "host/common/fault_point.h"
#include "host/common/hex.h"
#include "host/receiver/upload_receiver_impl.h"

namespace planb {

using protocol::Command;
using protocol::UploadState;

namespace {
// The most keys of a quiet lookup answered on the receiver's own thread (HandleRead). Quiet only: a lookup that
// names its misses reads a session key's other rows for the message, which is bounded by the read budget alone.
constexpr size_t kMaxKeysAnsweredInLoop = 16;
}  // namespace

void UploadReceiver::Impl::HandleBegin(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                                       MapScope scope) {
  protocol::BeginRequest begin;
  Status status = protocol::DecodeBegin(payload, &begin);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  if (!protocol::IsWireBatchId(begin.batch_id)) {
    // Not echoed: the id is the peer's, of any length and bytes.
    return ReplyError(routing_id, request_id,
                      Status::Invalid("BEGIN: a batch id of " + std::to_string(begin.batch_id.size()) +
                                      " bytes that is not valid (1 to " + std::to_string(protocol::kMaxWireBatchId) +
                                      " of A-Z a-z 0-9 . _ - : /)"),
                      "");
  }
  status = access_.CheckBatchId(sender_client_, begin.batch_id);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");  // the id is not echoed either
  if (begin.total_size > settings_.max_upload_bytes) {
    return ReplyError(routing_id, request_id,
                      Status::Invalid("batch " + begin.batch_id + " declares " + std::to_string(begin.total_size) +
                                      " bytes, more than this node accepts (max_upload_bytes " +
                                      std::to_string(settings_.max_upload_bytes) + ")"),
                      begin.batch_id);
  }
  protocol::ReadyReply ready;
  ready.chunk_size = settings_.chunk_size;
  ready.window = settings_.window;
  for (auto it = uploads_.begin(); it != uploads_.end();) {
    UploadSession& upload = *it->second;
    // Batch ids are the sender's to choose: another client's upload of the same id is not this one's to
    // resume or replace (with CURVE; in plaintext every sender may do everything, as before).
    if (upload.batch_id() != begin.batch_id || upload.state == UploadState::kFailed || upload.owner != sender_owner_) {
      ++it;
      continue;
    }
    if (upload.begin().total_size == begin.total_size && upload.begin().tail_hash == begin.tail_hash) {
      // The same zip again (the same size and central directory: every entry's CRC-32 and size): a sender
      // retrying after a lost connection. Resume where our copy ends; a committed upload answers "everything is
      // here", so the sender's COMMIT rejoins it instead of staging it twice. The COMMIT's checksum of the whole
      // zip is checked all the same.
      upload.set_flags(begin.flags);
      if (upload.state == UploadState::kReceiving) upload.scope = scope;  // what is verified: the resumer's rights
      if (upload.state != UploadState::kReceiving) upload.last_touch = Clock::now();
      // Staged by an earlier attempt (a load run again after a failure) and merged since: the batch is in, and
      // this sender did not add it now; it hears "already merged", as a fresh upload of it would.
      if (upload.state == UploadState::kStaged || upload.state == UploadState::kMerged) {
        std::string ignored;
        if (sink_.MergeStateOf(upload.sequence, &ignored) == BatchSink::MergeState::kMerged) {
          upload.state = UploadState::kAlreadyMerged;
          upload.merged_as = begin.batch_id;
        }
      }
      ready.token = upload.token();
      ready.resume_offset = upload.received();
      if (upload.state == UploadState::kReceiving && upload.received() > 0) {
        Log("resuming upload of batch " + LogValue(begin.batch_id) + " at " + std::to_string(upload.received()) + " of " +
            std::to_string(begin.total_size) + " bytes");
      }
      return Reply(routing_id, Command::kReady, request_id, protocol::EncodeReady(ready));
    }
    if (upload.state == UploadState::kReceiving) {
      Log("dropping partial upload of batch " + LogValue(begin.batch_id) + " from " + upload.client +
          ": its sender began a different zip");
      upload.RemovePart();
      it = uploads_.erase(it);
      continue;
    }
    ++it;
  }
  status = CheckRoomFor(begin);
  if (!status.ok()) return ReplyError(routing_id, request_id, ForSender(status, nullptr), begin.batch_id, &status);
  const Token token = NewToken();
  std::string path = settings_.receive_dir + "/" + token.Hex() + ".part";
  auto upload = std::make_unique<UploadSession>(token, path, begin);
  upload->scope = std::move(scope);
  upload->client = sender_;
  upload->owner = sender_owner_;
  status = upload->Create();
  if (!status.ok()) return ReplyError(routing_id, request_id, status, begin.batch_id);
  uploads_.emplace(token, std::move(upload));
  ready.token = token;
  Reply(routing_id, Command::kReady, request_id, protocol::EncodeReady(ready));
}

Status UploadReceiver::Impl::CheckRoomFor(const protocol::BeginRequest& begin) {
  // Each upload in progress holds a part file (and while receiving an fd) until it finishes or idles out: without
  // a cap, a stream of BEGINs would exhaust RLIMIT_NOFILE and the disk.
  uint32_t open = 0;
  uint64_t to_arrive = 0;  // bytes the other uploads have declared but not yet sent
  uint32_t mine = 0;       // the same for this sender's own uploads
  uint64_t mine_to_arrive = 0;
  for (const auto& [token, upload] : uploads_) {
    if (upload->state != UploadState::kReceiving && upload->state != UploadState::kVerifying) continue;
    const uint64_t left = upload->begin().total_size - upload->received();
    ++open;
    to_arrive += left;
    if (upload->client == sender_) {
      ++mine;
      mine_to_arrive += left;
    }
  }
  if (open >= settings_.max_open_uploads) {
    // The sender treats "busy:" like a lost connection: it retries after its delay (docs/protocol.md).
    return Status(Code::kFull,
                  "busy: " + std::to_string(open) + (open == 1 ? " upload" : " uploads") + " in progress, retry later");
  }
  // One client holds at most its share (max_client_share) of the slots and of the room, so that a client with a
  // narrow right cannot take them all from the others by declaring sizes and trickling bytes.
  if (mine >= ClientShare(settings_.max_open_uploads)) {
    return Status(Code::kFull, "busy: this client has " + std::to_string(mine) +
                                   " uploads in progress, the most one client may have (" +
                                   std::to_string(ClientShare(settings_.max_open_uploads)) + "); retry later");
  }
  // The part file, then as much again for the verifier's scratch while it unpacks the zip, above the margin every
  // write on the node keeps (disk_room.h). Saturating: declared sizes are bounded by max_upload_bytes, which a
  // setting may raise to anything.
  const uint64_t twice = SaturatingAdd(begin.total_size, begin.total_size);
  const uint64_t needed = SaturatingAdd(twice, to_arrive);
  const DiskRoom room = MeasureDiskRoom(settings_.receive_dir);
  if (!room.Fits(needed)) {  // final: no waiting makes this batch fit beside what is declared
    std::string message = "disk full: batch " + begin.batch_id + " needs about " + std::to_string(needed) +
                          " bytes (twice its " + std::to_string(begin.total_size) +
                          " bytes: part file and verification";
    if (to_arrive > 0) {
      message += ", plus " + std::to_string(to_arrive) + " bytes still to arrive for " + std::to_string(open) +
                 (open == 1 ? " other upload" : " other uploads");
    }
    return Status(Code::kFull, message + "); " + room.Describe());
  }
  if (room.known && room.free_bytes > room.margin) {
    // Declared bytes are claims on the room above the margin, which nothing written yet has shrunk: one
    // client's claims (its uploads' bytes still to come, and this one's twice) stay within its share of it.
    const uint64_t share = ClientShare(room.free_bytes - room.margin);
    const uint64_t held = SaturatingAdd(twice, mine_to_arrive);
    if (held > share) {
      return Status(Code::kFull, "busy: this upload needs about " + std::to_string(twice) +
                                     " bytes and this client's other uploads await " +
                                     std::to_string(mine_to_arrive) + " more, over the " + std::to_string(share) +
                                     " bytes of room one client may hold (max_client_share); retry later");
    }
  }
  return Status::Ok();
}

void UploadReceiver::Impl::HandleChunk(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                                       std::string_view bytes) {
  protocol::ChunkRequest chunk;
  Status status = protocol::DecodeChunk(payload, &chunk);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  UploadSession* upload = FindUpload(routing_id, request_id, Command::kChunk, chunk.token, sender_owner_);
  if (upload == nullptr) return;
  if (upload->state != UploadState::kReceiving) {
    return ReplyError(routing_id, request_id,
                      Status::Invalid(std::string("CHUNK for an upload that is ") +
                                      protocol::UploadStateName(upload->state) + ", no longer receiving"),
                      upload->batch_id());
  }
  const uint64_t received_before = upload->received();
  if (bytes.size() > settings_.chunk_size) {
    status = Status::Invalid("chunk of " + std::to_string(bytes.size()) + " bytes at offset " +
                             std::to_string(chunk.offset) + " is larger than this node's chunk size of " +
                             std::to_string(settings_.chunk_size) + " bytes");
  } else {
    status = upload->WriteChunk(chunk.offset, bytes);
  }
  if (!status.ok()) {
    FailUpload(upload, status);
    return ReplyError(routing_id, request_id, upload->error, upload->batch_id(), &status);
  }
  if (upload->received() > received_before) {
    upload->last_touch = Clock::now();
    if (settings_.metrics != nullptr) settings_.metrics->UploadBytesReceived(upload->received() - received_before);
  }
  if (upload->received() < upload->begin().total_size) FaultPoint("receive.mid_upload");
  Reply(routing_id, Command::kChunkAck, request_id, protocol::EncodeChunkAck({upload->token(), upload->received()}));
}

void UploadReceiver::Impl::HandleCommit(const std::string& routing_id, uint64_t request_id, std::string_view payload) {
  protocol::CommitRequest commit;
  Status status = protocol::DecodeCommit(payload, &commit);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  UploadSession* upload = FindUpload(routing_id, request_id, Command::kCommit, commit.token, sender_owner_);
  if (upload == nullptr) return;
  upload->last_touch = Clock::now();
  if (upload->state == UploadState::kReceiving) {
    status = upload->Finish(commit.checksum);
    if (!status.ok()) {
      FailUpload(upload, status);
      return ReplyError(routing_id, request_id, upload->error, upload->batch_id(), &status);
    }
    upload->state = UploadState::kVerifying;
    worker_.Submit({upload->token(), upload->part_path(), upload->batch_id(), upload->scope});
  }
  // A repeated COMMIT (its reply was lost, or a rejoin of a committed upload) answers where the upload stands, if
  // it declares what the first did.
  if (upload->state != UploadState::kFailed && commit.checksum != upload->committed_checksum()) {
    return ReplyError(routing_id, request_id,
                      Status::Invalid("COMMIT of batch " + upload->batch_id() + " declares checksum " +
                                      Hex16(commit.checksum) + ", but it was committed with " +
                                      Hex16(upload->committed_checksum())),
                      upload->batch_id());
  }
  Reply(routing_id, Command::kStatusReply, request_id, protocol::EncodeStatusReply(CurrentStatus(*upload)));
}

void UploadReceiver::Impl::HandleStatus(const std::string& routing_id, uint64_t request_id, std::string_view payload) {
  protocol::StatusRequest request;
  Status status = protocol::DecodeStatus(payload, &request);
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  UploadSession* upload = FindUpload(routing_id, request_id, Command::kStatus, request.token, sender_owner_);
  if (upload == nullptr) return;
  if (upload->state != UploadState::kReceiving) upload->last_touch = Clock::now();
  protocol::StatusReply reply;
  int64_t hold_ms = std::min<int64_t>(settings_.status_hold_ms, request.hold_ms);
  if (Settled(upload, &reply) || hold_ms <= 0) {
    return Reply(routing_id, Command::kStatusReply, request_id, protocol::EncodeStatusReply(reply));
  }
  // One held request per upload: a sender polls again only when it gave up on the previous one, so that one is
  // answered now (with the same state) rather than kept. Past the cap a request is answered at once, unheld:
  // the sender just polls again, and held requests stay bounded whatever senders do.
  auto held =
      std::find_if(waiters_.begin(), waiters_.end(), [&request](const Waiter& w) { return w.token == request.token; });
  if (held != waiters_.end()) {
    Reply(held->routing_id, Command::kStatusReply, held->request_id, protocol::EncodeStatusReply(reply));
    waiters_.erase(held);
  }
  if (waiters_.size() >= static_cast<size_t>(settings_.max_open_uploads) * kHeldStatusPerOpenUpload) {
    return Reply(routing_id, Command::kStatusReply, request_id, protocol::EncodeStatusReply(reply));
  }
  waiters_.push_back({routing_id, request_id, request.token, Clock::now() + std::chrono::milliseconds(hold_ms)});
}

void UploadReceiver::Impl::HandleRead(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                                      MapScope scope, std::string client) {
  if (payload.size() > protocol::kMaxReadRequest) {
    return ReplyError(routing_id, request_id,
                      Status::Invalid("request too large (" + std::to_string(payload.size()) + " bytes, limit " +
                                      std::to_string(protocol::kMaxReadRequest) + ")"),
                      "");
  }
  protocol::ReadRequest read;
  Status status = protocol::DecodeRead(payload, &read);
  if (status.ok()) status = CheckBacklog(client, 1);  // a client over its unread bound gets no new read
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  // A lookup of a few keys while no other read waits or runs is answered here: it costs a few B+tree descents
  // (microseconds, less than hashing one upload chunk), while handing it to a read thread and its result back
  // costs two thread wake-ups, more than the lookup (about half a remote lookup's round trip on a 2-core VM).
  // With reads queued or running it queues too, so that the fair queue's order and shares hold.
  if (read.kind == protocol::ReadKind::kLookup && read.quiet && read.keys.size() <= kMaxKeysAnsweredInLoop &&
      reads_.pending() == 0) {
    return RunReadHere({routing_id, request_id, std::move(read), std::move(scope), std::move(client)});
  }
  status = reads_.Admit({routing_id, request_id, std::move(read), std::move(scope), std::move(client)});
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  StartReads();
}

void UploadReceiver::Impl::HandlePrepare(const std::string& routing_id, uint64_t request_id, std::string_view payload,
                                         const zmq::message_t& from) {
  protocol::PrepareRequest request;
  Status status = protocol::DecodePrepare(payload, &request);
  MapScope scope;
  // PREPARE only reads (room, content versions): a peer node may ask too, as `planb stores --cluster` run on a
  // storage node does with the node's own key, which holds `node`, not `upload`.
  const bool peer = access_.Holds(from, Right::kNode);
  for (size_t i = 0; status.ok() && !peer && i < request.maps.size(); ++i) {
    status = access_.Check(from, Right::kUpload, &request.maps[i].map, &scope);
    if (!status.ok()) return ReplyRefused(routing_id, request_id, status, Right::kUpload);
  }
  protocol::PrepareReply reply;
  if (status.ok()) status = sink_.CheckLoad(request, &reply);
  if (status.ok() && reply.maps.size() != request.maps.size()) {
    status = Status::Internal("PREPARE: " + std::to_string(reply.maps.size()) + " answers for " +
                              std::to_string(request.maps.size()) + " maps");
  }
  if (!status.ok()) return ReplyError(routing_id, request_id, status, "");
  Reply(routing_id, Command::kPrepareReply, request_id, protocol::EncodePrepareReply(reply));
}

UploadSession* UploadReceiver::Impl::FindUpload(const std::string& routing_id, uint64_t request_id, Command command,
                                                Token token, const std::string& owner) {
  auto it = uploads_.find(token);
  if (it != uploads_.end() && it->second->owner == owner) return it->second.get();
  // kNotFound tells the sender that this node forgot the upload (it restarted, or the upload expired), which a
  // new BEGIN repairs; every other ERROR is final for it.
  ReplyError(routing_id, request_id,
             Status::NotFound(protocol::CommandName(static_cast<uint16_t>(command)) + " for unknown upload token " +
                              token.Shown() + " (never begun, expired, or the node restarted)"),
             "");
  return nullptr;
}

void UploadReceiver::Impl::FailUpload(UploadSession* upload, Status status) {
  upload->RemovePart();
  upload->state = UploadState::kFailed;
  upload->error = ForSender(status, upload);  // what STATUS answers from now on
}

protocol::StatusReply UploadReceiver::Impl::CurrentStatus(const UploadSession& upload) {
  protocol::StatusReply reply;
  reply.state = upload.state;
  reply.sequence = upload.sequence;
  if (upload.state == UploadState::kFailed) {
    reply.code = static_cast<uint16_t>(upload.error.code());
    reply.message = upload.error.message();
  }
  if (upload.state == UploadState::kAlreadyMerged) reply.message = upload.merged_as;
  return reply;
}

bool UploadReceiver::Impl::Settled(UploadSession* upload, protocol::StatusReply* reply, bool ask_sink) {
  *reply = CurrentStatus(*upload);
  switch (upload->state) {
    case UploadState::kVerifying:
      return false;
    case UploadState::kStaged: {
      if (!upload->synchronise_merge()) return true;
      if (!ask_sink) return false;
      std::string error;
      switch (sink_.MergeStateOf(upload->sequence, &error)) {
        case BatchSink::MergeState::kPending:
          return false;
        case BatchSink::MergeState::kMerged:
          upload->state = UploadState::kMerged;
          reply->state = UploadState::kMerged;
          return true;
        case BatchSink::MergeState::kFailed:
          // Not kept: the merge is retried and may still succeed; this sender asked to be told now.
          reply->state = UploadState::kMergeFailed;
          reply->code = static_cast<uint16_t>(Code::kInternal);
          reply->message = "batch " + upload->batch_id() + " was staged as " + std::to_string(upload->sequence) +
                           " but its merge failed: " + error;
          Log(LogValue(reply->message, 2 * kLogValueCap));
          return true;
      }
      return false;
    }
    default:  // receiving (nothing to wait for), merged, failed
      return true;
  }
}

}  // namespace planb
