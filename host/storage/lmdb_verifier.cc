#include "host/storage/lmdb_verifier.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/common/log_text.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/storage/verifier_child.h"
#include "host/storage/verify_job.h"

namespace planb {
namespace {

using Clock = std::chrono::steady_clock;

// The deadline grows by one second per this many bytes of extracted LMDB files.
constexpr uint64_t kBytesPerDeadlineSecond = uint64_t{16} << 20;

// What is kept of the child's report (its error message is cut there).
constexpr size_t kMaxReportBytes = 64 * 1024;

// Descriptors the parent keeps for the report pipe are at least this, so that neither end is 0-3 (the child's
// dup2 onto kVerifyReportFd then always makes a new descriptor, one without close-on-exec).
constexpr int kFirstParentFd = 10;

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

// Appends what the child writes until it closes the pipe (true) or the deadline passes (false). The deadline is
// `start` until the child's first byte (its first map begun: the process is up), then that moment plus `walk_ms`,
// so a start slowed by a loaded machine never eats into the time the walk is given. `*walking` says which phase
// the deadline ended.
bool ReadReport(int fd, Clock::time_point start, int64_t walk_ms, std::string* report, bool* walking,
                Clock::time_point* deadline) {
  char buffer[4096];
  *walking = false;
  *deadline = start;
  while (true) {
    const int64_t left = MillisecondsLeft(*deadline);
    if (left <= 0) return false;
    struct pollfd ready = {fd, POLLIN, 0};
    const int n_ready = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left + 1, INT_MAX)));
    if (n_ready == 0 || (n_ready < 0 && errno == EINTR)) continue;
    if (n_ready < 0) return true;  // cannot wait on the pipe: the reaping below still keeps the deadline
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return true;
    if (!*walking) {
      *walking = true;
      *deadline = Clock::now() + std::chrono::milliseconds(walk_ms);
    }
    // Drained but not kept past the cap: a report is a few records and one message.
    if (report->size() < kMaxReportBytes) report->append(buffer, static_cast<size_t>(n));
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

// Starts `program` with `args` and the report pipe's write end as its kVerifyReportFd, every other descriptor of
// this process closed, /dev/null as input, default signal actions and no blocked signal. posix_spawn, not fork:
// the child never runs this process's code, so no lock another thread holds can hang it.
Status SpawnVerifier(const std::string& program, const std::vector<std::string>& args, int report_fd, pid_t* pid) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&actions) != 0) return Status::IOError("starting the verifier: out of memory");
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return Status::IOError("starting the verifier: out of memory");
  }
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  int rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, report_fd, kVerifyReportFd);
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, kVerifyReportFd + 1);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &all);
  if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc == 0) rc = ::posix_spawn(pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::Internal("starting the verifier '" + LogValue(program) + "': " + std::strerror(rc));
  return Status::Ok();
}

