// The scratch home of `planb bench` and `conform`: a fresh directory (mkdtemp-named "planb-bench-XXXXXX") under a
// parent the user chose, removed with everything in it when the object goes: at the end of a run, on an error, and
// on an interrupt (the command turns SIGINT/SIGTERM into a stop flag, so the stack unwinds to here). Not thread-safe.
#pragma once

#include <string>

#include "planb/status.h"

namespace planb {

class ScratchDir {
 public:
  ScratchDir() = default;
  ~ScratchDir() { Remove(); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Makes the directory under `parent` (made first, with its parents, when missing); kInvalidArgument naming
  // `parent` and why when it cannot.
  Status Create(const std::string& parent);
  // Removes the directory tree now (idempotent).
  void Remove();
  const std::string& path() const { return path_; }

 private:
  std::string path_;  // "" before Create and after Remove
};

// The default parent of scratch directories: $TMPDIR when set and not empty, else /tmp.
std::string DefaultScratchParent();

}  // namespace planb
