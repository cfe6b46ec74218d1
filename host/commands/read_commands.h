// The read commands, lookup and query, as functions over a Runtime: the CLI parses its command line into a typed
// request and runs RunLookup or RunQuery, and a storage node runs the same functions for a peer's READ
// (docs/protocol.md) with that request's cost budget, so both print the same bytes. Each returns the process
// exit status and writes results to `out`, messages to `err`.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "host/commands/command_line.h"
#include "host/commands/lookup_output.h"
#include "host/commands/row_formats.h"
#include "host/common/read_budget.h"
#include "host/runtime.h"
#include "host/storage/content_version.h"

namespace planb {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotFound = 1;
inline constexpr int kExitError = 2;

// What a lookup asks: the keys of one map at one instant, in one format.
struct LookupRequest {
  std::string map;
  std::vector<std::string> keys;     // at least one
  // Where each key came from ("lookup" for an argument or a peer's READ, "--keys-from FILE line 7"), for an
  // error about a key the map refuses; empty: "lookup" for every key.
  std::vector<std::string> sources;
  std::optional<int64_t> time_ms;    // the instant asked about (ms since the epoch); none: now
  LookupFormat format = LookupFormat::kText;
  bool quiet = false;                // absent keys are not named on stderr
  // Printed as several keys even when one is asked: keys from standard input (--keys-from -), a stream whose
  // answers `lookup --remote` prints as they come, before it knows how many there will be.
  bool several = false;
};

// What a query asks: one map's rows a filter accepts, up to a limit, in one format.
struct QueryRequest {
  std::string map;
  std::optional<std::string> where;  // the filter expression (docs/query.md), parsed here
  std::optional<uint64_t> limit;     // rows, above 0
  OutputFormat format = OutputFormat::kTable;
  bool explain = false;              // the scan's statistics on `err`
};

// `budget`: a remote READ's cost cap, charged per row examined (a spent budget ends the read with exit 2 and the
// cap's message); nullptr for local commands.
int RunLookup(Runtime& runtime, const LookupRequest& request, ReadBudget* budget, std::ostream& out,
              std::ostream& err);
int RunQuery(Runtime& runtime, const QueryRequest& request, ReadBudget* budget, std::ostream& out,
             std::ostream& err);

// The CLI's `planb lookup` and `planb query`: the command line checked and made a request (lookup also reads
// --keys-from and waits for --min-version), then run as above.
int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);
int RunQueryCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);

// lookup --time TEXT: the instant in ms, or false after printing what is wrong (not an ISO-8601 time).
bool ParseLookupTime(const std::string& text, int64_t* time_ms, std::ostream& err);

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
