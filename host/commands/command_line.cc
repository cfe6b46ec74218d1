#include "host/commands/command_line.h"

#include <boost/make_shared.hpp>
#include <boost/program_options.hpp>
#include <sstream>

#include "host/common/option_error.h"

namespace planb {

namespace po = boost::program_options;

namespace {

struct CommandSpec {
  const char* name;
  const char* arguments;
  const char* summary;
  std::vector<std::string> options;  // command-specific options it accepts
  size_t min_args;
  size_t max_args;
};

constexpr size_t kMany = static_cast<size_t>(-1);

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> commands = {
      {"load", "FILE...",
       "load reference-data XML files (or, with --format csv|jsonl, CSV or JSON lines rows into --map; '-' = "
       "stdin; with --format mmdb, every network of MaxMind DB files into --map) (one stream each) and merge them "
       "into the shards",
       {"effective-time", "format", "map", "key", "from", "to", "time", "time-unit", "timeout-column", "value", "value-json", "columns",
        "comments", "batch-id", "replace", "no-wait"},
       1, kMany},
      {"lookup", "MAP KEY...",
       "print the value of KEY in MAP (sessions: start end); KEY is a number for ranged maps; several keys (or "
       "--keys-from): one KEY<TAB>VALUE line each; exit 1 when a key is absent",
       {"time", "remote", "keys-from", "min-version", "format", "quiet"}, 1, kMany},
      {"query", "MAP", "print the rows of MAP that match --where, as a table, CSV or JSON",
       {"where", "format", "limit", "explain", "remote"}, 1, 1},
      {"export", "MAP OUT",
       "write MAP to the file OUT: --format mmdb writes a ranged map with IP address keys as a MaxMind DB file "
       "that libmaxminddb, Vector, Logstash and Fluent Bit read, every address answering as lookup does "
       "(docs/maxmind.md); written beside OUT, then renamed over it",
       {"format", "time", "database-type"}, 2, 2},
      {"delete", "MAP",
       "delete the rows of MAP that match --where (or --all) on every storage node, as a batch merged in order "
       "with loads; --dry-run prints them instead",
       {"where", "all", "effective-time", "dry-run", "format", "remote"}, 1, 1},
      {"serve", "",
       "run this storage node until SIGTERM/SIGINT: accept uploads from loads and merge them into the shards",
       {"bind", "ready-file"}, 0, 0},
      {"stores", "",
       "list each configured map: type, scheme, rows, content version, bytes on disk, free share, the bytes of "
       "the Reader's read index (ranged maps), last condensed and reclaimed; --cluster: every storage node's content version of each map side by side; --format table "
       "(default), json (one document) or csv (a header, one record per map)",
       {"cluster", "format"}, 0, 0},
      {"backup", "DEST",
       "copy this node's home (shards, staged, quarantined and retained batches) into DEST, a new or empty "
       "directory, while the node runs; the copy is verified before DEST appears (docs/operations.md)",
       {}, 1, 1},
      {"cleanup", "",
       "delete superseded snapshots that no process holds and abandoned partial fetches (also run by serve and "
       "by readers on a schedule)", {}, 0, 0},
      {"plugins", "",
       "list the loaded plugins (kind, name, version, SDK, file, summary, options with default and help) and the "
       "plugin files that did not load; --format table (default) or json",
       {"format"}, 0, 0},
      {"refresh", "[MAP...]",
       "fetch a newer snapshot of each MAP (default: every map) now, whatever the age of the one held; "
       "--accept-older installs the nodes' copy even when it has fewer batches than the one held",
       {"accept-older"}, 0, kMany},
      {"maintain", "",
       "condense, apply retention, reclaim disk and delete orphan shards as the config asks (docs/maintenance.md); "
       "every maintain_interval until SIGTERM/SIGINT, or once with --once",
       {"once", "dry-run", "map"}, 0, 0},
      {"bench", "--data FILE.xml...",
       "load each map of the files under every key scheme that can serve it, in a scratch home, and compare load "
       "and merge speed, lookup latency and bytes on disk; recommends a scheme per map",
       {"data", "maps", "format", "chart", "lookups", "runs", "scratch", "type", "scheme", "option", "map"}, 0, 0},
      {"conform", "--type T --data FIRST.xml SECOND.xml --expect ROWS.csv",
       "check a store type (and key scheme) through the real host: merges against the expected rows, narrowed "
       "scans, DecodeRow, allocation-free warm lookups; TAP output, exit 0 only when every check passes",
       {"type", "scheme", "option", "data", "expect", "unordered", "map", "scratch"}, 0, 0},
      {"enrich", "[FILE...]",
       "add the answers of lookups to each event of JSON lines or CSV (FILEs, else standard input) and write them "
       "to standard output; a summary on stderr (docs/enrich.md)",
       {"lookup", "fallback", "on-miss", "input", "output", "strict", "time-unit"}, 0, kMany},
      {"keygen", "NAME",
       "write a CURVE key pair: DIR/NAME.key (the secret, mode 0600) and DIR/NAME.pub (the Z85 public key); "
       "never overwrites (docs/security.md)",
       {"dir"}, 1, 1},
  };
  return commands;
}

const CommandSpec* FindCommand(const std::string& name) {
  for (const CommandSpec& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

po::options_description GlobalOptions() {
  po::options_description global("Options");
  global.add_options()
      ("home", po::value<std::string>()->value_name("DIR"),
       "home directory (default: the config's `home`, else planb-home beside the config, else ./planb-home)")
      ("config", po::value<std::string>()->value_name("FILE"), "config file (default: ./planb.ini if present)")
      ("plugin-dir", po::value<std::vector<std::string>>()->value_name("DIR")->composing(),
       "also load plugins from DIR (repeatable)")
      ("help", "show help (also -h; `planb COMMAND --help` for a command)")
      ("version", "print the version");
  return global;
}

po::options_description CommandOptions() {
  po::options_description command("Command options");
  command.add_options()
      ("effective-time", po::value<std::string>()->value_name("ISO8601"),
       "load: effective time of records without <time> (default: each file's modification time); delete: the "
       "deletion's time: matching rows older than it go, on every node, whenever they merge (default: now)")
      ("batch-id", po::value<std::string>()->value_name("ID"),
       "load: the batch's id on every node, a pipeline's idempotency key (A-Z a-z 0-9 . _ - : /, at most 200 "
       "bytes; several files: ID/1, ID/2, ...). Default: derived from each file's records, so loading the same "
       "files again merges nothing twice; a new ID loads identical content as new data")
      ("time", po::value<std::string>()->value_name("ISO8601"),
       "lookup, export: the instant asked about, for temporal types and sessions (default: now); load --format csv|jsonl: "
       "the column of the records' times (ISO-8601, or a number in --time-unit, default ms)")
      ("where", po::value<std::string>()->value_name("EXPR"),
       "query, delete: a filter, e.g. \"Key startsWith 'ca' and EffectiveTime >= '2024-01-01T00:00:00Z'\"")
      ("format", po::value<std::string>()->value_name("FORMAT"),
       "query: table (default), csv or json; lookup: text (default), json or csv; bench: table (default), csv or json; "
       "plugins: table (default) or json; stores: table (default), json or csv; load: xml (default), csv, jsonl or "
       "mmdb (a MaxMind DB file's networks into --map); export: mmdb (required)")
      ("database-type", po::value<std::string>()->value_name("NAME"),
       "export --format mmdb: the file's database_type, which some readers check (default: PlanB-MAP)")
      ("limit", po::value<std::string>()->value_name("N"), "query: print at most N rows")
      ("explain", "query: print the LMDB key range scanned and the rows examined (on stderr)")
      ("keys-from", po::value<std::string>()->value_name("FILE"),
       "lookup: also look up every line of FILE ('-' = standard input), in one read transaction")
      ("min-version", po::value<std::string>()->value_name("N"),
       "lookup: first wait (at most 10 x request_timeout) for data at content version N or newer, as load printed")
      ("quiet", "lookup: do not name absent keys on stderr (the exit status is still 1)")
      ("all", "delete: every row of the map (instead of --where)")
      ("replace", "load: after the load, each map the files write holds exactly their rows (all files are one batch; "
                  "each node builds the new content beside the old and switches in one step)")
      ("no-wait", "load: succeed once the batches are staged: a map held back behind a quarantined batch (which "
                  "otherwise fails the load, staging nothing) takes them, to merge once it is released, and "
                  "synchronise_merge maps are not waited for")
      ("cluster", "stores: ask every storage node of node_list for its content version of each map and show them "
                  "side by side, naming the nodes behind (exit 1 when nodes differ, 2 when one cannot answer)")
      ("dry-run", "delete: print the rows that would go (as query does) and their count; maintain: report what "
                  "would be removed and reclaimed; both change nothing")
      ("remote", "lookup, query, delete --dry-run: ask a storage node of node_list (in order) instead of reading "
                 "local shards")
      ("bind", po::value<std::string>()->value_name("ENDPOINT"),
       "serve: listen here instead of the config's [node.NAME] endpoint (tcp://HOST:PORT; port * = any free)")
      ("ready-file", po::value<std::string>()->value_name("FILE"),
       "serve: once serving, write the bound endpoint to FILE (for scripts and tests)")
      ("data", po::value<std::vector<std::string>>()->value_name("FILE.xml...")->multitoken()->composing(),
       "bench: the reference-data files to measure with (required; several may follow one --data); conform: "
       "FIRST.xml SECOND.xml")
      ("maps", po::value<std::string>()->value_name("A,B"),
       "bench: only these maps (default: every map of the config whose type takes a key scheme)")
      ("chart", po::value<std::string>()->value_name("OUT.svg"), "bench: also draw the figures as an SVG chart")
      ("lookups", po::value<std::string>()->value_name("N"),
       "bench: keys looked up per map and run, as hits and again as misses (default 100000)")
      ("runs", po::value<std::string>()->value_name("R"), "bench: runs per scheme; figures are medians (default 3)")
      ("once", "maintain: one pass, then exit")
      ("accept-older", "refresh: take the storage nodes' copy of each MAP named even when it has fewer batches "
       "than the snapshot held (a snapshot ahead of every node: planb stores says so)")
      ("map", po::value<std::string>()->value_name("MAP"),
       "maintain: only this map; conform, bench --type: the map the data's records name (default sample); load "
       "--format csv|jsonl: the map every row goes to; --format mmdb: the map of the networks")
      ("scratch", po::value<std::string>()->value_name("DIR"),
       "bench, conform: make the scratch home under DIR, made with its parents when missing (default $TMPDIR, "
       "else /tmp); removed afterwards")
      ("type", po::value<std::string>()->value_name("TYPE"),
       "conform, bench: the store type to try (bench: without a config; needs --data)")
      ("scheme", po::value<std::string>()->value_name("SCHEME"), "conform, bench --type: its key scheme")
      ("option", po::value<std::vector<std::string>>()->value_name("NAME=VALUE")->composing(),
       "conform, bench --type: an option of the map, as in its config section (repeatable)")
      ("expect", po::value<std::string>()->value_name("ROWS.csv"),
       "conform: the rows expected after both files, as `query --format csv` prints them")
      ("unordered", "conform: compare the rows with --expect as a set, not in `query` order (one file serves every "
       "key scheme)")
      ("dir", po::value<std::string>()->value_name("DIR"), "keygen: write the key files here (default: .)")
      ("lookup", po::value<std::vector<std::string>>()->value_name("TARGET=MAP:FIELD[@TIMEFIELD]")->composing(),
       "enrich: write the answer for FIELD's value in MAP (at the instant TIMEFIELD holds: ISO-8601 or epoch ms) "
       "at TARGET; dotted paths (client.ip; a\\.b is the member a.b) in JSON, column names in CSV (repeatable)")
      ("fallback", po::value<std::vector<std::string>>()->value_name("TARGET=VALUE")->composing(),
       "enrich: write VALUE at TARGET when its lookup misses (repeatable)")
      ("on-miss", po::value<std::string>()->value_name("keep|drop|tag"),
       "enrich: an event with a miss (no fallback) is kept as it is (default), dropped, or tagged with "
       "\"planb_miss\":[TARGET...]")
      ("input", po::value<std::string>()->value_name("json|csv"), "enrich: JSON lines (default) or CSV with a header")
      ("output", po::value<std::string>()->value_name("json|csv"), "enrich: as --input (default); csv input may be "
       "written as json")
      ("strict", "enrich: a malformed event is an error naming its line (default: passed through and counted)")
      ("key", po::value<std::string>()->value_name("COLUMN"), "load --format csv|jsonl: the column of the keys")
      ("from", po::value<std::string>()->value_name("COLUMN"),
       "load --format csv|jsonl: the column of the ranges' first keys (with --to; instead of --key)")
      ("to", po::value<std::string>()->value_name("COLUMN"),
       "load --format csv|jsonl: the column of the ranges' last keys")
      ("time-unit", po::value<std::string>()->value_name("s|ms|us|ns"),
       "load --format csv|jsonl (with --time) and enrich (with @TIMEFIELD): the unit of numeric times since the "
       "epoch (default ms; ISO-8601 text is read whatever the unit)")
      ("timeout-column", po::value<std::string>()->value_name("COLUMN"),
       "load --format csv|jsonl, session maps: the column of the sessions' timeouts (15m, PT15M or milliseconds)")
      ("value", po::value<std::string>()->value_name("COLUMN"), "load --format csv|jsonl: the column of the values")
      ("value-json", po::value<std::string>()->value_name("A,B"),
       "load --format csv|jsonl: store these columns as one JSON object value {\"A\":..,\"B\":..}")
      ("columns", po::value<std::string>()->value_name("A,B,C"),
       "load --format csv: the file's columns, when it has no header line (line 1 is then data)")
      ("comments", "load --format csv: skip lines starting with '#'");
  return command;
}

// Options of earlier releases under another name: parsed so that their use is refused naming the new one
// (RetiredOptionMessage), never listed in --help.
const po::options_description& RetiredOptions() {
  static const po::options_description retired = [] {
    po::options_description d;
    d.add_options()("timeout", po::value<std::string>());  // a column, not a duration: now --timeout-column
    return d;
  }();
  return retired;
}

// Whether the long option `name` takes a value (then the next token is that value, not the command).
bool TakesValue(const std::string& name) {
  for (const po::options_description& d : {GlobalOptions(), CommandOptions(), RetiredOptions()}) {
    const po::option_description* option = d.find_nothrow(name, false);
    if (option != nullptr) return option->semantic()->max_tokens() > 0;
  }
  return false;
}

}  // namespace

std::string UsageText(const std::string& command) {
  std::ostringstream out;
  if (const CommandSpec* c = FindCommand(command)) {
    out << "Usage: planb [options] " << c->name << (c->arguments[0] ? " " : "") << c->arguments << "\n"
        << c->summary << "\n\n";
  } else {
    out << "Usage: planb [options] COMMAND [ARG...]\n"
           "Plan B: a state store for log and event processing, kept in LMDB shards.\n\nCommands:\n";
    for (const CommandSpec& c : Commands()) {
      std::string head = std::string(c.name) + " " + c.arguments;
      out << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\n";
  }
  out << GlobalOptions() << "\n";
  if (const CommandSpec* c = FindCommand(command)) {
    // Only this command's own options.
    po::options_description own(std::string(c->name) + " options");
    const po::options_description every = CommandOptions();
    for (const std::string& name : c->options) {
      const po::option_description* option = every.find_nothrow(name, false);
      if (option != nullptr) own.add(boost::make_shared<po::option_description>(*option));
    }
    if (!c->options.empty()) out << own << "\n";
  } else {
    out << CommandOptions() << "\n";
  }
  out << "Exit status: 0 success, 1 key not found (lookup) or a check failed (conform), 2 error, 130 interrupted (bench).\n";
  return out.str();
}

Status ParseCommandLine(const std::vector<std::string>& argv, CommandLine* out) {
  // -h means --help before the command word or as its first argument (never a valid map or file name);
  // anywhere later it is an argument: `planb lookup map -h` looks up the key "-h".
  std::vector<std::string> tokens;
  int words_seen = 0;
  bool value_expected = false;
  bool options_ended = false;
  for (const std::string& token : argv) {
    if (!options_ended && !value_expected && words_seen < 2 && token == "-h") {
      tokens.push_back("--help");
      continue;
    }
    tokens.push_back(token);
    if (value_expected) {
      value_expected = false;
    } else if (token == "--") {
      options_ended = true;
    } else if (options_ended || token.rfind("--", 0) != 0) {
      ++words_seen;
    } else {
      value_expected = token.find('=') == std::string::npos && TakesValue(token.substr(2));
    }
  }
  po::options_description all;
  all.add(GlobalOptions()).add(CommandOptions()).add(RetiredOptions());
  all.add_options()("positional", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("positional", -1);
  po::variables_map vm;
  po::parsed_options parsed(nullptr);
  try {
    // No short options: a token like "-5" or "-key" is then an argument, not an option.
    int style = po::command_line_style::allow_long | po::command_line_style::long_allow_adjacent |
                po::command_line_style::long_allow_next;
    parsed = po::command_line_parser(tokens).options(all).positional(positional).style(style).run();
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::Invalid(OptionErrorText(e));
  }
  std::vector<std::string> words;
  if (vm.count("positional")) words = vm["positional"].as<std::vector<std::string>>();
  out->help = vm.count("help") > 0;
  out->version = vm.count("version") > 0;
  if (vm.count("home")) out->home = vm["home"].as<std::string>();
  if (vm.count("config")) out->config = vm["config"].as<std::string>();
  if (vm.count("plugin-dir")) out->plugin_dirs = vm["plugin-dir"].as<std::vector<std::string>>();
  if (vm.count("effective-time")) out->effective_time = vm["effective-time"].as<std::string>();
  if (vm.count("batch-id")) out->batch_id = vm["batch-id"].as<std::string>();
  if (vm.count("time")) out->time = vm["time"].as<std::string>();
  if (vm.count("where")) out->where = vm["where"].as<std::string>();
  if (vm.count("database-type")) out->database_type = vm["database-type"].as<std::string>();
  if (vm.count("format")) out->format = vm["format"].as<std::string>();
  if (vm.count("limit")) out->limit = vm["limit"].as<std::string>();
  out->explain = vm.count("explain") > 0;
  out->remote = vm.count("remote") > 0;
  out->all = vm.count("all") > 0;
  out->cluster = vm.count("cluster") > 0;
  out->replace = vm.count("replace") > 0;
  out->no_wait = vm.count("no-wait") > 0;
  out->dry_run = vm.count("dry-run") > 0;
  out->quiet = vm.count("quiet") > 0;
  if (vm.count("keys-from")) out->keys_from = vm["keys-from"].as<std::string>();
  if (vm.count("min-version")) out->min_version = vm["min-version"].as<std::string>();
  if (vm.count("bind")) out->bind = vm["bind"].as<std::string>();
  if (vm.count("ready-file")) out->ready_file = vm["ready-file"].as<std::string>();
  if (vm.count("data")) out->data = vm["data"].as<std::vector<std::string>>();
  if (vm.count("maps")) out->maps = vm["maps"].as<std::string>();
  if (vm.count("chart")) out->chart = vm["chart"].as<std::string>();
  if (vm.count("lookups")) out->lookups = vm["lookups"].as<std::string>();
  if (vm.count("runs")) out->runs = vm["runs"].as<std::string>();
  if (vm.count("scratch")) out->scratch = vm["scratch"].as<std::string>();
  out->once = vm.count("once") > 0;
  out->unordered = vm.count("unordered") > 0;
  out->accept_older = vm.count("accept-older") > 0;
  if (vm.count("map")) out->map = vm["map"].as<std::string>();
  if (vm.count("type")) out->type = vm["type"].as<std::string>();
  if (vm.count("scheme")) out->scheme = vm["scheme"].as<std::string>();
  if (vm.count("option")) out->plugin_options = vm["option"].as<std::vector<std::string>>();
  if (vm.count("expect")) out->expect = vm["expect"].as<std::string>();
  if (vm.count("dir")) out->dir = vm["dir"].as<std::string>();
  if (vm.count("lookup")) out->enrich_lookups = vm["lookup"].as<std::vector<std::string>>();
  if (vm.count("fallback")) out->fallbacks = vm["fallback"].as<std::vector<std::string>>();
  if (vm.count("on-miss")) out->on_miss = vm["on-miss"].as<std::string>();
  if (vm.count("input")) out->input = vm["input"].as<std::string>();
  if (vm.count("output")) out->output = vm["output"].as<std::string>();
  out->strict = vm.count("strict") > 0;
  if (vm.count("key")) out->key_column = vm["key"].as<std::string>();
  if (vm.count("from")) out->from_column = vm["from"].as<std::string>();
  if (vm.count("to")) out->to_column = vm["to"].as<std::string>();
  if (vm.count("timeout")) {
    return Status::Invalid("option --timeout is now --timeout-column COLUMN (load --format csv|jsonl: the column of "
                           "the sessions' timeouts)");
  }
  if (vm.count("timeout-column")) out->timeout_column = vm["timeout-column"].as<std::string>();
  if (vm.count("time-unit")) out->time_unit = vm["time-unit"].as<std::string>();
  if (vm.count("value")) out->value_column = vm["value"].as<std::string>();
  if (vm.count("value-json")) out->value_json = vm["value-json"].as<std::string>();
  if (vm.count("columns")) out->columns = vm["columns"].as<std::string>();
  out->comments = vm.count("comments") > 0;

  if (words.empty()) {
    if (out->help || out->version) return Status::Ok();
    return Status::Invalid("no command given");
  }
  out->command = words.front();
  out->args.assign(words.begin() + 1, words.end());
  const CommandSpec* spec = FindCommand(out->command);
  if (spec == nullptr) return Status::Invalid("unknown command '" + out->command + "'");
  if (out->help) return Status::Ok();
  for (const po::option& option : parsed.options) {
    const std::string& key = option.string_key;
    if (key.empty() || key == "positional" || GlobalOptions().find_nothrow(key, false) != nullptr) continue;
    bool allowed = false;
    for (const std::string& name : spec->options) allowed |= name == key;
    if (!allowed) return Status::Invalid("option --" + key + " does not apply to '" + out->command + "'");
  }
  if (out->args.size() < spec->min_args || out->args.size() > spec->max_args) {
    return Status::Invalid("'" + out->command + "' takes " + (spec->arguments[0] ? spec->arguments : "no arguments") +
                           ", got " + std::to_string(out->args.size()) + " argument(s)");
  }
  return Status::Ok();
}

}  // namespace planb
