// A map's store type and key scheme, instantiated from its config section. Checks every option of the section
// against what the chosen plugins declare and hands each plugin every option it declares (the config's value,
// else its default). Every call into the plugins goes through the host's guards (guarded_store.h,
// guarded_scheme.h). Destroys what it created through the plugins that made it.
// Thread-safety: immutable after Create; store() and scheme() may be used from many threads.
#pragma once

#include <memory>
#include <string>

#include "host/config/config.h"
#include "host/plugin_host/guarded_scheme.h"
#include "host/plugin_host/guarded_store.h"
#include "host/plugin_host/plugin_registry.h"
#include "planb/plugin.h"
#include "planb/status.h"

namespace planb {

class MapPlugins {
 public:
  static constexpr const char* kDefaultScheme = "hashed";

  static Status Create(const MapConfig& config, const PluginRegistry& registry, std::unique_ptr<MapPlugins>* out);
  ~MapPlugins();
  MapPlugins(const MapPlugins&) = delete;
  MapPlugins& operator=(const MapPlugins&) = delete;

  const MapConfig& config() const { return config_; }
  const GuardedStore* store() const { return guarded_store_.get(); }
  // The guarded adapter the store type also uses; null for types without a text key.
  const KeyScheme* scheme() const { return guarded_scheme_.get(); }
  const PluginDescriptor& type_descriptor() const { return *type_.descriptor; }
  const PluginDescriptor* scheme_descriptor() const { return scheme_plugin_.descriptor; }
  // The plugin files that serve the map (the verifier program loads the same ones); scheme_file() is empty for a
  // type without a text key.
  const std::string& type_file() const { return type_.file; }
  const std::string& scheme_file() const { return scheme_plugin_.file; }
  // "store type 'x' (FILE)" and, when it has one, ", scheme 'y' (FILE)": the plugins named in errors and logs.
  std::string Labels() const;
  // The SDK minor the store type was built against (what its inline helpers know, e.g. JSON values: 7.8).
  uint32_t type_abi_minor() const { return type_.abi_minor; }
  // The scheme's tables this map creates and opens: the first N it declares (KeyScheme::TablesInUse).
  uint32_t scheme_tables_in_use() const { return scheme_tables_in_use_; }

 private:
  explicit MapPlugins(MapConfig config) : config_(std::move(config)) {}

  MapConfig config_;
  // Copies (not pointers into the registry) whose shared_library keeps each plugin's code loaded.
  LoadedPlugin type_;
  LoadedPlugin scheme_plugin_;  // descriptor null when the type takes no scheme
  Store* store_ = nullptr;
  KeyScheme* scheme_ = nullptr;
  std::unique_ptr<GuardedScheme> guarded_scheme_;
  std::unique_ptr<GuardedStore> guarded_store_;
  uint32_t scheme_tables_in_use_ = 0;
};

}  // namespace planb