Status RunVerifier(const std::string& zip_path, const std::string& program, const VerifyJob& job,
                   int64_t start_deadline_ms, int64_t deadline_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("verifier pipe: ") + std::strerror(errno));
  for (int& fd : fds) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kFirstParentFd);
    if (moved < 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      return Status::IOError(std::string("verifier pipe: ") + std::strerror(err));
    }
    ::close(fd);
    fd = moved;
  }
  const Clock::time_point start_deadline = Clock::now() + std::chrono::milliseconds(start_deadline_ms);
  pid_t pid = 0;
  const Status spawned = SpawnVerifier(program, EncodeVerifyJob(job), fds[1], &pid);
  if (!spawned.ok()) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status(spawned.code(), zip_path + ": " + spawned.message());
  }
  ::close(fds[1]);
  std::string report;
  bool walking = false;
  Clock::time_point deadline;
  const bool closed = ReadReport(fds[0], start_deadline, deadline_ms, &report, &walking, &deadline);
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
  size_t begun = 0;
  size_t pos = 0;
  while (pos + 1 + sizeof(uint32_t) <= report.size() && report[pos] == kVerifyBegin) {
    std::memcpy(&current, report.data() + pos + 1, sizeof(current));
    started = true;
    ++begun;
    pos += 1 + sizeof(uint32_t);
  }
  const std::string map = started && current < job.maps.size() ? job.maps[current].config.name : "?";
  const std::string where = zip_path + ": map '" + map + "'";
  if (reaped == Reaped::kDeadline && !walking) {  // never reached the files: no verdict on them
    return Status::Internal(zip_path + ": the verifier '" + LogValue(program) + "' did not start within " +
                            FormatSeconds(start_deadline_ms));
  }
  if (reaped == Reaped::kDeadline) {
    return Status::Corruption(where + ": verification did not finish within " + FormatSeconds(deadline_ms) +
                              " (corrupt B-tree?)");
  }
  if (reaped == Reaped::kDone && WIFSIGNALED(wstatus)) {
    return Status::Corruption(where + ": LMDB file is corrupt (verifier killed by signal " +
                              std::to_string(WTERMSIG(wstatus)) + ")");
  }
  if (pos + 1 + sizeof(int32_t) <= report.size() && report[pos] == kVerifyError) {
    int32_t code = 0;
    std::memcpy(&code, report.data() + pos + 1, sizeof(code));
    std::string message = report.substr(pos + 1 + sizeof(code));
    return Status(static_cast<Code>(code), where + ": " + message);
  }
  // A pass is a clean exit after every map was begun, and nothing else said: a program that exits 0 without
  // checking anything (the wrong file installed as the verifier) passes nothing.
  if (reaped != Reaped::kDone || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || pos != report.size() ||
      begun != job.maps.size()) {
    const std::string how = reaped != Reaped::kDone ? "not reaped"
                            : WIFEXITED(wstatus)    ? "exit status " + std::to_string(WEXITSTATUS(wstatus))
                                                    : "wait status " + std::to_string(wstatus);
    return Status::Internal(zip_path + ": the verifier '" + LogValue(program) + "' ended without a verdict (" + how +
                            ", " + std::to_string(begun) + " of " + std::to_string(job.maps.size()) + " maps begun)");
  }
  return Status::Ok();
}

}  // namespace

std::string VerifierProgramPath() {
  // The plugins live in <libdir>/planb/plugins, the program beside that directory.
  return (std::filesystem::path(PluginRegistry::DefaultDirectory()).parent_path() / kVerifierProgramName).string();
}

Status VerifyExtractedBatch(const MapCatalog& catalog, const std::string& zip_path, const std::string& dir,
                            const std::vector<std::string>& maps, const VerifyOptions& options) {
  VerifyJob job;
  job.dir = dir;
  uint64_t extracted = 0;
  for (const std::string& name : maps) {
    std::shared_ptr<const MapPlugins> plugins;
    Status s = catalog.Get(name, &plugins);
    if (!s.ok()) {
      return Status::Invalid(zip_path + ": map '" + name + "' is not configured on this node (" + s.message() + ")");
    }
    if (plugins->config().name != name) {  // the child finds each file by the configured name
      return Status::Invalid(zip_path + ": map directory " + LogValue(name) + " is not spelt as the map '" +
                             plugins->config().name + "' is configured");
    }
    struct stat st;
    const std::string file = dir + "/" + name + "/data.mdb";
    if (::stat(file.c_str(), &st) != 0) return Status::IOError(file + ": " + std::strerror(errno));
    extracted += static_cast<uint64_t>(st.st_size);
    job.maps.push_back(VerifyMapJob{plugins->config(), plugins->type_file(), plugins->scheme_file()});
  }
  if (maps.empty()) return Status::Ok();
  const int64_t deadline_ms =
      options.base_deadline_ms + static_cast<int64_t>(extracted / (kBytesPerDeadlineSecond / 1000));
  return RunVerifier(zip_path, options.program.empty() ? VerifierProgramPath() : options.program, job,
                     options.start_deadline_ms, deadline_ms);
}

}  // namespace planb
