#include "host/snapshot/unsynced_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host/common/boot_id.h"
#include "host/common/iso_time.h"
#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {

namespace {

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// Reads the mark (a boot id and a newline: at most 64 bytes), never following a symlink put in its place.
Status ReadMark(const std::string& path, bool* present, std::string* boot) {
  *present = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    if (errno == ELOOP) return Status::Corruption(path + ": a symlink, not a mark this program wrote");
    return Errno("reading " + path);
  }
  char buffer[65];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  const int err = errno;
  ::close(fd);
  if (n < 0) {
    errno = err;
    return Errno("reading " + path);
  }
  *present = true;
  boot->assign(buffer, static_cast<size_t>(n));
  if (!boot->empty() && boot->back() == '\n') boot->pop_back();
  return Status::Ok();
}

}  // namespace

Status MarkUnsyncedSnapshot(const std::string& dir, bool* marked) {
  *marked = false;
  std::string boot;
  if (!CurrentBootId(&boot).ok()) return Status::Ok();
  PLANB_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + kUnsyncedBootFile, boot + "\n"));
  *marked = true;
  return Status::Ok();
}

Status CheckUnsyncedSnapshot(const std::string& dir) {
  const std::string path = dir + "/" + kUnsyncedBootFile;
  bool present = false;
  std::string marked;
  PLANB_RETURN_IF_ERROR(ReadMark(path, &present, &marked));
  if (!present) return Status::Ok();
  std::string boot;
  const Status known = CurrentBootId(&boot);
  if (known.ok() && marked == boot) return Status::Ok();
  return Status::Corruption(dir + ": written by a snapshot diff without a sync in boot " + LogValue(marked) +
                            ", and this is " + (known.ok() ? "boot " + boot : "an unknown boot (" + known.message() + ")") +
                            ": its data may not all have reached the disk");
}

Status SyncUnsyncedSnapshot(const std::string& dir, int64_t min_age_ms, bool* synced) {
  *synced = false;
  const std::string path = dir + "/" + kUnsyncedBootFile;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Status::Ok() : Errno("examining " + path);
  const int64_t marked_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000;
  if (CurrentTimeMs() - marked_ms < min_age_ms) return Status::Ok();
  // The data first, then the mark's removal made durable: a crash between them leaves a synced snapshot marked,
  // which a reboot costs a fetch, never the other way round.
  PLANB_RETURN_IF_ERROR(SyncPath(dir + "/data.mdb"));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("removing " + path);
  PLANB_RETURN_IF_ERROR(SyncPath(dir));
  *synced = true;
  return Status::Ok();
}

}  // namespace planb
