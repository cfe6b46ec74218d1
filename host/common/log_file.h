// The file a long-running command logs to (log_file in the config), reopened on request (SIGHUP) so that
// logrotate can move it away and have the next line start a new file, with no copytruncate and nothing lost.
// Opened append-only and never through a symlink (an attacker's link in a shared log directory must not make the
// node write elsewhere).
// Thread-safety: Write and Reopen from any thread (one lock).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "planb/status.h"

namespace planb {

class LogFile {
 public:
  LogFile() = default;
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Errors: the file cannot be opened for appending (missing directory, permissions, a symlink), naming it.
  Status Open(const std::string& path);
  // Opens the path again and switches to it; on failure keeps writing to the old file and says why.
  Status Reopen();
  // Appends `line` and a newline in one write.
  void Write(std::string_view line);
  const std::string& path() const { return path_; }

 private:
  std::mutex mutex_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace planb
