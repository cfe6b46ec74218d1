#include "host/storage/lmdb_verifier.h"

#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host/common/fault_point.h"
#include "host/common/file_util.h"
#include "host/storage/lmdb_check.h"
#include "planb/lmdb.h"

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

// What the child reports through the pipe (native byte order: both ends are this process image):
//   'B' <uint32 index>            about to check map `index` (so a crash or a hang can be blamed on it)
//   'E' <int32 code> <message>    map `index` failed; the message runs to end of pipe
// A clean exit with no 'E' means every map passed.
constexpr char kBegin = 'B';
constexpr char kError = 'E';

// The child's pipe after it has closed everything else (0-2 stay: nothing in the child uses them).
constexpr int kChildPipeFd = 3;

// The deadline grows by one second per this many bytes of extracted LMDB files.
constexpr uint64_t kBytesPerDeadlineSecond = uint64_t{16} << 20;

// ---- In the child: LMDB, the maps' plugins and plain code only (no logging, no sockets, no locks). ----

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nobody to tell
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Leaves the child only fds 0-2 and the pipe, moved to kChildPipeFd: an inherited descriptor would keep the
// parent's flocks (home, staging) or sockets alive for as long as the child runs. False when the pipe is lost.
bool KeepOnlyPipe(int fd) {
  if (fd != kChildPipeFd) {
    if (::dup2(fd, kChildPipeFd) < 0) return false;
    if (fd < kChildPipeFd) ::close(fd);  // the parent ran with a standard descriptor closed
  }
  if (::close_range(kChildPipeFd + 1, ~0U, 0) != 0) {
    // Kernels before 5.9: one close per possible descriptor.
    struct rlimit limit;
    rlim_t last = 1 << 16;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) last = limit.rlim_cur;
    for (rlim_t other = kChildPipeFd + 1; other < last; ++other) ::close(static_cast<int>(other));
  }
  return true;
}

[[noreturn]] void RunChild(int fd, const std::string& scratch_dir, const std::vector<std::string>& maps,
                           const std::vector<std::shared_ptr<const MapPlugins>>& plugins) {
  if (!KeepOnlyPipe(fd)) ::_exit(2);
  fd = kChildPipeFd;
  // A crash is an expected verdict here, not a bug worth a core file.
  struct rlimit no_core = {0, 0};
  (void)::setrlimit(RLIMIT_CORE, &no_core);
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // also keeps a piped core_pattern (apport, systemd) away
  // The crash itself is the verdict, whatever handler the parent had: a sanitizer's would turn it into a report and
  // exit code 1 (the sanitizer passes, docs/testing.md).
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) (void)::signal(sig, SIG_DFL);
  for (uint32_t i = 0; i < maps.size(); ++i) {
    WriteAll(fd, &kBegin, 1);
    WriteAll(fd, &i, sizeof(i));
    // Tests: stand in for a walk that never ends (a B-tree whose branches loop), to prove the deadline. Stopped
    // rather than spinning, so a test can wait for this point with waitid(WSTOPPED).
    if (FaultPointActive("verify.hang")) {
      ::raise(SIGSTOP);
      while (true) ::pause();
    }
    const std::string dir = scratch_dir + "/" + maps[i];
    Status s = CheckMap(dir, plugins[i]);
    if (!s.ok()) {
      // Paths inside the scratch directory mean nothing to the sender of the zip.
      std::string message = s.message();
      for (const std::string& prefix : {dir + "/data.mdb: ", dir + ": "}) {
        if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
      }
      const int32_t code = static_cast<int32_t>(s.code());
      WriteAll(fd, &kError, 1);
      WriteAll(fd, &code, sizeof(code));
      WriteAll(fd, message.data(), message.size());
      ::_exit(1);
    }
  }
  ::_exit(0);
}

// ---- In the parent ----

int64_t MillisecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// "30 s", "30.5 s", "0.05 s".
std::string FormatSeconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  std::string s = text;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + " s";
}

// Appends what the child writes until it closes the pipe (true) or `deadline` passes (false).
bool ReadReport(int fd, Clock::time_point deadline, std::string* report) {
  char buffer[4096];
  while (true) {
    const int64_t left = MillisecondsLeft(deadline);
    if (left <= 0) return false;
    struct pollfd ready = {fd, POLLIN, 0};
    const int n_ready = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left + 1, INT_MAX)));
    if (n_ready == 0 || (n_ready < 0 && errno == EINTR)) continue;
    if (n_ready < 0) return true;  // cannot wait on the pipe: the reaping below still keeps the deadline
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return true;
    report->append(buffer, static_cast<size_t>(n));
  }
}

