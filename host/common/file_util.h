// Small filesystem helpers with the durability steps (fsync of files and directories) that renames need.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>

#include "planb/status.h"

namespace planb {

// The modes of what planb creates in the home: files 0640 and directories 0750 unless the config's file_mode says
// otherwise (Runtime::Open sets it once per process, before any file is made). Directories get the file mode's
// read bits as x bits too. The umask can only narrow them further. Thread-safe.
void SetHomeFileMode(mode_t file_mode);
mode_t HomeFileMode();
mode_t HomeDirectoryMode();
// Sets `path` (a file or directory planb made) to HomeFileMode() / HomeDirectoryMode(), for files made by code that
// takes no mode (LMDB, libzip). A no-op when the mode is already right.
Status ApplyHomeMode(const std::string& path);
// The same for an open file descriptor of a file.
Status ApplyHomeFileMode(int fd, const std::string& path);

// fsync on a file or directory, so a rename into it or a file's contents survive a crash.
Status SyncPath(const std::string& path);
// Renames `from` to `to` (same filesystem) and syncs the parent directories of both.
Status DurableRename(const std::string& from, const std::string& to);
// Writes `contents` to `path` atomically: temp file, fsync, rename.
Status WriteFileAtomically(const std::string& path, const std::string& contents);
// Writes `contents` to `path`, a file outside the home that a user named (an export): a new temporary file beside
// it (O_EXCL: an existing file or symlink there is never opened), fsync, then a rename over `path`, so a reader of
// `path` sees the old file or the new one, never a part. Mode 0644 less the umask, as a new file gets. The temporary
// file is removed on any failure.
Status ReplaceUserFile(const std::string& path, const std::string& contents);
Status ReadSmallFile(const std::string& path, std::string* contents);
// Removes a file or directory tree; a missing path is not an error. Symlinks are removed, never followed: a
// symlink at `path` or anywhere inside it goes as a link and its target is left alone.
Status RemoveTree(const std::string& path);
// Creates `path` and missing parents with HomeDirectoryMode().
Status MakeDirectories(const std::string& path);

// An exclusive advisory lock (flock) on a file, held until destruction. Serialises processes sharing a home.
class FileLock {
 public:
  FileLock() = default;
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // Blocks until the lock is held.
  Status Acquire(const std::string& path);
  // Takes the lock only if nobody holds it; `acquired` says whether it did.
  Status TryAcquire(const std::string& path, bool* acquired);
  // Waits for the lock until it is held or `stop` becomes true (then `acquired` is false and nothing is held):
  // a lock another process may hold for minutes (`planb maintain` holds merging/.lock) must not keep a node
  // from stopping. Looks at `stop` every kLockPollMs; null `stop`: as Acquire.
  static constexpr int kLockPollMs = 50;
  Status AcquireUnless(const std::string& path, const std::atomic<bool>* stop, bool* acquired);

 private:
  int fd_ = -1;
};

}  // namespace planb
