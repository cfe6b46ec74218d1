// `planb lookup MAP KEY...`: one key prints its value as it is; several keys (arguments, then the lines of
// --keys-from) print one "KEY<TAB>VALUE" line each, in order, all read in one transaction; --format json|csv
// prints one record per key (lookup_output.h). Absent keys are named on stderr (not with --quiet) and make the
// exit status 1.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "host/commands/lookup_answers.h"
#include "host/commands/lookup_output.h"
#include "host/commands/read_commands.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/common/numbers.h"
#include "host/plugin_host/key_format.h"
#include "host/storage/map_reader.h"

namespace planb {
namespace {

bool HasField(const PluginDescriptor& d, RowField field) {
  for (uint32_t i = 0; i < d.field_count; ++i) {
    if (d.fields[i].field == field) return true;
  }
  return false;
}

// Fills `lookup` for `key` by the map's type; false after printing what is wrong. `lookup->key` views `key`.
bool MakeLookupKey(const std::string& key, int64_t time_ms, const MapPlugins& plugins, LookupKey* lookup,
                   std::ostream& err) {
  const PluginDescriptor& d = plugins.type_descriptor();
  if (TakesNumberKeys(d, plugins.config())) {
    if (!ParseInt64(key, &lookup->number)) {
      const bool digits = !key.empty() && key.find_first_not_of("+-0123456789") == std::string::npos;
      err << "planb: KEY '" << key << "' is " << (digits ? "outside the signed 64-bit range" : "not a whole number")
          << "; map " << plugins.config().name << " (type " << d.name << ") is keyed by signed 64-bit numbers\n";
      return false;
    }
  } else {
    lookup->key = Bytes(key);
  }
  lookup->time_ms = time_ms;
  return true;
}

// The instant asked about: the request's, else now. False after printing what is wrong.
bool LookupTime(const LookupRequest& request, const MapPlugins& plugins, int64_t* time_ms, std::ostream& err) {
  *time_ms = request.time_ms.value_or(CurrentTimeMs());
  const PluginDescriptor& d = plugins.type_descriptor();
  if (request.time_ms && !d.lookup_uses_time) {
    err << "planb: --time does not apply to map " << plugins.config().name << " (type " << d.name
        << " has no time)\n";
    return false;
  }
  return true;
}

}  // namespace

bool CollectLookupKeys(const CommandLine& cli, std::vector<std::string>* keys, std::ostream& err,
                       std::vector<std::string>* sources) {
  keys->assign(cli.args.begin() + 1, cli.args.end());
  if (sources != nullptr) {
    sources->clear();
    sources->assign(keys->size(), "lookup");  // the message quotes the key itself
  }
  if (cli.keys_from) {
    const std::string& path = *cli.keys_from;
    std::ifstream file;
    if (path != "-") {
      file.open(path, std::ios::binary);
      if (!file) {
        err << "planb: --keys-from: cannot read '" << path << "'\n";
        return false;
      }
    }
    std::istream& in = path == "-" ? std::cin : file;
    std::string line;
    const std::string shown = path == "-" ? std::string("standard input") : LogValue(path);
    for (uint64_t number = 1; std::getline(in, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;  // a blank line is no key (trailing blank lines, gaps between groups)
      keys->push_back(std::move(line));
      if (sources != nullptr) sources->push_back("--keys-from " + shown + " line " + std::to_string(number));
    }
    if (in.bad()) {
      err << "planb: --keys-from: error reading '" << path << "'\n";
      return false;
    }
  }
  if (keys->empty()) {
    err << "planb: lookup: no KEY given (give keys after MAP, or --keys-from FILE)\n";
    return false;
  }
  return true;
}

bool ParseLookupTime(const std::string& text, int64_t* time_ms, std::ostream& err) {
  if (ParseIsoTime(text, time_ms)) return true;
  err << "planb: --time: '" << text << "' is not an ISO-8601 time (e.g. 2024-01-01T08:10:22.023Z)\n";
  return false;
}

int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  LookupRequest request;
  request.map = cli.args[0];
  request.quiet = cli.quiet;
  if (cli.format && !ParseLookupFormat(*cli.format, &request.format)) {
    err << "planb: --format: '" << *cli.format << "' is not one of text, json, csv\n";
    return kExitError;
  }
  if (cli.time && !ParseLookupTime(*cli.time, &request.time_ms.emplace(), err)) return kExitError;
  if (!CollectLookupKeys(cli, &request.keys, err, &request.sources)) return kExitError;
  request.several = cli.keys_from && *cli.keys_from == "-";
  if (cli.min_version) {
    uint64_t min_batches = 0;
    if (!ParseCount(*cli.min_version, UINT64_MAX, &min_batches)) {
      err << "planb: --min-version: '" << *cli.min_version
          << "' is not a content version (a whole number, as load prints it)\n";
      return kExitError;
    }
    std::shared_ptr<const MapPlugins> plugins;
    const Status s = runtime.catalog().Get(request.map, &plugins);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    if (!WaitForMinVersion(runtime, plugins->config().name, min_batches, err)) return kExitError;
  }
  return RunLookup(runtime, request, nullptr, out, err);
}

int RunLookup(Runtime& runtime, const LookupRequest& request, ReadBudget* budget, std::ostream& out,
              std::ostream& err) {
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(request.map, &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  const LookupFormat format = request.format;
  const std::string& name = plugins->config().name;
  const std::vector<std::string>& keys = request.keys;
  if (keys.empty()) {
    err << "planb: lookup: no KEY given (give keys after MAP, or --keys-from FILE)\n";
    return kExitError;
  }
  const auto source = [&request](size_t i) {
    return i < request.sources.size() ? request.sources[i] : std::string("lookup");
  };
  int64_t time_ms = 0;
  if (!LookupTime(request, *plugins, &time_ms, err)) return kExitError;
  // Answers (the Reader's remote mode) refuse a key the map cannot take on its own; every other format ends the
  // lookup there. refused[i] holds the message of a refused key, "" for the others.
  const bool refuse_per_key = format == LookupFormat::kAnswers;
  std::vector<std::string> refused(refuse_per_key ? keys.size() : 0);
  std::vector<LookupKey> lookups(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!refuse_per_key) {
      if (!MakeLookupKey(keys[i], time_ms, *plugins, &lookups[i], err)) return kExitError;
      continue;
    }
    std::ostringstream why;
    if (!MakeLookupKey(keys[i], time_ms, *plugins, &lookups[i], why)) {
      refused[i] = why.str();
      if (refused[i].rfind("planb: ", 0) == 0) refused[i].erase(0, 7);
      if (!refused[i].empty() && refused[i].back() == '\n') refused[i].pop_back();
    }
  }
  const PluginDescriptor& d = plugins->type_descriptor();
  LookupShape shape;
  shape.session = !HasField(d, RowField::kValue) && HasField(d, RowField::kStart);
  shape.number_keys = TakesNumberKeys(d, plugins->config());
  shape.single = keys.size() == 1 && !request.several;  // several keys need the key beside each value
  if (!shape.session) shape.shown = ShownFields(d);
  shape.type = &d;
  const std::string at = request.time_ms ? " at " + FormatIsoTime(*request.time_ms) : std::string();

  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenForReading(request.map, StaleSnapshot::kFetchNow, &shard);
  if (s.code() == Code::kNoData && format == LookupFormat::kAnswers) {
    WriteNoDataAnswers(out);  // the Reader says kNoData, naming the node
    return kExitNotFound;
  }
  if (s.code() == Code::kNoData && format == LookupFormat::kWire) {
    // A remote lookup: every key missing at content version 0, which the client reports as the node having no
    // data once it stops waiting for a version (lookup --remote --min-version may ask before the first merge).
    std::unique_ptr<LookupWriter> writer = LookupWriter::Create(format, shape, out);
    for (size_t i = 0; i < keys.size(); ++i) writer->Missing(keys[i], lookups[i].number);
    writer->Finish();
    return kExitNotFound;
  }
  MapReader reader;
  if (s.ok()) s = reader.Open(shard);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  if (format == LookupFormat::kWire || format == LookupFormat::kAnswers) {
    // The version the answers were read at, for lookup --remote --min-version (remote_lookup.h).
    ContentVersion version;
    s = ReadContentVersion(reader.table().txn, shard->meta(), &version).WithContext(shard->path());
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    shape.batches = version.batches;
  }
  // Every key is read before anything is printed, so that an error leaves stdout empty (no half an array).
  // A session miss is worded by whether the key has sessions at other times ("no session at T", not "no key"):
  // asked only on a miss, with the lookup's own transaction and cursor.
  std::vector<Row> rows(keys.size());
  std::vector<char> found(keys.size());
  std::vector<char> has_sessions(keys.size());
  // Each row's own field values, copied out of the reader's array (the next lookup reuses it); text values view
  // the map, valid while the reader's transaction lives.
  const size_t own_count = HasOwnFields(d) ? d.field_count : 0;
  std::vector<FieldValue> own(keys.size() * own_count);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (refuse_per_key && !refused[i].empty()) continue;
    ErrorBuffer error;
    const Code code = reader.Lookup(lookups[i], &rows[i], &error);
    if (code == Code::kInvalidArgument && refuse_per_key) {
      refused[i] = Status::FromPlugin(code, error).message() + " (map " + name + ")";
      continue;
    }
    if (code == Code::kInvalidArgument) {
      // A key the map cannot take (not an address, ...): the input is at fault, so name it, not the shard.
      err << "planb: " << source(i) << ": " << Status::FromPlugin(code, error).message() << " (map " << name
          << ")\n";
      return kExitError;
    }
    if (code != Code::kOk && code != Code::kNotFound) {
      err << "planb: " << shard->path() << ": " << Status::FromPlugin(code, error).message() << "\n";
      return kExitError;
    }
    if (own_count != 0) {
      std::copy(rows[i].own_fields, rows[i].own_fields + own_count, own.begin() + i * own_count);
      rows[i].own_fields = own.data() + i * own_count;
    }
    found[i] = code == Code::kOk;
    if (found[i] || request.quiet || !shape.session) continue;
    bool any = false;
    s = reader.HasAnyRowOf(lookups[i].key, &any, budget);
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      return kExitError;
    }
    has_sessions[i] = any;
  }
  int exit_code = kExitOk;
  std::unique_ptr<LookupWriter> writer = LookupWriter::Create(format, shape, out);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (refuse_per_key && !refused[i].empty()) {
      writer->Refuse(keys[i], lookups[i].number, Code::kInvalidArgument, refused[i]);
      exit_code = kExitNotFound;
      continue;
    }
    if (found[i]) {
      writer->Found(keys[i], lookups[i].number, rows[i]);
      continue;
    }
    exit_code = kExitNotFound;
    writer->Missing(keys[i], lookups[i].number);
    if (request.quiet) continue;
    if (has_sessions[i]) {
      err << "planb: " << name << ": no session at " << FormatIsoTime(time_ms) << " for key '" << keys[i] << "'\n";
    } else {
      err << "planb: " << name << ": no key '" << keys[i] << "'" << at << "\n";
    }
  }
  writer->Finish();
  return exit_code;
}

}  // namespace planb
