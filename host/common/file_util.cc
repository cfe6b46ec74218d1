#include "host/common/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace planb {

namespace fs = std::filesystem;

namespace {
// A full disk (or quota) is kFull and says so first: callers retry it later rather than treat it as a fault.
Status Errno(const std::string& what) {
  const int error = errno;
  if (error == ENOSPC || error == EDQUOT) return Status(Code::kFull, "disk full: " + what + ": " + std::strerror(error));
  return Status::IOError(what + ": " + std::strerror(error));
}

std::atomic<mode_t> home_file_mode{0640};

// The process's umask, read from /proc (Linux 4.7+) rather than by umask(2), which would set it for a moment
// under every other thread; 022 when /proc does not say.
mode_t CurrentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8) & 0777);
  }
  return 022;
}
}  // namespace

void SetHomeFileMode(mode_t file_mode) { home_file_mode.store(file_mode & 0777); }
mode_t HomeFileMode() { return home_file_mode.load(); }
mode_t HomeDirectoryMode() {
  const mode_t file = HomeFileMode();
  return file | ((file & 0444) >> 2);  // r-- gets --x: a readable file's directory can be entered
}

Status ApplyHomeMode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Errno("setting the mode of " + path);
  const mode_t wanted = S_ISDIR(st.st_mode) ? HomeDirectoryMode() : HomeFileMode();
  // Another user's file (a shared home) keeps the mode its owner gave it.
  if ((st.st_mode & 07777) == wanted || st.st_uid != ::geteuid()) return Status::Ok();
  if (::chmod(path.c_str(), wanted) != 0) return Errno("setting the mode of " + path);
  return Status::Ok();
}

Status ApplyHomeFileMode(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("setting the mode of " + path);
  if ((st.st_mode & 07777) == HomeFileMode() || st.st_uid != ::geteuid()) return Status::Ok();
  if (::fchmod(fd, HomeFileMode()) != 0) return Errno("setting the mode of " + path);
  return Status::Ok();
}

Status SyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("opening " + path + " to sync");
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("syncing " + path);
  return Status::Ok();
}

Status DurableRename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return Errno("renaming " + from + " to " + to);
  std::string to_parent = fs::path(to).parent_path().string();
  std::string from_parent = fs::path(from).parent_path().string();
  PLANB_RETURN_IF_ERROR(SyncPath(to_parent.empty() ? "." : to_parent));
  if (from_parent != to_parent) PLANB_RETURN_IF_ERROR(SyncPath(from_parent.empty() ? "." : from_parent));
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, HomeFileMode());
  if (fd < 0) return Errno("creating " + temp);
  size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Errno("writing " + temp);
      ::close(fd);
      ::unlink(temp.c_str());  // a full disk must not keep what little it has in a half-written temp file
      return s;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status s = Errno("syncing " + temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return s;
  }
  ::close(fd);
  return DurableRename(temp, path);
}

Status ReplaceUserFile(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") return Status::Invalid(path + " does not name a file");
  const fs::path parent = target.parent_path();
  std::string temp = (parent / ("." + name + ".tmp-XXXXXX")).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Errno("cannot create a temporary file beside " + path);
  const mode_t umask_now = CurrentUmask();
  Status s;
  if (::fchmod(fd, 0644 & ~umask_now) != 0) s = Errno("setting the mode of " + temp);
  for (size_t written = 0; s.ok() && written < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Errno("writing " + temp);
    } else {
      written += static_cast<size_t>(n);
    }
  }
  if (s.ok() && ::fsync(fd) != 0) s = Errno("syncing " + temp);
  if (::close(fd) != 0 && s.ok()) s = Errno("closing " + temp);
  if (s.ok()) s = DurableRename(temp, path);
  if (!s.ok()) ::unlink(temp.c_str());
  return s;
}

Status ReadSmallFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *contents = buffer.str();
  return Status::Ok();
}

namespace {
// Removes everything inside the directory open at `dir_fd` (shown as `shown` in errors). Each entry is examined
// with AT_SYMLINK_NOFOLLOW and subdirectories are opened with O_NOFOLLOW, relative to their parent's descriptor:
// a symlink is unlinked as itself, never entered, so no path swapped in meanwhile can steer the removal out of
// the tree (std::filesystem::remove_all resolves each entry by its path).
Status RemoveEntriesAt(int dir_fd, const std::string& shown) {
  const int list_fd = ::dup(dir_fd);
  if (list_fd < 0) return Errno("removing " + shown);
  DIR* dir = ::fdopendir(list_fd);
  if (dir == nullptr) {
    Status s = Errno("removing " + shown);
    ::close(list_fd);
    return s;
  }
  // The names first, then the removals: readdir's view of a directory being changed is unspecified.
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
    errno = 0;
  }
  const int read_error = errno;
  ::closedir(dir);
  if (read_error != 0) {
    errno = read_error;
    return Errno("listing " + shown);
  }
  for (const std::string& name : names) {
    const std::string child = shown + "/" + name;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return Errno("removing " + child);
    }
    if (S_ISDIR(st.st_mode)) {
      const int child_fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child_fd < 0) return Errno("removing " + child);
      Status inner = RemoveEntriesAt(child_fd, child);
      ::close(child_fd);
      PLANB_RETURN_IF_ERROR(inner);
      if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return Errno("removing " + child);
    } else if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return Errno("removing " + child);
    }
  }
  return Status::Ok();
}
}  // namespace

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("removing " + path);
  }
  if (!S_ISDIR(st.st_mode)) {  // a file, or a symlink: the link goes, whatever it points at stays
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("removing " + path);
    return Status::Ok();
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("removing " + path);
  Status inner = RemoveEntriesAt(fd, path);
  ::close(fd);
  PLANB_RETURN_IF_ERROR(inner);
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return Errno("removing " + path);
  return Status::Ok();
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return Status::Ok();
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && parent != fs::path(path)) PLANB_RETURN_IF_ERROR(MakeDirectories(parent.string()));
  if (::mkdir(path.c_str(), HomeDirectoryMode()) != 0 && errno != EEXIST) return Errno("creating directory " + path);
  if (!fs::is_directory(path, ec)) return Status::IOError("creating directory " + path + ": not a directory");
  return Status::Ok();
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  // An explicit unlock: a child forked meanwhile shares the open file description, and a close() alone would
  // leave the lock held until that child exits.
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

Status FileLock::TryAcquire(const std::string& path, bool* acquired) {
  *acquired = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, HomeFileMode());
  if (fd < 0) return Errno("opening lock file " + path);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      ::close(fd);
      return Status::Ok();
    }
    Status s = Errno("locking " + path);
    ::close(fd);
    return s;
  }
  fd_ = fd;
  *acquired = true;
  return Status::Ok();
}

Status FileLock::Acquire(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, HomeFileMode());
  if (fd < 0) return Errno("opening lock file " + path);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    Status s = Errno("locking " + path);
    ::close(fd);
    return s;
  }
  fd_ = fd;
  return Status::Ok();
}

Status FileLock::AcquireUnless(const std::string& path, const std::atomic<bool>* stop, bool* acquired) {
  *acquired = false;
  if (stop == nullptr) {
    PLANB_RETURN_IF_ERROR(Acquire(path));
    *acquired = true;
    return Status::Ok();
  }
  // flock has no timeout and no way to be woken: polling it is the portable way to keep waiting interruptible.
  while (!stop->load()) {
    PLANB_RETURN_IF_ERROR(TryAcquire(path, acquired));
    if (*acquired) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(kLockPollMs));
  }
  return Status::Ok();
}

}  // namespace planb
