// The on-disk layout of one map's snapshots, snapshots/<map>/ (snapshot_manager.h describes it), and the flocks
// that keep a snapshot in use from being deleted.
//   <create_time>/            a complete snapshot (the name is all digits: ms since the epoch)
//   .fetch.lock               processes take turns to fetch
//   .checked, .failed         markers: their mtime is when a node last said "not modified" / a fetch last failed
//   .fetch-<pid>-<n>.zip      a download in progress (".part" while arriving), and .fetch-<pid>-<n>/ its unpacking
//   .delete-<pid>-<n>/        a superseded snapshot being removed (renamed first, so it no longer counts)
// Thread-safety: the functions keep no state; many threads and processes may call them on one directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "planb/status.h"

namespace planb {

inline constexpr char kFetchLockName[] = ".fetch.lock";
inline constexpr char kCheckedMarker[] = ".checked";
inline constexpr char kFailedMarker[] = ".failed";
// Holds why the newest snapshot is ahead of every storage node (FetchOutcome::held_ahead_of_nodes), for `planb
// stores`; removed by the next successful fetch.
inline constexpr char kAheadMarker[] = ".ahead-of-nodes";

class SnapshotDir {
 public:
  explicit SnapshotDir(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string SnapshotPath(int64_t create_time_ms) const { return path_ + "/" + std::to_string(create_time_ms); }
  std::string Entry(std::string_view name) const { return path_ + "/" + std::string(name); }

  // The create times of the complete snapshots, oldest first; none when the directory does not exist.
  Status List(std::vector<int64_t>* create_times) const;
  // The newest complete snapshot's create time; 0 when there is none.
  Status Newest(int64_t* create_time_ms) const;

  // When marker `name` was last touched (ms since the epoch); 0 when it does not exist.
  int64_t MarkerTimeMs(const char* name) const;
  Status Touch(const char* name) const;
  // Removes marker `name`; a missing one is fine.
  Status RemoveMarker(const char* name) const;

  // Fresh scratch names, unique in this process (a counter) and among processes (the pid): ".fetch-<pid>-<n>"
  // (append ".zip" for the download) and ".delete-<pid>-<n>".
  static std::string NewFetchScratchName();
  static std::string NewDeleteScratchName();

 private:
  std::string path_;
};

// True for a name of a complete snapshot (1 to 18 digits), with its create time.
bool ParseSnapshotName(std::string_view name, int64_t* create_time_ms);
// True for a scratch name of a fetch or a deletion (".fetch-<pid>-...", ".delete-<pid>-..."), with its pid.
bool ParseScratchOwner(std::string_view name, pid_t* pid);
// Whether process `pid` exists (on this machine; a pid reused by another process counts as alive).
bool ProcessAlive(pid_t pid);

// Opens snapshot directory `path` and takes a shared flock on it, held through `*fd` (close it to let go).
// Blocks while a cleanup holds it exclusively. `*vanished` (and no fd) when the directory is gone, or was
// renamed away while this waited: the caller lists again.
Status LockSnapshotShared(const std::string& path, int* fd, bool* vanished);
// Takes an exclusive flock on snapshot directory `path` if nobody holds it; `*fd` = -1 when someone does (or the
// directory is gone).
Status TryLockSnapshotExclusive(const std::string& path, int* fd);
// Unlocks and closes a descriptor from the two above; -1 is fine.
void UnlockSnapshot(int fd);

}  // namespace planb
