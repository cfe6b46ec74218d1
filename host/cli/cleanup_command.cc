// `planb cleanup`: deletes snapshots that a newer one of the same map has superseded and that no process holds,
// and partial fetches of processes that are gone, and syncs a snapshot a diff installed unsynced a minute ago or
// more. Prints each path it deleted, one per line (as `rm -v` would), then each it synced.
#include "host/cli/commands.h"

namespace planb {

int RunCleanupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  (void)cli;
  CleanupReport report;
  Status s = runtime.snapshots()->Cleanup(&report);
  for (const std::string& path : report.deleted) out << "removed '" << path << "'\n";
  for (const std::string& path : report.synced) out << "synced '" << path << "'\n";
  if (!s.ok()) {
    err << "planb: cleanup: " << s.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace planb
