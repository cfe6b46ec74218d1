// Every configured map with its instantiated plugins. Built once at start-up, so that a config naming an unknown
// type, scheme or option fails before any work. Thread-safety: immutable after Build.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "host/config/config.h"
#include "host/plugin_host/map_plugins.h"
#include "host/plugin_host/plugin_registry.h"

namespace planb {

class MapCatalog {
 public:
  Status Build(const Config& config, const PluginRegistry& registry);

  // The map named `name` as a user wrote it (lower-cased first); NotFound names the known maps.
  Status Get(std::string_view name, std::shared_ptr<const MapPlugins>* out) const;
  const std::map<std::string, std::shared_ptr<const MapPlugins>>& maps() const { return maps_; }

 private:
  std::map<std::string, std::shared_ptr<const MapPlugins>> maps_;
};

}  // namespace planb
