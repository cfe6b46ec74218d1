#include "host/transfer/upload_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "host/common/bulk_xxh3.h"
#include "host/transfer/protocol.h"
#include "host/transfer/request_channel.h"

namespace planb {

namespace {

using Clock = RequestChannel::Clock;
using Reply = RequestChannel::Reply;
using protocol::Command;
using protocol::UploadState;

// The start of the ERROR message of a node that has too many uploads in progress (docs/protocol.md).
constexpr char kBusyPrefix[] = "busy: ";

// How one attempt (one connection) ended.
struct AttemptEnd {
  enum Kind { kDone, kFinal, kRetry };
  Kind kind = kDone;
  Status status;           // kFinal: the result; kRetry: a transport error's text
  bool timed_out = false;  // kRetry
};

Status NodeStatus(uint16_t code, const std::string& message) {
  Code c = protocol::CodeFromWire(code);
  return Status(c == Code::kOk ? Code::kInternal : c, message);
}

class Uploader {
 public:
  Uploader(zmq::context_t& context, const UploadTarget& target, const std::string& zip_path,
           const std::string& batch_id, const UploadSettings& settings, UploadOutcome* outcome,
           const std::function<void(uint64_t)>& progress)
      : context_(context),
        target_(target),
        zip_path_(zip_path),
        batch_id_(batch_id),
        settings_(settings),
        outcome_(outcome),
        progress_(progress) {}
  ~Uploader() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Run();

 private:
  Status Prepare();
  Status ReadAt(uint64_t offset, void* out, size_t size);
  // The checksum COMMIT declares is made from the bytes as they are sent, so that the zip is read once (it was read
  // a second time before, to hash it for BEGIN). `data` holds the zip's bytes at `offset`: those that continue
  // the hash are added. A resume from past the hash (the node kept bytes an earlier process sent) reads the gap.
  void HashSent(uint64_t offset, const void* data, size_t size);
  Status HashUpTo(uint64_t end);
  AttemptEnd Attempt();
  // Each returns true to go on; false with `end` filled when the attempt is over.
  bool Begin(protocol::ReadyReply* ready, AttemptEnd* end);
  bool Transfer(const protocol::ReadyReply& ready, AttemptEnd* end);
  bool CommitAndWait(Token token, AttemptEnd* end);

  // Sends one request and sets `step_` to the reply it waits for; false when the socket would not take it
  // within the request timeout. zmq::error_t on transport errors goes up to Attempt.
  bool Send(Command command, const std::string& payload, zmq::message_t* chunk, uint64_t* request_id) {
    step_ = "the node's reply to " + protocol::CommandName(static_cast<uint16_t>(command));
    return channel_->Send(command, payload, chunk, request_id);
  }
  // Send + Await for a single request.
  bool Exchange(Command command, const std::string& payload, Reply* reply, AttemptEnd* end);

  // A timeout, or a transport error described by `detail`; the message is built from `step_` in Run.
  static AttemptEnd Retry(bool timed_out, const std::string& detail = "") {
    return {AttemptEnd::kRetry, Status::IOError(detail), timed_out};
  }
  static AttemptEnd Final(Status status) { return {AttemptEnd::kFinal, std::move(status), false}; }
  AttemptEnd Unexpected(const Reply& reply, const char* request);
  Clock::time_point Deadline() const { return Clock::now() + std::chrono::milliseconds(settings_.request_timeout_ms); }

  zmq::context_t& context_;
  const UploadTarget& target_;
  const std::string& zip_path_;
  const std::string& batch_id_;
  const UploadSettings& settings_;
  UploadOutcome* outcome_;
  const std::function<void(uint64_t)>& progress_;

