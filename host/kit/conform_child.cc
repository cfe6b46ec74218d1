#include "host/kit/conform_child.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <vector>

#include "host/common/file_util.h"
#include "host/common/log_text.h"

namespace planb {
namespace {

constexpr size_t kLogLinesShown = 8;
constexpr size_t kLogTailBytes = 16 << 10;  // enough for kLogLinesShown lines of any sane length
constexpr size_t kMaxVerdictBytes = 1u << 20;  // a child's verdict is read whole; past this it is cut

// One verdict line: a tag and the text with '\n' and '\\' escaped, so that a message of many lines stays one.
std::string Escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[i + 1] == 'n' ? '\n' : text[i + 1];
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to tell
    done += static_cast<size_t>(n);
  }
}

// In the child: runs the check and writes "note TEXT" / "stop TEXT" lines, then "done".
[[noreturn]] void RunChild(const std::string& name, const std::string& log, bool stop_on_error, int fd,
                           const std::function<Status(CheckResult*)>& check) {
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log_fd < 0) log_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);  // never into the parent's TAP stream
  if (log_fd >= 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
  }
  CheckResult result{name, {}};
  Status s;
  try {
    s = check(&result);
  } catch (const std::exception& e) {
    s = Status::Internal(std::string("the check threw: ") + e.what());
  } catch (...) {
    s = Status::Internal("the check threw a non-standard exception");
  }
  std::string verdict;
  // The Status first: the parent keeps a dozen notes, and the plugin's own message must be one of them.
  if (!s.ok()) verdict += std::string(stop_on_error ? "stop " : "note ") + Escape(s.message()) + "\n";
  for (const std::string& note : result.notes) verdict += "note " + Escape(note) + "\n";
  verdict += "done\n";
  WriteAll(fd, verdict);
  ::_exit(0);  // no destructors, no atexit: the parent's objects are the parent's
}

std::string SignalText(int signal) {
  const char* what = ::strsignal(signal);
  return "signal " + std::to_string(signal) + (what != nullptr ? std::string(" (") + what + ")" : std::string());
}

// The last lines of the child's log, as notes.
void AddLogTail(const std::string& log, CheckResult* result) {
  const std::string text = ReadLogTail(log, kLogTailBytes);
  if (text.empty()) return;
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  const size_t first = lines.size() > kLogLinesShown ? lines.size() - kLogLinesShown : 0;
  result->Fail("its output (" + log + ", last lines):");
  for (size_t i = first; i < lines.size(); ++i) result->Fail("  " + LogValue(lines[i], 400));
}

}  // namespace

std::string ReadLogTail(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string text;
  if (size > 0 && ::lseek(fd, start, SEEK_SET) == start) {
    text.resize(static_cast<size_t>(size - start));
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, &text[done], text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
  }
  ::close(fd);
  if (start > 0) {  // cut: from the first whole line
    const size_t newline = text.find('\n');
    text = newline == std::string::npos ? text : text.substr(newline + 1);
  }
  return text;
}

ChildVerdict RunCheckInChild(const std::string& name, const std::string& log, bool stop_on_error,
                             const std::function<Status(CheckResult*)>& check) {
  ChildVerdict verdict{CheckResult{name, {}}, Status::Ok()};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    verdict.stop = Status::IOError(std::string("conform: pipe: ") + std::strerror(errno));
    return verdict;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    verdict.stop = Status::IOError(std::string("conform: fork: ") + std::strerror(errno));
    return verdict;
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(name, log, stop_on_error, fds[1], check);
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() < kMaxVerdictBytes) text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      verdict.stop = Status::IOError(std::string("conform: waiting for the check's process: ") + std::strerror(errno));
      return verdict;
    }
  }
  bool done = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a cut line: the child did not finish writing
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("note ", 0) == 0) {
      verdict.result.Fail(Unescape(line.substr(5)));
    } else if (line.rfind("stop ", 0) == 0) {
      verdict.stop = Status::Invalid(Unescape(line.substr(5)));
    } else if (line == "done") {
      done = true;
    }
  }
  if (done && WIFEXITED(status) && WEXITSTATUS(status) == 0) return verdict;
  if (WIFSIGNALED(status)) {
    verdict.result.Fail("the check's process died of " + SignalText(WTERMSIG(status)) +
                        ": a crash in the plugin under test, or in what it was given");
  } else if (WIFEXITED(status) && !done) {
    verdict.result.Fail("the check's process exited with status " + std::to_string(WEXITSTATUS(status)) +
                        " before its verdict (a fatal signal planb reported, or a call of exit: see its output)");
  }
  AddLogTail(log, &verdict.result);
  return verdict;
}

}  // namespace planb
