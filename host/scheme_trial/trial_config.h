// The configuration of one trial: the user's map section with another key scheme and value_dedup setting, in a
// config of its own (a single node, the scratch home), so that the trial runs the same load and read paths as
// `planb load` and planb::Reader.
#pragma once

#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/plugin_host/plugin_registry.h"

namespace planb {

// `map` with scheme `scheme` and value_dedup `value_dedup` (set only when the scheme declares the option). Kept:
// the type's options, and the map's other options that `scheme` declares too (hash_bits, direct_max), so the
// configured scheme is measured as configured; the rest are the scheme's defaults.
MapConfig TrialMapConfig(const MapConfig& map, const PluginRegistry& registry, const PluginDescriptor& scheme,
                         bool value_dedup);

// Whether plugin `d` declares option `name`.
bool DeclaresOption(const PluginDescriptor& d, const std::string& name);

// INI text for a config holding only `map`, homed at `home`, loading plugins from `plugin_dirs` too.
std::string TrialConfigText(const MapConfig& map, const std::string& home, const std::vector<std::string>& plugin_dirs);

}  // namespace planb
