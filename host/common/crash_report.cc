#include "host/common/crash_report.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <mutex>

namespace planb {
namespace {

thread_local const CrashScope* current_scope = nullptr;

#if defined(__SANITIZE_ADDRESS__)
constexpr int kSignals[] = {SIGILL};  // ASan reports the others itself, with a stack
#else
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#endif

void WriteAll(const char* text, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, size);
    if (n <= 0) return;
    text += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteText(const char* text) { WriteAll(text, ::strlen(text)); }

void WriteNumber(int value) {
  char digits[16];
  int n = 0;
  unsigned v = static_cast<unsigned>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < 16);
  char out[16];
  for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  WriteAll(out, static_cast<size_t>(n));
}

const char* SignalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGILL: return "Illegal instruction";
    case SIGFPE: return "Floating point exception";
    default: return "signal";
  }
}

void Handle(int signal) { ReportCrash(signal); }

}  // namespace

void InstallCrashReport() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action;
    ::memset(&action, 0, sizeof action);
    action.sa_handler = &Handle;
    ::sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_NODEFER;  // a fault inside the handler dies of the default action
    for (int signal : kSignals) ::sigaction(signal, &action, nullptr);
  });
}

CrashScope::CrashScope(const std::string& what) : what_(what), outer_(current_scope) { current_scope = this; }

CrashScope::~CrashScope() { current_scope = outer_; }

void ReportCrash(int signal) {
  const CrashScope* scope = current_scope;
  if (scope == nullptr) {
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    ::_exit(128 + signal);  // not reached: the default action of these signals ends the process
  }
  WriteText("planb: fatal signal ");
  WriteNumber(signal);
  WriteText(" (");
  WriteText(SignalName(signal));
  WriteText(") while ");
  WriteAll(scope->what_.data(), scope->what_.size());
  WriteText("\n");
  ::_exit(2);
}

}  // namespace planb
