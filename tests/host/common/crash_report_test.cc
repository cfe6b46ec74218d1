// The fatal-signal report: inside a CrashScope, a fatal signal writes one line naming what was in flight and ends
// the process with exit status 2; outside any scope the signal kills as it always did. Each case runs in a forked
// child, whose stderr is read back through a pipe.
#include "host/common/crash_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace planb {
namespace {

struct Death {
  int status = 0;
  std::string err;
};

Death RunChild(const std::function<void()>& body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    InstallCrashReport();
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  Death death;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) death.err.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &death.status, 0);
  return death;
}

TEST(CrashReport, AFatalSignalInsideAScopeIsSaidAndExits2) {
  const Death death = RunChild([] {
    const CrashScope outer("doing the outer thing");
    const CrashScope inner("merging map 'm' (store type 'x' (/p/libplanb_x.so))");
    ::raise(SIGILL);
  });
  ASSERT_TRUE(WIFEXITED(death.status)) << death.status;
  EXPECT_EQ(WEXITSTATUS(death.status), 2);
  EXPECT_EQ(death.err,
            "planb: fatal signal 4 (Illegal instruction) while merging map 'm' (store type 'x' (/p/libplanb_x.so))\n");
}

TEST(CrashReport, AClosedScopeSaysNothingAndTheOuterOneSpeaks) {
  const Death death = RunChild([] {
    const CrashScope outer("loading plugin file /p/libplanb_y.so");
    { const CrashScope inner("merging map 'm'"); }
    ::raise(SIGILL);
  });
  ASSERT_TRUE(WIFEXITED(death.status));
  EXPECT_EQ(death.err, "planb: fatal signal 4 (Illegal instruction) while loading plugin file /p/libplanb_y.so\n");
}

TEST(CrashReport, OutsideAnyScopeTheSignalKillsAsBefore) {
  const Death death = RunChild([] { ::raise(SIGILL); });
  ASSERT_TRUE(WIFSIGNALED(death.status)) << death.status;
  EXPECT_EQ(WTERMSIG(death.status), SIGILL);
  EXPECT_EQ(death.err, "");
}

}  // namespace
}  // namespace planb
