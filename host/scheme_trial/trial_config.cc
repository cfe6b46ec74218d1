#include "host/scheme_trial/trial_config.h"

namespace planb {
namespace {

constexpr char kValueDedup[] = "value_dedup";

}  // namespace

bool DeclaresOption(const PluginDescriptor& d, const std::string& name) {
  for (uint32_t i = 0; i < d.option_count; ++i) {
    if (name == d.options[i].name) return true;
  }
  return false;
}

MapConfig TrialMapConfig(const MapConfig& map, const PluginRegistry& registry, const PluginDescriptor& scheme,
                         bool value_dedup) {
  MapConfig trial = map;
  trial.scheme = scheme.name;
  trial.synchronise_merge = false;
  trial.plugin_options.clear();
  const LoadedPlugin* type = registry.Find(PluginKind::kStoreType, map.type);
  for (const auto& [name, value] : map.plugin_options) {
    if (name == kValueDedup) continue;
    if ((type != nullptr && DeclaresOption(*type->descriptor, name)) || DeclaresOption(scheme, name)) {
      trial.plugin_options.emplace_back(name, value);
    }
  }
  if (DeclaresOption(scheme, kValueDedup))
    trial.plugin_options.emplace_back(kValueDedup, value_dedup ? "true" : "false");
  return trial;
}

std::string TrialConfigText(const MapConfig& map, const std::string& home,
                            const std::vector<std::string>& plugin_dirs) {
  // Every value came from the user's INI file (or from a plugin's name), so none holds a line break.
  std::string text = "home = " + home + "\n";
  for (const std::string& dir : plugin_dirs) text += "plugin_dir = " + dir + "\n";
  text += "[map." + map.name + "]\n";
  text += "type = " + map.type + "\n";
  text += "scheme = " + map.scheme + "\n";
  text += "max_store_size = " + std::to_string(map.max_store_size) + "\n";
  text += "max_readers = " + std::to_string(map.max_readers) + "\n";
  for (const auto& [name, value] : map.plugin_options) text += name + " = " + value + "\n";
  return text;
}

}  // namespace planb
