#include "host/cli/commands.h"
#include "host/storage/map_reader.h"

namespace planb {

int RunLookupCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string& map = cli.args[0];
  const std::string& key = cli.args[1];
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(map, &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenShard(map, &shard);
  if (s.code() == Code::kNotFound) {
    err << "planb: " << plugins->config().name << ": no data loaded yet, so no key '" << key << "'\n";
    return kExitNotFound;
  }
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  MapReader reader;
  s = reader.Open(shard);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  LookupKey lookup;
  lookup.key = Bytes(key);
  Row row;
  ErrorBuffer error;
  Code code = reader.Lookup(lookup, &row, &error);
  if (code == Code::kNotFound) {
    err << "planb: " << plugins->config().name << ": no key '" << key << "'\n";
    return kExitNotFound;
  }
  if (code != Code::kOk) {
    err << "planb: " << shard->path() << ": " << Status::FromPlugin(code, error).message() << "\n";
    return kExitError;
  }
  out.write(reinterpret_cast<const char*>(row.value.data), static_cast<std::streamsize>(row.value.size));
  out << "\n";
  return kExitOk;
}

}  // namespace planb
