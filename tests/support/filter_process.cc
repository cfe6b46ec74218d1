#include "support/filter_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "support/test_env.h"

namespace planb::testing {

FilterProcess::FilterProcess(const std::string& binary, const std::vector<std::string>& args) {
  char err_template[] = "/tmp/planb-filter-err-XXXXXX";
  const int err_fd = ::mkstemp(err_template);
  err_path_ = err_template;
  int to_child[2];
  int from_child[2];
  if (err_fd < 0 || ::pipe(to_child) != 0 || ::pipe(from_child) != 0) return;
  // Everything the child needs is built before fork: it only calls async-signal-safe functions.
  std::vector<std::string> all{binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], err_fd}) ::close(fd);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  ::close(err_fd);
  in_ = to_child[1];
  out_ = from_child[0];
}

FilterProcess::~FilterProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (in_ >= 0) ::close(in_);
  if (out_ >= 0) ::close(out_);
  ::unlink(err_path_.c_str());
}

bool FilterProcess::Write(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool FilterProcess::ReadLine(std::string* line, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline * TestTimeScale();
  for (;;) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(out_, buffer, sizeof(buffer));
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<size_t>(n));
  }
}

int FilterProcess::Finish() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  int status = 0;
  if (pid_ <= 0 || ::waitpid(pid_, &status, 0) != pid_) return -1;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string FilterProcess::err() const { return ReadFile(err_path_); }

}  // namespace planb::testing
