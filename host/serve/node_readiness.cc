#include "host/serve/node_readiness.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host/common/disk_room.h"
#include "host/common/log_text.h"

namespace planb {

namespace {

// Writing one byte and removing the file: a read-only remount or a revoked permission shows, as the first write
// of the next upload would find.
std::string ProbeWritable(const std::string& home) {
  const std::string probe = home + "/.ready-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return std::strerror(errno);
  const bool written = ::write(fd, "1", 1) == 1;
  const int write_error = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  return written ? std::string() : std::strerror(write_error);
}

}  // namespace

std::vector<std::string> ReadinessProblems(const ReadinessInputs& inputs) {
  std::vector<std::string> problems;
  const std::string unwritable = ProbeWritable(inputs.home);
  if (!unwritable.empty()) problems.push_back("home " + LogValue(inputs.home) + " is not writable: " + unwritable);
  if (!inputs.merge_thread_running) {
    problems.push_back("the merge thread is not running: staged batches are not merged (the log says why)");
  }
  const DiskRoom room = MeasureDiskRoom(inputs.home, 0);
  if (room.known && room.free_bytes < inputs.min_free_bytes) {
    problems.push_back("disk: " + std::to_string(room.free_bytes) + " bytes free on the home's filesystem, below "
                       "ready_min_free_disk (" + std::to_string(inputs.min_free_bytes) + " bytes)");
  }
  for (const std::string& map : inputs.catching_up) {
    problems.push_back("catching up on map " + LogValue(map) + ": its remote reads and snapshots are refused");
  }
  return problems;
}

}  // namespace planb
