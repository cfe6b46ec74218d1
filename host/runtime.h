// What every command works with: the config, the home directory, the loaded plugins, the configured maps and
// the open environments. One per process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/plugin_host/map_catalog.h"
#include "host/plugin_host/plugin_registry.h"
#include "host/storage/env_cache.h"
#include "host/storage/home.h"

namespace planb {

struct RuntimeOptions {
  std::string config_path;               // "" = ./planb.ini when it exists, else no maps
  std::string home;                      // "" = the config's home, else ./planb-home
  std::vector<std::string> plugin_dirs;  // added to the config's plugin_dir entries
};

class Runtime {
 public:
  // Reads the config, loads plugins (the built-in directory first, then every plugin_dir), checks every map,
  // and creates the home's directories.
  static Status Open(const RuntimeOptions& options, std::unique_ptr<Runtime>* out);

  const Config& config() const { return config_; }
  const Home& home() const { return home_; }
  const PluginRegistry& registry() const { return registry_; }
  const MapCatalog& catalog() const { return catalog_; }
  EnvCache& envs() { return envs_; }

  // The shard of `map`, open; NotFound when nothing has been merged into it yet.
  Status OpenShard(std::string_view map, std::shared_ptr<MapEnv>* out);

 private:
  Config config_;
  Home home_;
  PluginRegistry registry_;
  MapCatalog catalog_;
  EnvCache envs_;
};

}  // namespace planb
