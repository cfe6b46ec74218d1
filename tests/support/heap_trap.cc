#include "support/heap_trap.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>

namespace planb::testing {
namespace {

// Called through a volatile pointer, which the compiler cannot see through, so that it cannot drop an unused
// allocation.
void* (*volatile do_malloc)(std::size_t) = std::malloc;

// Allocates until the allocator has nothing left: large chunks first (splitting whatever is free), then every
// small size (glibc keeps per-size caches that serve only their own size). Returns how many allocations
// succeeded; nothing is freed.
std::size_t DrainOnce() {
  std::size_t taken = 0;
  for (std::size_t size = std::size_t{1} << 28; size >= 16; size /= 2) {
    while (do_malloc(size) != nullptr) ++taken;
  }
  for (std::size_t size = 1; size <= 4096; ++size) {
    while (do_malloc(size) != nullptr) ++taken;
  }
  return taken;
}

bool NewFails() {
  try {
    char* volatile p = new char[1];
    (void)p;
    return false;
  } catch (const std::bad_alloc&) {
    return true;
  }
}

// Tells the parent through `armed_fd` (one byte, written without allocating) once allocations fail.
[[noreturn]] void RunChild(const std::function<int()>& body, int armed_fd) {
  const rlimit none{0, 0};
  if (::setrlimit(RLIMIT_DATA, &none) != 0) ::_exit(1);
  // Arenas of other (former) threads are tried when the current one fails, in turn: repeat until nothing is left
  // anywhere.
  while (DrainOnce() != 0) {
  }
  if (do_malloc(1) != nullptr || !NewFails()) ::_exit(1);
  const char armed = 1;
  if (::write(armed_fd, &armed, 1) != 1) ::_exit(1);
  ::close(armed_fd);
  ::_exit(body());
}

}  // namespace

HeapTrapResult RunWithoutHeap(const std::function<int()>& body) {
  HeapTrapResult result;
  int fds[2];
  if (::pipe(fds) != 0) return result;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(body, fds[1]);
  }
  ::close(fds[1]);
  result.forked = true;
  char armed = 0;
  ssize_t n;
  while ((n = ::read(fds[0], &armed, 1)) < 0 && errno == EINTR) {
  }
  ::close(fds[0]);
  result.armed = n == 1 && armed == 1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace planb::testing