enum class Reaped { kDone, kDeadline, kLost };

// The child has closed its pipe, so it is exiting; waits for that until `deadline`, without blocking past it.
Reaped ReapBefore(pid_t pid, Clock::time_point deadline, int* wstatus) {
  long pause_ns = 100 * 1000;
  while (true) {
    const pid_t reaped = ::waitpid(pid, wstatus, WNOHANG);
    if (reaped == pid) return Reaped::kDone;
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0) return Reaped::kLost;  // reaped elsewhere (SIGCHLD ignored): no exit status to trust
    if (MillisecondsLeft(deadline) <= 0) return Reaped::kDeadline;
    const struct timespec pause = {0, pause_ns};
    ::nanosleep(&pause, nullptr);
    pause_ns = std::min(pause_ns * 2, 10L * 1000 * 1000);
  }
}

Status RunVerifier(const std::string& zip_path, const std::string& scratch_dir, const std::vector<std::string>& maps,
                   const std::vector<std::shared_ptr<const MapPlugins>>& plugins, int64_t deadline_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("verifier pipe: ") + std::strerror(errno));
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IOError(std::string("forking the verifier: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], scratch_dir, maps, plugins);
  }
  ::close(fds[1]);
  std::string report;
  const bool closed = ReadReport(fds[0], deadline, &report);
  ::close(fds[0]);
  int wstatus = 0;
  const Reaped reaped = closed ? ReapBefore(pid, deadline, &wstatus) : Reaped::kDeadline;
  if (reaped == Reaped::kDeadline) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }

  // The last map the child started is the one it failed, crashed or hung on.
  uint32_t current = 0;
  bool started = false;
  size_t pos = 0;
  while (pos + 1 + sizeof(uint32_t) <= report.size() && report[pos] == kBegin) {
    std::memcpy(&current, report.data() + pos + 1, sizeof(current));
    started = true;
    pos += 1 + sizeof(uint32_t);
  }
  const std::string map = started && current < maps.size() ? maps[current] : "?";
  const std::string where = zip_path + ": map '" + map + "'";
  if (reaped == Reaped::kDeadline) {
    return Status::Corruption(where + ": verification did not finish within " + FormatSeconds(deadline_ms) +
                              " (corrupt B-tree?)");
  }
  if (reaped == Reaped::kDone && WIFSIGNALED(wstatus)) {
    return Status::Corruption(where + ": LMDB file is corrupt (verifier killed by signal " +
                              std::to_string(WTERMSIG(wstatus)) + ")");
  }
  if (pos + 1 + sizeof(int32_t) <= report.size() && report[pos] == kError) {
    int32_t code = 0;
    std::memcpy(&code, report.data() + pos + 1, sizeof(code));
    std::string message = report.substr(pos + 1 + sizeof(code));
    return Status(static_cast<Code>(code), where + ": " + message);
  }
  if (reaped != Reaped::kDone || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || pos != report.size()) {
    return Status::Internal(zip_path + ": the verifier ended without a verdict (" +
                            (reaped == Reaped::kDone ? "status " + std::to_string(wstatus) : "not reaped") + ")");
  }
  return Status::Ok();
}

}  // namespace

Status VerifyExtractedBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                            const std::vector<std::string>& maps, const VerifyOptions& options) {
  std::vector<std::shared_ptr<const MapPlugins>> plugins(maps.size());
  uint64_t extracted = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    Status s = catalog.Get(maps[i], &plugins[i]);
    if (!s.ok()) {
      return Status::Invalid(zip_path + ": map '" + maps[i] + "' is not configured on this node (" + s.message() + ")");
    }
    struct stat st;
    const std::string file = dir + "/" + maps[i] + "/data.mdb";
    if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
    extracted += static_cast<uint64_t>(st.st_size);
  }
  if (maps.empty()) return Status::Ok();
  const int64_t deadline_ms =
      options.base_deadline_ms + static_cast<int64_t>(extracted / (kBytesPerDeadlineSecond / 1000));
  return RunVerifier(zip_path, dir, maps, plugins, deadline_ms);
}

}  // namespace planb
