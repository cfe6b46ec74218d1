#include "host/plugin_host/map_catalog.h"

namespace planb {

Status MapCatalog::Build(const Config& config, const PluginRegistry& registry) {
  maps_.clear();
  unavailable_.clear();
  for (const auto& [name, map_config] : config.maps) {
    std::unique_ptr<MapPlugins> plugins;
    const Status s = MapPlugins::Create(map_config, registry, &plugins)
                         .WithContext(config.path.empty() ? "config" : config.path);
    if (s.code() == Code::kNotSupported && !registry.failures().empty()) {
      unavailable_.emplace(name, s);  // a plugin it needs may be one of the files that failed
      continue;
    }
    PLANB_RETURN_IF_ERROR(s);
    maps_[name] = std::move(plugins);
  }
  return Status::Ok();
}

Status MapCatalog::Get(std::string_view name, std::shared_ptr<const MapPlugins>* out) const {
  auto it = maps_.find(NormaliseMapName(name));
  if (it != maps_.end()) {
    *out = it->second;
    return Status::Ok();
  }
  auto broken = unavailable_.find(NormaliseMapName(name));
  if (broken != unavailable_.end()) return broken->second;
  std::string known;
  for (const auto& entry : maps_) known += (known.empty() ? "" : ", ") + entry.first;
  return Status::NotFound("map '" + std::string(name) + "' is not in the config (configured maps: " +
                          (known.empty() ? "none" : known) + ")");
}

}  // namespace planb
