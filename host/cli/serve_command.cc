#include <signal.h>

#include <atomic>
#include <cstdint>

#include "host/cli/commands.h"
#include "host/common/iso_time.h"
#include "host/common/log_file.h"
#include "host/common/log_format.h"
#include "host/common/log_text.h"
#include "host/serve/storage_node.h"

namespace planb {

namespace {

// Set from the signal handlers: lock-free atomic operations are async-signal-safe.
std::atomic<bool> stop_requested{false};
std::atomic<uint64_t> hangups{0};

extern "C" void RequestStop(int) { stop_requested.store(true); }
// SIGHUP (logrotate's postrotate, `systemctl reload`): reopen the log, never stop.
extern "C" void CountHangup(int) { hangups.fetch_add(1); }

// The node's last line, in its log's format: with log_format = json every line it writes is an object.
int Fail(const Runtime& runtime, const std::string& message, std::ostream& err) {
  const std::string text = "planb: " + LogValue(message, 4096);
  if (runtime.config().operations.log_format == LogFormat::kJson) {
    LogRecord record;
    record.time_ms = CurrentTimeMs();
    record.level = LogLevel::kError;
    record.event = "serve.failed";
    record.node = runtime.config().cluster.node_name;
    record.message = text;
    err << FormatLogLine(record, LogFormat::kJson) << "\n";
  } else {
    err << text << "\n";
  }
  return kExitError;
}

}  // namespace

int RunServeCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  struct sigaction action {};
  action.sa_handler = RequestStop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  struct sigaction hangup {};
  hangup.sa_handler = CountHangup;
  sigemptyset(&hangup.sa_mask);
  hangup.sa_flags = SA_RESTART;
  ::sigaction(SIGHUP, &hangup, nullptr);
  // A sender vanishing mid-reply must not kill the node.
  ::signal(SIGPIPE, SIG_IGN);

  ServeOptions options;
  options.bind = cli.bind;
  options.ready_file = cli.ready_file;
  options.hangups = &hangups;
  LogFile log_file;
  if (runtime.config().operations.log_file) {
    const Status opened = log_file.Open(*runtime.config().operations.log_file);
    if (!opened.ok()) return Fail(runtime, "serve: " + opened.message(), err);
    options.log_file = &log_file;
  }
  StorageNode node(runtime, options, err);
  const Status s = node.Run(stop_requested);
  if (!s.ok()) return Fail(runtime, s.message(), err);
  return kExitOk;
}

}  // namespace planb
