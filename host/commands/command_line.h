// The planb command line: `planb [options] COMMAND [ARG...] [options]`, parsed with Boost.Program_options.
// Options may come before or after the arguments. There are no short options besides -h, so an argument may
// start with '-' (a negative number is a key, not an option); `--` ends the options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planb/status.h"

namespace planb {

struct CommandLine {
  std::string command;            // "" when only --help or --version was asked for
  std::vector<std::string> args;  // the command's positional arguments
  std::string home;
  std::string config;
  std::vector<std::string> plugin_dirs;
  std::optional<std::string> effective_time;  // load
  std::optional<std::string> batch_id;        // load --batch-id
  std::optional<std::string> time;            // lookup: the instant asked about (default: now)
  std::optional<std::string> keys_from;       // lookup: a file of keys, one per line ("-" = stdin)
  std::optional<std::string> min_version;     // lookup: wait for a content version at least this (load prints it)
  std::optional<std::string> where;           // query
  std::optional<std::string> database_type;   // export --format mmdb: the file's metadata database_type
  std::optional<std::string> format;          // query: table (default), csv, json; lookup: text (default), json, csv
  bool quiet = false;                         // lookup: absent keys are not named on stderr
  std::optional<std::string> limit;           // query: text, checked by the command
  bool explain = false;                       // query
  bool remote = false;                        // lookup, query: run on a storage node (docs/protocol.md READ)
  bool all = false;                           // delete: every row of the map
  bool cluster = false;                       // stores: every storage node's versions
  bool replace = false;                       // load --replace
  bool no_wait = false;                       // load --no-wait: succeed once staged, merged or not
  bool dry_run = false;                       // delete, maintain: report what would go, change nothing
  std::string bind;                           // serve: endpoint override
  std::string ready_file;                     // serve
  std::vector<std::string> data;              // bench: the reference-data files (--data, several after it)
  std::optional<std::string> maps;            // bench: comma-separated map names
  std::optional<std::string> chart;           // bench: SVG output file
  std::optional<std::string> lookups;         // bench: text, checked by the command
  std::optional<std::string> runs;            // bench: text, checked by the command
  std::optional<std::string> scratch;         // bench: where the scratch home is made
  bool once = false;                          // maintain
  bool accept_older = false;                  // refresh: install the nodes' copy even when older
  std::optional<std::string> map;             // maintain: only this map; conform: the map the data names
  std::optional<std::string> type;            // conform, bench: the store type to try
  std::optional<std::string> scheme;          // conform, bench: its key scheme
  std::vector<std::string> plugin_options;    // conform, bench: --option NAME=VALUE, repeatable
  std::optional<std::string> expect;          // conform: the expected rows (CSV)
  bool unordered = false;                     // conform: compare the expected rows as a set
  std::optional<std::string> dir;             // keygen: where the key files go (default: .)
  std::vector<std::string> enrich_lookups;    // enrich: --lookup TARGET=MAP:FIELD[@TIMEFIELD], repeatable
  std::vector<std::string> fallbacks;         // enrich: --fallback TARGET=VALUE, repeatable
  std::optional<std::string> on_miss;         // enrich: keep (default), drop, tag
  std::optional<std::string> input;           // enrich: json (default), csv
  std::optional<std::string> output;          // enrich: json, csv (default: as --input)
  bool strict = false;                        // enrich: a malformed event is an error
  // load --format csv|jsonl: the columns each role comes from (--map names the map; --time the time column).
  std::optional<std::string> key_column;      // --key
  std::optional<std::string> from_column;     // --from
  std::optional<std::string> to_column;       // --to
  std::optional<std::string> timeout_column;  // --timeout-column
  std::optional<std::string> time_unit;       // --time-unit (load --format csv|jsonl, enrich)
  std::optional<std::string> value_column;    // --value
  std::optional<std::string> value_json;      // --value-json A,B
  std::optional<std::string> columns;         // --columns A,B,C: CSV without a header line
  bool comments = false;                      // --comments: CSV lines starting with '#' are skipped
  bool help = false;
  bool version = false;
};

// Errors name the offending argument; the caller prints them with the usage hint and exits 2.
Status ParseCommandLine(const std::vector<std::string>& argv, CommandLine* out);

// The text of `planb --help`, or of `planb COMMAND --help` when `command` is known.
std::string UsageText(const std::string& command);

}  // namespace planb
