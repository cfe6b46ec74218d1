// The planb configuration file (INI, read with Boost.Program_options) and its validation.
//
//   home = /var/lib/planb            # optional; --home overrides it; default ./planb-home
//   plugin_dir = /opt/planb/plugins  # repeatable; default: the plugins installed or built with planb
//   [map.city_to_country]
//   type = state                     # a store-type plugin name
//   scheme = hashed                  # a key-scheme plugin name (default hashed, for types with a text key)
//   max_store_size = 10GiB           # LMDB map size
//   max_readers = 126
//   hash_bits = 64                   # any other key is a plugin option, checked against the plugins later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planb/status.h"

namespace planb {

inline constexpr uint64_t kDefaultMaxStoreSize = uint64_t{10} << 30;
inline constexpr uint32_t kDefaultMaxReaders = 126;

struct MapConfig {
  std::string name;         // valid map name (lower case)
  std::string type;         // store-type plugin name; required
  std::string scheme;       // key-scheme plugin name; empty when not given
  uint64_t max_store_size = kDefaultMaxStoreSize;
  uint32_t max_readers = kDefaultMaxReaders;
  // Every other key of the section, in file order: options for the type's or scheme's plugin.
  std::vector<std::pair<std::string, std::string>> plugin_options;
};

struct Config {
  std::string path;  // the file read ("" when none)
  std::string home;  // "" when not set; relative paths (home, plugin_dir) resolve against the file's directory
  std::vector<std::string> plugin_dirs;
  std::map<std::string, MapConfig> maps;  // by name

  const MapConfig* FindMap(std::string_view name) const;  // name as the user wrote it: lower-cased first
};

// Reads and validates `path`. Errors name the file, the section and the key, e.g.
// "planb.ini: [map.City]: invalid map name 'City' (lower case letters, digits and _, starting with a letter)".
Status LoadConfig(const std::string& path, Config* config);
// Same, from text in memory; `name` stands for the file in messages and `base_dir` resolves plugin_dir.
Status ParseConfig(std::string_view name, std::string_view text, const std::string& base_dir, Config* config);

// Lower case letters, digits and underscores, starting with a letter; at most 128 characters.
bool IsValidMapName(std::string_view name);
// ASCII lower-casing: how map names in input and lookups are matched to config.
std::string NormaliseMapName(std::string_view name);
// "10GiB", "512MiB", "64KiB", "1TiB", "10GB" (decimal), "1048576" (bytes). False on anything else or overflow.
bool ParseByteSize(std::string_view text, uint64_t* bytes);

}  // namespace planb
