#include <iomanip>

#include "host/cli/commands.h"

namespace planb {

int RunPluginsCommand(Runtime& runtime, const CommandLine&, std::ostream& out, std::ostream&) {
  out << std::left;
  for (const LoadedPlugin& plugin : runtime.registry().plugins()) {
    const PluginDescriptor& d = *plugin.descriptor;
    out << std::setw(8) << PluginKindName(d.kind) << std::setw(16) << d.name << std::setw(9) << d.version
        << plugin.file << "\n";
  }
  return kExitOk;
}

}  // namespace planb
