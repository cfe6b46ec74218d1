// The read commands, lookup and query, as functions over a Runtime: the CLI runs them for `planb lookup|query`
// and a storage node runs them for a peer's READ (docs/protocol.md), so both print the same bytes. Each returns
// the process exit status and writes results to `out`, messages to `err`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "host/commands/command_line.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotFound = 1;
inline constexpr int kExitError = 2;

int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunQueryCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);

// lookup's keys: the arguments after MAP, then each line of --keys-from ("-" = stdin; a trailing "\r" is dropped,
// as files written on Windows end lines with it; blank lines are skipped). False after printing what is wrong
// (no key, unreadable file). `sources`, when given, gets where each key came from ("lookup" for an argument,
// "--keys-from FILE line 7"), for an error about a key the map refuses.
bool CollectLookupKeys(const CommandLine& cli, std::vector<std::string>* keys, std::ostream& err,
                       std::vector<std::string>* sources = nullptr);

// The content version of what lookups of `map` read now: the shard (storage node) or the newest snapshot,
// without fetching. kNotFound when there is none.
Status ReadServedVersion(Runtime& runtime, const std::string& map, ContentVersion* version);

// lookup --min-version N: waits until what lookups of `map` read (the shard on a storage node, else the snapshot,
// refetched as needed) has a content version count of at least `min_batches`, at most 10 x request_timeout.
// False after printing why not (the version seen, the wait) on `err`.
bool WaitForMinVersion(Runtime& runtime, const std::string& map, uint64_t min_batches, std::ostream& err);

}  // namespace planb
