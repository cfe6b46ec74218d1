// Read-your-writes on nodes that read snapshots: `planb refresh [MAP...]` fetches newer snapshots now
// (docs/snapshots.md, "Fresh data after a load"; lookup --min-version is host/commands/min_version.cc).
#include <chrono>
#include <iostream>
#include <thread>

#include "host/cli/commands.h"
#include "host/commands/read_commands.h"
#include "host/common/iso_time.h"
#include "host/snapshot/snapshot_manager.h"
#include "planb/lmdb.h"

namespace planb {

int RunRefreshCommand(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err) {
  if (runtime.config().cluster.IsStorageNode()) {
    out << "this node reads its own shards (a storage node or a single node): they are always current, there is "
           "nothing to refresh\n";
    return kExitOk;
  }
  std::vector<std::string> maps = cli.args;
  // Moving back is a decision about one map's data: it is named, never implied by "every map".
  if (cli.accept_older && maps.empty()) {
    err << "planb: refresh --accept-older needs the MAP(s) whose snapshot to move back (planb stores lists the "
           "snapshots ahead of every node)\n";
    return kExitError;
  }
  if (maps.empty()) {
    for (const auto& entry : runtime.catalog().maps()) maps.push_back(entry.first);
  }
  int exit_code = kExitOk;
  for (const std::string& map : maps) {
    std::shared_ptr<const MapPlugins> plugins;
    Status s = runtime.catalog().Get(map, &plugins);
    bool changed = false;
    ContentVersion held;
    const bool had = s.ok() && ReadServedVersion(runtime, plugins->config().name, &held).ok();
    if (s.ok()) s = runtime.snapshots()->Refresh(plugins->config().name, &changed, cli.accept_older);
    if (s.code() == Code::kNotFound && plugins != nullptr) {
      out << plugins->config().name << ": nothing merged into it yet\n";
      continue;
    }
    if (!s.ok()) {
      err << "planb: " << s.message() << "\n";
      exit_code = kExitError;
      continue;
    }
    ContentVersion version;
    s = ReadServedVersion(runtime, plugins->config().name, &version);
    const bool older = changed && had && s.ok() && version.batches < held.batches;
    out << plugins->config().name << ": "
        << (older     ? "installed the nodes' older snapshot (the one held was at " + std::to_string(held.batches) + ")"
            : changed ? std::string("fetched a newer snapshot")
                      : std::string("the snapshot held is current"))
        << ", content version " << (s.ok() ? std::to_string(version.batches) : "?") << "\n";
  }
  return exit_code;
}

}  // namespace planb
