// The planb commands. Each returns the process exit status and writes results to `out`, messages to `err`.
// lookup and query live a layer below (host/commands/read_commands.h), where a storage node runs them too.
#pragma once

#include <ostream>

#include "host/commands/command_line.h"
#include "host/commands/read_commands.h"
#include "host/runtime.h"

namespace planb {

int RunLoadCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// delete MAP --where EXPR | --all [--dry-run]: a deletion batch, merged like a load's (delete_command.cc).
int RunDeleteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// export MAP OUT --format mmdb [--time T] [--database-type NAME]: a MaxMind DB file (export_command.cc).
int RunExportCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunServeCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunStoresCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// lookup or query with --remote: runs the command on a storage node (host/transfer/remote_read.h) and prints
// its stdout and stderr as they are; exits with its exit status (2 when no node answered).
int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// maintain [--once] [--dry-run] [--map MAP]: condensation and retention of the shards (maintain_command.cc).
int RunMaintainCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunBackupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunCleanupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunPluginsCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// refresh [MAP...]: fetches newer snapshots now (refresh_command.cc).
int RunRefreshCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// bench --data FILE.xml...: key schemes compared on the user's data (bench_command.cc); 130 when interrupted.
int RunBenchCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// conform --type T --data FIRST SECOND --expect ROWS.csv: the plugin author's checks (conform_command.cc). Needs
// no config and opens no runtime of the caller's: 0 when every check passed, 1 when one failed, 2 on bad input.
int RunConformCommand(const CommandLine& cli, std::ostream& out, std::ostream& err);
// enrich --lookup TARGET=MAP:FIELD[@TIMEFIELD]... [FILE...]: events from FILEs (or `in`) with the answers of
// their lookups, through planb::Reader (host/enrich/event_enricher.h); reads the files, else standard input, as
// their bytes arrive. Opens its own Reader, not a Runtime:
// 0 when done, 2 on bad arguments, --strict on a malformed event, or a map failing.
int RunEnrichCommand(const CommandLine& cli, std::ostream& out, std::ostream& err);
// keygen NAME [--dir DIR]: writes NAME.key and NAME.pub (keygen_command.cc). Needs no config or home.
int RunKeygenCommand(const CommandLine& cli, std::ostream& out, std::ostream& err);

}  // namespace planb