  int fd_ = -1;
  uint64_t size_ = 0;
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> hash_{XXH3_createState(), &XXH3_freeState};
  uint64_t hashed_ = 0;  // the hash covers the zip's bytes [0, hashed_)
  uint64_t tail_hash_ = 0;
  std::unique_ptr<RequestChannel> channel_;
  uint64_t next_request_id_ = 1;
  std::string step_;         // what the attempt waits for now, for the timeout message
  bool progressed_ = false;  // the node moved the upload on since the last failed attempt
  uint64_t most_acked_ = 0;
  int best_state_ = -1;
  // Whether an earlier attempt of this upload sent COMMIT: a node that then answers a rejoin "already merged"
  // with a staging sequence is telling this upload that its own batch has merged (see CommitAndWait).
  bool committed_before_ = false;
  bool committed_ = false;
};

Status Uploader::Run() {
  PLANB_RETURN_IF_ERROR(Prepare());
  const int max_failures = std::max(1, settings_.send_part_attempts);
  int failures = 0;
  for (;;) {
    ++outcome_->attempts;
    committed_before_ = committed_;
    AttemptEnd end = Attempt();
    channel_.reset();  // linger 0: whatever is still queued goes with it
    if (end.kind == AttemptEnd::kDone) return Status::Ok();
    if (end.kind == AttemptEnd::kFinal) return end.status;
    // Only failures in a row without progress count: a long upload over a flaky link may reconnect many times.
    failures = progressed_ ? 1 : failures + 1;
    progressed_ = false;
    const std::string head = end.timed_out ? "timed out" : "failed";
    const std::string tail = end.timed_out ? "" : ": " + end.status.message();
    if (failures >= max_failures) {
      return Status::IOError(head + " after " + std::to_string(failures) + " attempts (request_timeout " +
                             std::to_string(settings_.request_timeout_ms) + " ms) waiting for " + step_ + tail);
    }
    if (settings_.on_retry) {
      settings_.on_retry(outcome_->attempts + 1, Status::IOError(head + " waiting for " + step_ + tail));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(settings_.retry_delay_ms));
  }
}

Status Uploader::Prepare() {
  fd_ = ::open(zip_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return Status::IOError("cannot open batch zip " + zip_path_ + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::IOError("cannot stat " + zip_path_ + ": " + std::strerror(errno));
  size_ = static_cast<uint64_t>(st.st_size);
  if (hash_ == nullptr || XXH3_64bits_reset(hash_.get()) != XXH_OK) return Status::Internal("out of memory for a hash");
  // BEGIN names the zip by its tail (protocol::kTailBytes: its central directory); the whole is hashed as it goes.
  std::string tail(static_cast<size_t>(std::min(size_, protocol::kTailBytes)), '\0');
  PLANB_RETURN_IF_ERROR(ReadAt(size_ - tail.size(), tail.data(), tail.size()));
  tail_hash_ = XXH3_64bits(tail.data(), tail.size());
  return Status::Ok();
}

void Uploader::HashSent(uint64_t offset, const void* data, size_t size) {
  if (offset > hashed_ || offset + size <= hashed_) return;  // a gap (HashUpTo fills it) or bytes hashed already
  const size_t skip = static_cast<size_t>(hashed_ - offset);
  XXH3_64bits_update(hash_.get(), static_cast<const char*>(data) + skip, size - skip);
  hashed_ = offset + size;
}

Status Uploader::HashUpTo(uint64_t end) {
  std::vector<char> block;
  while (hashed_ < end) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(end - hashed_, uint64_t{1} << 20));
    block.resize(n);
    PLANB_RETURN_IF_ERROR(ReadAt(hashed_, block.data(), n));
    HashSent(hashed_, block.data(), n);
  }
  return Status::Ok();
}

Status Uploader::ReadAt(uint64_t offset, void* out, size_t size) {
  char* p = static_cast<char*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("reading " + zip_path_ + ": " + std::strerror(errno));
    if (n == 0) {
      return Status::IOError("batch zip " + zip_path_ + " ends at offset " + std::to_string(offset) + ", before the " +
                             std::to_string(size_) + " bytes it had when the upload began");
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

AttemptEnd Uploader::Attempt() {
  AttemptEnd end;
  step_ = "a connection to " + target_.endpoint;
  try {
    try {
      channel_ =
          std::make_unique<RequestChannel>(context_, target_, settings_.request_timeout_ms, &next_request_id_);
    } catch (const zmq::error_t& e) {
      return Final(Status::Invalid("cannot connect to " + target_.endpoint + ": " + e.what()));
    }
    protocol::ReadyReply ready;
    if (Begin(&ready, &end) && Transfer(ready, &end)) CommitAndWait(ready.token, &end);
    return end;
  } catch (const zmq::error_t& e) {
    return Retry(false, std::string("zmq: ") + e.what());
  }
}

bool Uploader::Begin(protocol::ReadyReply* ready, AttemptEnd* end) {
  protocol::BeginRequest begin{batch_id_, size_, tail_hash_,
                               settings_.synchronise_merge ? protocol::kFlagSynchroniseMerge : 0u};
  Reply reply;
  if (!Exchange(Command::kBegin, protocol::EncodeBegin(begin), &reply, end)) return false;
  if (reply.command != static_cast<uint16_t>(Command::kReady)) {
    *end = Unexpected(reply, "BEGIN");
    return false;
  }
  Status status = protocol::DecodeReady(reply.payload, ready);
  if (status.ok() && ready->resume_offset > size_) {
    status = Status::Invalid("READY with resume offset " + std::to_string(ready->resume_offset) + " for a zip of " +
                             std::to_string(size_) + " bytes");
  }
  // The chunk size sets the memory of every message in flight: a node is not trusted with more than the protocol's
  // maximum, and a chunk of 0 bytes would never finish.
  if (status.ok() && (ready->chunk_size == 0 || ready->chunk_size > protocol::kMaxUploadChunkSize)) {
    status = Status::Invalid("READY with chunk size " + std::to_string(ready->chunk_size) + " (must be 1 to " +
                             std::to_string(protocol::kMaxUploadChunkSize) + " bytes)");
  }
  if (!status.ok()) {
    *end = Final(status.WithContext("bad reply from the node"));
    return false;
  }
  return true;
}

bool Uploader::Transfer(const protocol::ReadyReply& ready, AttemptEnd* end) {
  const uint64_t chunk_size =
      settings_.chunk_size == 0 ? ready.chunk_size : std::min(settings_.chunk_size, ready.chunk_size);
  const size_t window = std::max<uint32_t>(1, std::min(settings_.window, ready.window));
  struct InFlight {
    uint64_t request_id;
    uint64_t end;
    Clock::time_point sent;
  };
  std::deque<InFlight> in_flight;
  uint64_t acked = ready.resume_offset;
  uint64_t next = acked;
  // Bytes the node kept from before this process (a load run again) are hashed here; those it kept from an earlier
  // attempt of this one were hashed when they were sent.
  if (Status hashed = HashUpTo(acked); !hashed.ok()) {
    *end = Final(hashed);
    return false;
  }
  Clock::time_point last_reply = Clock::now();
  if (progress_) progress_(acked);
  while (acked < size_) {
    // The node paces us: at most `window` chunks unacknowledged, each ack lets one more go. Each chunk is read
    // straight into the zmq message that carries it, so memory stays at window * chunk_size.
    while (in_flight.size() < window && next < size_) {
      size_t n = static_cast<size_t>(std::min(chunk_size, size_ - next));
      zmq::message_t data(n);
      Status status = ReadAt(next, data.data(), n);
      if (!status.ok()) {
        *end = Final(status);
        return false;
      }
      HashSent(next, data.data(), n);
      uint64_t id = 0;
      if (!Send(Command::kChunk, protocol::EncodeChunk({ready.token, next}), &data, &id)) {
        *end = Retry(true);
        return false;
      }
      outcome_->bytes_sent += n;
      in_flight.push_back({id, next + n, Clock::now()});
      next += n;
    }
    step_ = "the acknowledgement of the chunk at offset " + std::to_string(acked);
    // The oldest chunk's ack is due request_timeout after it was sent, or after the last ack (a window's worth
    // of chunks queued on a slow link takes its time).
    Clock::time_point deadline =
        std::max(in_flight.front().sent, last_reply) + std::chrono::milliseconds(settings_.request_timeout_ms);
    Reply reply;
    bool timed_out = false;
    auto awaited = [&in_flight](uint64_t id) {
      return std::any_of(in_flight.begin(), in_flight.end(), [id](const InFlight& f) { return f.request_id == id; });
    };
    Status status = channel_->Await(deadline, awaited, &reply, &timed_out);
    if (!status.ok()) {
      *end = channel_->refused() ? Retry(false, status.message()) : Final(status);
      return false;
    }
    if (timed_out) {
      *end = Retry(true);
      return false;
    }
    if (reply.command != static_cast<uint16_t>(Command::kChunkAck)) {
      *end = Unexpected(reply, "CHUNK");
      return false;
    }
    protocol::ChunkAck ack;
    status = protocol::DecodeChunkAck(reply.payload, &ack);
    if (status.ok() && (ack.token != ready.token || ack.received_total > size_)) {
      status = Status::Internal("CHUNK_ACK for " + std::to_string(ack.received_total) + " bytes of a " +
                                std::to_string(size_) + "-byte zip (or for another upload)");
    }
    if (!status.ok()) {
      *end = Final(status.WithContext("bad reply from the node"));
      return false;
    }
    last_reply = Clock::now();
    if (ack.received_total > acked) {
      acked = ack.received_total;
      if (acked > most_acked_) {
        most_acked_ = acked;
        progressed_ = true;
      }
      if (progress_) progress_(acked);
    }
    in_flight.erase(
        std::remove_if(in_flight.begin(), in_flight.end(), [&](const InFlight& f) { return f.end <= acked; }),
        in_flight.end());
    if (in_flight.empty() && next > acked) next = acked;  // the node holds less than we sent: go on from there
  }
  return true;
}

bool Uploader::CommitAndWait(Token token, AttemptEnd* end) {
  Reply reply;
  committed_ = true;
  // Every byte is hashed by now, unless the node held the whole zip already (a rejoin): then it is read here.
  if (Status hashed = HashUpTo(size_); !hashed.ok()) {
    *end = Final(hashed);
    return false;
  }
  const uint64_t checksum = XXH3_64bits_digest(hash_.get());
  if (!Exchange(Command::kCommit, protocol::EncodeCommit({token, checksum}), &reply, end)) return false;
  const char* request = "COMMIT";
  const uint32_t hold_ms = static_cast<uint32_t>(std::clamp<int64_t>(settings_.request_timeout_ms / 2, 0, 1 << 30));
  for (;;) {
    if (reply.command != static_cast<uint16_t>(Command::kStatusReply)) {
      *end = Unexpected(reply, request);
      return false;
    }
    protocol::StatusReply status_reply;
    Status status = protocol::DecodeStatusReply(reply.payload, &status_reply);
    if (!status.ok()) {
      *end = Final(status.WithContext("bad reply from the node"));
      return false;
    }
    const int rank = static_cast<int>(status_reply.state);
    if (rank > best_state_) {
      best_state_ = rank;
      progressed_ = true;
    }
    outcome_->sequence = status_reply.sequence;
    switch (status_reply.state) {
      case UploadState::kStaged:
        if (!settings_.synchronise_merge) return true;
        break;
      case UploadState::kMerged:
        outcome_->merged = true;
        return true;
      case UploadState::kAlreadyMerged:
        outcome_->merged = true;
        // This upload's own batch, staged by the node from an earlier attempt's COMMIT and merged since (the
        // connection was lost before the answer): staged by this load, not before it.
        if (committed_before_ && status_reply.sequence != 0) return true;
        // A node of this version names the id; an empty name still means the batch is in.
        outcome_->sequence = 0;
        outcome_->already_merged = status_reply.message.empty() ? batch_id_ : status_reply.message;
        return true;
      case UploadState::kFailed:
      case UploadState::kMergeFailed:
        *end = Final(NodeStatus(status_reply.code, status_reply.message));
        return false;
      case UploadState::kReceiving:
        *end = Final(Status::Internal("the node reports batch " + batch_id_ + " still receiving after COMMIT"));
        return false;
      case UploadState::kVerifying:
        break;
    }
    // Long poll: the node holds each STATUS until something changes or hold_ms passes, so this loop has no cap
    // of its own; only a node that stops answering ends it.
    request = "STATUS";
    if (!Exchange(Command::kStatus, protocol::EncodeStatus({token, hold_ms}), &reply, end)) return false;
    progressed_ = true;
  }
}

bool Uploader::Exchange(Command command, const std::string& payload, Reply* reply, AttemptEnd* end) {
  uint64_t id = 0;
  if (!Send(command, payload, nullptr, &id)) {
    *end = Retry(true);
    return false;
  }
  bool timed_out = false;
  Status status = channel_->Await(
      Deadline(), [id](uint64_t got) { return got == id; }, reply, &timed_out);
  if (!status.ok()) {
    // A refused connection is a node down or restarting: the next attempt may find it up.
    *end = channel_->refused() ? Retry(false, status.message()) : Final(status);
    return false;
  }
  if (timed_out) {
    *end = Retry(true);
    return false;
  }
  return true;
}

AttemptEnd Uploader::Unexpected(const Reply& reply, const char* request) {
  if (reply.command == static_cast<uint16_t>(Command::kError)) {
    protocol::ErrorReply error;
    Status status = protocol::DecodeError(reply.payload, &error);
    if (!status.ok()) return Final(status.WithContext("bad reply from the node"));
    // The node forgot the upload (it restarted, or the upload expired): a new BEGIN starts it again. A node with
    // too many uploads in progress says "busy:" (kFull, unlike a full disk, which is final): try again later.
    const Code code = protocol::CodeFromWire(error.code);
    if (code == Code::kNotFound) return Retry(false, error.message);
    if (code == Code::kFull && error.message.rfind(kBusyPrefix, 0) == 0) return Retry(false, error.message);
    return Final(NodeStatus(error.code, error.message));
  }
  return Final(
      Status::Internal(std::string("the node answered ") + request + " with " + protocol::CommandName(reply.command)));
}

}  // namespace

Status UploadBatch(zmq::context_t& context, const UploadTarget& target, const std::string& zip_path,
                   const std::string& batch_id, const UploadSettings& settings, UploadOutcome* outcome,
                   const std::function<void(uint64_t)>& progress) {
  UploadOutcome local;
  if (outcome == nullptr) outcome = &local;
  *outcome = UploadOutcome();
  return Uploader(context, target, zip_path, batch_id, settings, outcome, progress).Run();
}

}  // namespace planb
