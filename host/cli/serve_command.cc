#include <signal.h>

#include <atomic>

#include "host/cli/commands.h"
#include "host/serve/storage_node.h"

namespace planb {

namespace {

// Set from the signal handler: a lock-free atomic store is async-signal-safe.
std::atomic<bool> stop_requested{false};

extern "C" void RequestStop(int) { stop_requested.store(true); }

}  // namespace

int RunServeCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  struct sigaction action {};
  action.sa_handler = RequestStop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  // A sender vanishing mid-reply must not kill the node.
  ::signal(SIGPIPE, SIG_IGN);

  ServeOptions options;
  options.bind = cli.bind;
  options.ready_file = cli.ready_file;
  StorageNode node(runtime, options, err);
  const Status s = node.Run(stop_requested);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
