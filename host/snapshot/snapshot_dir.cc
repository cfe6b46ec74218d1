#include "host/snapshot/snapshot_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "host/common/file_util.h"

namespace planb {

namespace {

constexpr std::string_view kFetchPrefix = ".fetch-";
constexpr std::string_view kDeletePrefix = ".delete-";
// 18 digits hold every millisecond until the year 33658 and never overflow int64.
constexpr size_t kMaxSnapshotNameDigits = 18;

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

std::atomic<uint64_t> scratch_counter{0};

std::string ScratchName(std::string_view prefix) {
  return std::string(prefix) + std::to_string(::getpid()) + "-" + std::to_string(++scratch_counter);
}

}  // namespace

Status SnapshotDir::List(std::vector<int64_t>* create_times) const {
  create_times->clear();
  DIR* dir = ::opendir(path_.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("listing snapshots in " + path_);
  }
  errno = 0;
  while (const struct dirent* entry = ::readdir(dir)) {
    int64_t time = 0;
    if (ParseSnapshotName(entry->d_name, &time)) create_times->push_back(time);
  }
  const int err = errno;
  ::closedir(dir);
  if (err != 0) {
    errno = err;
    return Errno("listing snapshots in " + path_);
  }
  std::sort(create_times->begin(), create_times->end());
  return Status::Ok();
}

Status SnapshotDir::Newest(int64_t* create_time_ms) const {
  std::vector<int64_t> times;
  PLANB_RETURN_IF_ERROR(List(&times));
  *create_time_ms = times.empty() ? 0 : times.back();
  return Status::Ok();
}

int64_t SnapshotDir::MarkerTimeMs(const char* name) const {
  struct stat st;
  if (::stat(Entry(name).c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

Status SnapshotDir::Touch(const char* name) const {
  const std::string path = Entry(name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, HomeFileMode());
  if (fd < 0) return Errno("creating " + path);
  const int rc = ::futimens(fd, nullptr);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    errno = err;
    return Errno("touching " + path);
  }
  return Status::Ok();
}

Status SnapshotDir::RemoveMarker(const char* name) const {
  const std::string path = Entry(name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("removing " + path);
  return Status::Ok();
}

std::string SnapshotDir::NewFetchScratchName() { return ScratchName(kFetchPrefix); }
std::string SnapshotDir::NewDeleteScratchName() { return ScratchName(kDeletePrefix); }

bool ParseSnapshotName(std::string_view name, int64_t* create_time_ms) {
  if (name.empty() || name.size() > kMaxSnapshotNameDigits) return false;
  int64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *create_time_ms = value;
  return true;
}

bool ParseScratchOwner(std::string_view name, pid_t* pid) {
  for (std::string_view prefix : {kFetchPrefix, kDeletePrefix}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    name.remove_prefix(prefix.size());
    const size_t dash = name.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash > 9) return false;
    pid_t value = 0;
    for (char c : name.substr(0, dash)) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value <= 0) return false;
    *pid = value;
    return true;
  }
  return false;
}

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

Status LockSnapshotShared(const std::string& path, int* fd, bool* vanished) {
  *fd = -1;
  *vanished = false;
  const int dir_fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    if (errno == ENOENT) {
      *vanished = true;
      return Status::Ok();
    }
    return Errno("opening snapshot " + path);
  }
  while (::flock(dir_fd, LOCK_SH) != 0) {
    if (errno == EINTR) continue;
    Status s = Errno("locking snapshot " + path);
    ::close(dir_fd);
    return s;
  }
  // A cleanup renames a directory away while holding it exclusively: what was locked must still be at `path`.
  struct stat locked, now;
  if (::fstat(dir_fd, &locked) != 0 || ::stat(path.c_str(), &now) != 0 || locked.st_dev != now.st_dev ||
      locked.st_ino != now.st_ino) {
    UnlockSnapshot(dir_fd);
    *vanished = true;
    return Status::Ok();
  }
  *fd = dir_fd;
  return Status::Ok();
}

Status TryLockSnapshotExclusive(const std::string& path, int* fd) {
  *fd = -1;
  const int dir_fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("opening snapshot " + path);
  }
  while (::flock(dir_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      ::close(dir_fd);
      return Status::Ok();
    }
    Status s = Errno("locking snapshot " + path);
    ::close(dir_fd);
    return s;
  }
  *fd = dir_fd;
  return Status::Ok();
}

void UnlockSnapshot(int fd) {
  if (fd < 0) return;
  // Explicitly: a child forked meanwhile shares the open file description and would keep the lock after close.
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

}  // namespace planb
