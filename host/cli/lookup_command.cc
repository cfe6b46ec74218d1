#include <chrono>

#include "host/cli/commands.h"
#include "host/common/iso_time.h"
#include "host/common/numbers.h"
#include "host/storage/map_reader.h"

namespace planb {
namespace {

bool HasField(const PluginDescriptor& d, RowField field) {
  for (uint32_t i = 0; i < d.field_count; ++i) {
    if (d.fields[i].field == field) return true;
  }
  return false;
}

// Fills `lookup` from the command line for the map's type; false after printing what is wrong.
bool MakeLookupKey(const CommandLine& cli, const MapPlugins& plugins, LookupKey* lookup, std::ostream& err) {
  const PluginDescriptor& d = plugins.type_descriptor();
  const std::string& map = plugins.config().name;
  const std::string& key = cli.args[1];
  if (d.lookup_key == LookupKeyKind::kNumber) {
    if (!ParseInt64(key, &lookup->number)) {
      const bool digits = key.find_first_not_of("+-0123456789") == std::string::npos;
      err << "planb: KEY '" << key << "' is " << (digits ? "outside the signed 64-bit range" : "not a whole number")
          << "; map " << map << " (type " << d.name << ") is keyed by signed 64-bit numbers\n";
      return false;
    }
  } else {
    lookup->key = Bytes(key);
  }
  lookup->time_ms = CurrentTimeMs();
  if (cli.time) {
    if (!d.lookup_uses_time) {
      err << "planb: --time does not apply to map " << map << " (type " << d.name << " has no time)\n";
      return false;
    }
    if (!ParseIsoTime(*cli.time, &lookup->time_ms)) {
      err << "planb: --time: '" << *cli.time << "' is not an ISO-8601 time (e.g. 2024-01-01T08:10:22.023Z)\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string& map = cli.args[0];
  const std::string& key = cli.args[1];
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(map, &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  LookupKey lookup;
  if (!MakeLookupKey(cli, *plugins, &lookup, err)) return kExitError;
  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenShard(map, &shard);
  if (s.code() == Code::kNotFound) {
    err << "planb: " << plugins->config().name << ": no data loaded yet, so no key '" << key << "'\n";
    return kExitNotFound;
  }
  MapReader reader;
  if (s.ok()) s = reader.Open(shard);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  Row row;
  ErrorBuffer error;
  Code code = reader.Lookup(lookup, &row, &error);
  if (code == Code::kNotFound) {
    err << "planb: " << plugins->config().name << ": no key '" << key << "'"
        << (cli.time ? " at " + *cli.time : std::string()) << "\n";
    return kExitNotFound;
  }
  if (code != Code::kOk) {
    err << "planb: " << shard->path() << ": " << Status::FromPlugin(code, error).message() << "\n";
    return kExitError;
  }
  const PluginDescriptor& d = plugins->type_descriptor();
  if (HasField(d, RowField::kValue)) {
    out.write(reinterpret_cast<const char*>(row.value.data), static_cast<std::streamsize>(row.value.size));
    out << "\n";
  } else if (HasField(d, RowField::kStart)) {
    out << FormatIsoTime(row.session_start_ms) << " " << FormatIsoTime(row.session_end_ms) << "\n";
  }
  return kExitOk;
}

}  // namespace planb
