// What every command works with: the config, the home directory, the loaded plugins, the configured maps and
// the open environments. One per process.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/plugin_host/map_catalog.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/storage/env_cache.h"
#include "host/storage/home.h"
#include "host/snapshot/snapshot_manager.h"

namespace planb {

struct RuntimeOptions {
  std::string config_path;               // "" = ./planb.ini when it exists, else no maps
  std::string home;                      // "" = the config's home, else planb-home beside the config, else ./planb-home
  std::vector<std::string> plugin_dirs;  // added to the config's plugin_dir entries
  FetchProgress fetch_progress;          // called while a snapshot downloads (the CLI on a terminal)
  // Reads only (lookup, query, stores, the Reader): the home's directories are not created and shards open
  // MDB_RDONLY, so a home this process may not write (another user's, a read-only mount) serves reads. Fetching a
  // snapshot still writes under snapshots/ (and says so when it cannot).
  bool read_only = false;
  // Load every plugin file (`planb plugins`, `planb bench`, conform), not only those the config's maps name.
  bool all_plugins = false;
};

class Runtime {
 public:
  // Reads the config, loads plugins (the built-in directory first, then every plugin_dir), checks every map,
  // and creates the home's directories (unless options.read_only). Each plugin file that failed to load is
  // said once on stderr ("planb: plugin PATH not loaded: REASON") and does not stop the rest.
  // Unless options.all_plugins, only the files named for the types and schemes the config's maps use are loaded
  // (PluginRegistry::LoadNamed: a process that reads one map maps a few plugins, not all); when one is not found
  // so, or a map's plugins refuse its config, every file is loaded, so that errors list every plugin there is.
  static Status Open(const RuntimeOptions& options, std::unique_ptr<Runtime>* out);

  const Config& config() const { return config_; }
  const Home& home() const { return home_; }
  const PluginRegistry& registry() const { return registry_; }
  const MapCatalog& catalog() const { return catalog_; }
  EnvCache& envs() { return envs_; }

  // The shard of `map`, open; NotFound when nothing has been merged into it yet.
  Status OpenShard(std::string_view map, std::shared_ptr<MapEnv>* out);

  // What lookups and queries of `map` read on this node: its shard on a storage node (or a single node), else
  // the current local snapshot (docs/snapshots.md), fetched when there is none and, with kFetchNow, refreshed
  // first when it is stale. The returned pointer keeps a snapshot open and locked against cleanup while held;
  // a different pointer on a later call means a newer snapshot. kNoData, naming the map and the home, when the
  // map has no data here (nothing merged into it yet, or this is another home): an error, never a miss.
  Status OpenForReading(std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out);
  // The same, and when `out` is a snapshot the time it was installed here (left empty for a shard).
  Status OpenForReading(std::string_view map, StaleSnapshot stale, std::shared_ptr<MapEnv>* out,
                        std::optional<int64_t>* snapshot_created_ms);
  // The snapshots of this node (storage nodes read their shards, but `planb cleanup` still tidies snapshots/).
  // Created on first use.
  SnapshotManager* snapshots();

 private:
  Config config_;
  Home home_;
  PluginRegistry registry_;
  MapCatalog catalog_;
  EnvCache envs_;
  std::mutex snapshots_mutex_;
  std::unique_ptr<zmq::context_t> context_;  // for snapshot fetches; made with the manager
  std::unique_ptr<SnapshotManager> snapshots_;
  FetchProgress fetch_progress_;
};

}  // namespace planb
