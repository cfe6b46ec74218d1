// Every configured map with its instantiated plugins. Built once at start-up, so that a config naming an unknown
// type, scheme or option fails before any work; except that when plugin files failed to load, a map whose type or
// scheme is missing is set aside (Get returns why, naming those files) so that the other maps still serve.
// Thread-safety: immutable after Build.
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

  // The map named `name` as a user wrote it (lower-cased first); NotFound names the known maps; a map set aside
  // gets the error that set it aside.
  Status Get(std::string_view name, std::shared_ptr<const MapPlugins>* out) const;
  // The maps that work (not those set aside).
  const std::map<std::string, std::shared_ptr<const MapPlugins>>& maps() const { return maps_; }
  // Maps set aside because a plugin they need did not load, with the error.
  const std::map<std::string, Status>& unavailable() const { return unavailable_; }

 private:
  std::map<std::string, std::shared_ptr<const MapPlugins>> maps_;
  std::map<std::string, Status> unavailable_;
};

}  // namespace planb
