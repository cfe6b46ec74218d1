// Fatal signals inside plugin code, said rather than died of: while a CrashScope is open on a thread (the merge
// of a map, loading a plugin file), a SIGSEGV, SIGBUS, SIGILL or SIGFPE on that thread writes one line to stderr,
// "planb: fatal signal 11 (Segmentation fault) while merging map 'm' of staged batch ... (store type 'x' (FILE))",
// and ends the process with exit status 2. Outside a scope the signal takes its default course (a core dump).
// What was in flight is on disk already (merge_attempts.h), so the next run counts the death and, at the third,
// quarantines the batch naming the same map and plugins.
// The handler does only what is async-signal-safe: write(2) of a line prepared when the scope opened, then _exit.
// Under AddressSanitizer, its own reports of SIGSEGV, SIGBUS and SIGFPE are left in place.
#pragma once

#include <string>

namespace planb {

// Installs the handlers (once per process; later calls do nothing).
void InstallCrashReport();

// The handler's work, exposed for its own test: writes the open scope's line for `signal` and exits 2 (or, with
// no scope open, restores the default action and raises `signal` again).
[[noreturn]] void ReportCrash(int signal);

// The line the handler writes while this scope is open on the current thread. Scopes nest: the innermost speaks.
// Not copyable; allocates once, when it opens.
class CrashScope {
 public:
  explicit CrashScope(const std::string& what);
  ~CrashScope();
  CrashScope(const CrashScope&) = delete;
  CrashScope& operator=(const CrashScope&) = delete;

 private:
  std::string what_;
  const CrashScope* outer_;

  friend void ReportCrash(int signal);  // reads what_
};

}  // namespace planb
