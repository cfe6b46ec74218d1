// `planb export MAP OUT --format mmdb`: a ranged map with IP address keys as a MaxMind DB file
// (host/export/mmdb_export.h). Progress goes to stderr on a terminal, the summary to stdout.
#include <sys/stat.h>
#include <unistd.h>

#include "host/cli/commands.h"
#include "host/common/iso_time.h"
#include "host/common/log_text.h"
#include "host/export/mmdb_export.h"
#include "host/plugin_host/key_format.h"
#include "host/storage/map_reader.h"

namespace planb {
namespace {

constexpr size_t kMaxDatabaseType = 256;

bool ValidDatabaseType(const std::string& name) {
  if (name.empty() || name.size() > kMaxDatabaseType) return false;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7F) return false;
  }
  return true;
}

}  // namespace

int RunExportCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  const std::string& map = cli.args.at(0);
  const std::string& path = cli.args.at(1);
  if (!cli.format) {
    err << "planb: export: give --format mmdb (the one export format)\n";
    return kExitError;
  }
  if (*cli.format != "mmdb") {
    err << "planb: export: unknown --format '" << LogValue(*cli.format) << "'; expected mmdb\n";
    return kExitError;
  }
  std::shared_ptr<const MapPlugins> plugins;
  Status s = runtime.catalog().Get(map, &plugins);
  if (!s.ok()) {
    err << "planb: " << s.message() << "\n";
    return kExitError;
  }
  const PluginDescriptor& d = plugins->type_descriptor();
  const std::string& name = plugins->config().name;
  if (!HasAddressKeys(d, plugins->config())) {
    err << "planb: export --format mmdb: map " << name << " (type " << d.name << ") is not keyed by IP addresses; "
        << "a MaxMind DB file holds a ranged map with key_format = ipv4 or ip\n";
    return kExitError;
  }
  MmdbExportSpec spec;
  spec.out_path = path;
  spec.now_ms = CurrentTimeMs();
  spec.time_ms = spec.now_ms;
  if (cli.time) {
    if (!d.lookup_uses_time) {
      err << "planb: --time does not apply to map " << name << " (type " << d.name << " has no time)\n";
      return kExitError;
    }
    if (!ParseLookupTime(*cli.time, &spec.time_ms, err)) return kExitError;
  }
  spec.database_type = cli.database_type.value_or("PlanB-" + name);
  if (!ValidDatabaseType(spec.database_type)) {
    err << "planb: export: --database-type '" << LogValue(spec.database_type)
        << "' must be 1 to 256 bytes without control characters\n";
    return kExitError;
  }
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    err << "planb: export: " << LogValue(path) << " is a directory; give the file to write\n";
    return kExitError;
  }
  if (::isatty(STDERR_FILENO) != 0) {
    spec.progress = [&err](uint64_t done, uint64_t total) {
      err << "\r\033[Kexport: looked up " << done << " of " << total << " range boundaries" << std::flush;
      if (done >= total) err << "\r\033[K" << std::flush;
    };
  }
  std::shared_ptr<MapEnv> shard;
  s = runtime.OpenForReading(map, StaleSnapshot::kFetchNow, &shard);
  MapReader reader;
  if (s.ok()) s = reader.Open(shard);
  MmdbExportSummary summary;
  if (s.ok()) s = ExportMmdb(reader, spec, &summary);
  if (!s.ok()) {
    err << "planb: export: " << s.message() << "\n";
    return kExitError;
  }
  out << "exported map " << name << " (content version " << summary.content_version << ", " << summary.rows
      << " rows) to " << LogValue(path) << ": " << summary.ranges << " ranges as " << summary.networks
      << " networks, " << summary.records << " distinct records, ip_version " << summary.ip_version << ", "
      << summary.node_count << " nodes, " << summary.bytes << " bytes\n";
  return kExitOk;
}

}  // namespace planb
