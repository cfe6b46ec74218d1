// Small filesystem helpers with the durability steps (fsync of files and directories) that renames need.
#pragma once

#include <string>

#include "planb/status.h"

namespace planb {

// fsync on a file or directory, so a rename into it or a file's contents survive a crash.
Status SyncPath(const std::string& path);
// Renames `from` to `to` (same filesystem) and syncs the parent directories of both.
Status DurableRename(const std::string& from, const std::string& to);
// Writes `contents` to `path` atomically: temp file, fsync, rename.
Status WriteFileAtomically(const std::string& path, const std::string& contents);
Status ReadSmallFile(const std::string& path, std::string* contents);
// Removes a file or directory tree; a missing path is not an error.
Status RemoveTree(const std::string& path);
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

 private:
  int fd_ = -1;
};

}  // namespace planb
