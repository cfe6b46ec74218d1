// One upload as a storage node holds it while it arrives: its part file receive/<token hex>.part, the XXH3 of
// the bytes received so far (chunks arrive in order, so the hash streams and a commit never rereads the file)
// and where it stands. Owned and used by the receiver's Run thread only; the Accept worker gets only the path.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "host/config/config.h"
#include "host/common/transfer_pace.h"
#include "host/transfer/protocol.h"
#include "planb/status.h"

struct XXH3_state_s;

namespace planb {

class UploadSession {
 public:
  using Clock = std::chrono::steady_clock;

  UploadSession(Token token, std::string part_path, protocol::BeginRequest begin);
  // Closes the part file; does not delete it (RemovePart does).
  ~UploadSession();
  UploadSession(const UploadSession&) = delete;
  UploadSession& operator=(const UploadSession&) = delete;

  // Creates the part file (it must not exist). kFull when the disk is full, else kIOError naming the file.
  Status Create();
  // Takes the chunk of `bytes` at `offset`. A chunk wholly below what was received (a resend after a
  // reconnect) is taken without writing; the part of a chunk above it is written. Errors name the offset:
  // a gap (offset past the received size), a chunk running past the declared size, and the disk (kFull for
  // ENOSPC, also when PLANB_FAULT=receive.disk_full; kIOError otherwise).
  Status WriteChunk(uint64_t offset, std::string_view bytes);
  // Checks that every declared byte arrived ("truncated upload: ...") and that they hash to `checksum`, the one
  // COMMIT declares ("checksum mismatch: ..."), both kCorruption, then fsyncs and closes the part file.
  Status Finish(uint64_t checksum);
  // The checksum a successful Finish took (a repeated COMMIT must declare the same).
  uint64_t committed_checksum() const { return committed_checksum_; }
  // Deletes the part file (if still there: a staged batch has moved it away).
  void RemovePart();

  Token token() const { return token_; }
  const std::string& part_path() const { return part_path_; }
  const protocol::BeginRequest& begin() const { return begin_; }
  const std::string& batch_id() const { return begin_.batch_id; }
  uint64_t received() const { return received_; }
  bool synchronise_merge() const { return (begin_.flags & protocol::kFlagSynchroniseMerge) != 0; }
  void set_flags(uint32_t flags) { begin_.flags = flags; }

  // Where the upload stands; the receiver moves it on (verifying at commit, staged/failed after Accept).
  protocol::UploadState state = protocol::UploadState::kReceiving;
  uint64_t sequence = 0;  // staged: the staging sequence from BatchSink::Accept
  Status error;           // failed: why
  std::string merged_as;  // already merged: the batch id this node had recorded
  MapScope scope;         // the maps its sender's client may upload to (the last BEGIN's, after a resume)
  // When the upload last moved on: begun, bytes received, committed, verified; for a finished one also a STATUS
  // or BEGIN about it. A receiving upload that gets only BEGINs, STATUS polls or empty chunks is not moving on
  // and expires after upload_idle_timeout, so nobody can hold a slot and its reservation by talking.
  Clock::time_point last_touch = Clock::now();
  // Who began it: `client` (ClientAccess::Identify) for the per-client bounds and log lines; `owner` (with
  // CURVE the client, in plaintext "") for who may resume, replace or address it by batch id or token.
  std::string client;
  std::string owner;
  TransferPace pace{Clock::now()};  // whether its bytes keep arriving at min_transfer_rate

 private:
  Token token_;
  std::string part_path_;
  protocol::BeginRequest begin_;
  int fd_ = -1;
  uint64_t received_ = 0;
  uint64_t committed_checksum_ = 0;
  XXH3_state_s* hash_ = nullptr;
};

}  // namespace planb
