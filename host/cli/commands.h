// The planb commands. Each returns the process exit status and writes results to `out`, messages to `err`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "host/cli/command_line.h"
#include "host/runtime.h"

namespace planb {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotFound = 1;
inline constexpr int kExitError = 2;

int RunLoadCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunQueryCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunServeCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunStoresCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// lookup or query with --remote: runs the command on a storage node (host/transfer/remote_read.h) and prints
// its stdout and stderr as they are; exits with its exit status (2 when no node answered).
int RunRemoteCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunCleanupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);

// lookup's keys: the arguments after MAP, then each line of --keys-from ("-" = stdin; a trailing "\r" is dropped,
// as files written on Windows end lines with it; blank lines are skipped). False after printing what is wrong
// (no key, unreadable file).
bool CollectLookupKeys(const CommandLine& cli, std::vector<std::string>* keys, std::ostream& err);
int RunPluginsCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// refresh [MAP...]: fetches newer snapshots now (refresh_command.cc).
int RunRefreshCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
// lookup --min-version N: waits until what lookups of `map` read (the shard on a storage node, else the snapshot,
// refetched as needed) has a content version count of at least `min_batches`, at most 10 x request_timeout.
// False after printing why not (the version seen, the wait) on `err`.
bool WaitForMinVersion(Runtime& runtime, const std::string& map, uint64_t min_batches, std::ostream& err);

}  // namespace planb
