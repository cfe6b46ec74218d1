#include "host/receiver/upload_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "host/common/bulk_xxh3.h"
#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/common/hex.h"

namespace planb {

namespace {

Status DiskError(int error, const std::string& what, const std::string& path) {
  if (error == ENOSPC || error == EDQUOT) return Status(Code::kFull, "disk full " + what + " " + path);
  return Status::IOError(what + " " + path + ": " + std::strerror(error));
}

}  // namespace

UploadSession::UploadSession(Token token, std::string part_path, protocol::BeginRequest begin)
    : token_(token), part_path_(std::move(part_path)), begin_(std::move(begin)), hash_(XXH3_createState()) {
  XXH3_64bits_reset(hash_);
}

UploadSession::~UploadSession() {
  if (fd_ >= 0) ::close(fd_);
  XXH3_freeState(hash_);
}

Status UploadSession::Create() {
  fd_ = ::open(part_path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, HomeFileMode());
  if (fd_ < 0) return DiskError(errno, "creating", part_path_);
  return Status::Ok();
}

Status UploadSession::WriteChunk(uint64_t offset, std::string_view bytes) {
  const uint64_t total = begin_.total_size;
  if (offset > total || bytes.size() > total - offset) {
    return Status::Invalid("chunk of " + std::to_string(bytes.size()) + " bytes at offset " + std::to_string(offset) +
                           " runs past the declared size of " + std::to_string(total) + " bytes");
  }
  if (offset > received_) {
    return Status::Invalid("chunk at offset " + std::to_string(offset) + " leaves a gap: only " +
                           std::to_string(received_) + " bytes received so far (chunks must be sequential)");
  }
  if (offset + bytes.size() <= received_) return Status::Ok();  // a resend: already written
  bytes.remove_prefix(received_ - offset);
  if (fd_ < 0) return Status::Internal("part file " + part_path_ + " is not open");
  while (!bytes.empty()) {
    // The fault point stands in for a real ENOSPC, so tests reach the same path a full disk takes.
    ssize_t n = FaultPointActive("receive.disk_full")
                    ? (errno = ENOSPC, -1)
                    : ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(received_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return DiskError(errno, "writing", part_path_);
    XXH3_64bits_update(hash_, bytes.data(), static_cast<size_t>(n));
    received_ += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status UploadSession::Finish(uint64_t checksum) {
  if (received_ != begin_.total_size) {
    return Status::Corruption("truncated upload: received " + std::to_string(received_) + " of " +
                              std::to_string(begin_.total_size) + " bytes");
  }
  uint64_t digest = XXH3_64bits_digest(hash_);
  if (digest != checksum) {
    return Status::Corruption("checksum mismatch: received data hashes to " + Hex16(digest) + ", sender declared " +
                              Hex16(checksum));
  }
  // The tail BEGIN identified the zip by must be these bytes' own: a later BEGIN rejoins this upload by it.
  const uint64_t tail = std::min<uint64_t>(received_, protocol::kTailBytes);
  std::string last(static_cast<size_t>(tail), '\0');
  const ssize_t n = ::pread(fd_, last.data(), last.size(), static_cast<off_t>(received_ - tail));
  if (n != static_cast<ssize_t>(last.size())) return DiskError(n < 0 ? errno : EIO, "reading back", part_path_);
  if (XXH3_64bits(last.data(), last.size()) != begin_.tail_hash) {
    return Status::Corruption("tail hash mismatch: the last " + std::to_string(tail) + " bytes received hash to " +
                              Hex16(XXH3_64bits(last.data(), last.size())) + ", BEGIN declared " +
                              Hex16(begin_.tail_hash));
  }
  committed_checksum_ = checksum;
  if (::fsync(fd_) != 0) return DiskError(errno, "syncing", part_path_);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return DiskError(errno, "closing", part_path_);
  return Status::Ok();
}

void UploadSession::RemovePart() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  ::unlink(part_path_.c_str());
}

}  // namespace planb
