// `planb backup DEST`: a verified, consistent copy of this node's home while it runs (host/backup/home_backup.h).
// Steps go to stderr as they finish; the summary to stdout.
#include "host/backup/home_backup.h"
#include "host/cli/commands.h"

namespace planb {

int RunBackupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string& dest = cli.args.at(0);
  BackupReport report;
  const Status s = BackupHome(runtime, dest, &report,
                              [&err](const std::string& line) { err << "planb backup: " << line << "\n" << std::flush; });
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  out << "backed up " << runtime.home().root() << " to " << dest << ": " << report.shards << " shard(s), "
      << report.shard_bytes << " bytes; " << report.zips << " batch file(s), " << report.zip_bytes << " bytes"
      << (report.vanished > 0 ? "; " + std::to_string(report.vanished) + " merged or pruned while copying" : "")
      << (report.links_skipped > 0 ? "; " + std::to_string(report.links_skipped) + " symbolic link(s) skipped" : "")
      << "; verified\n";
  return kExitOk;
}

}  // namespace planb
