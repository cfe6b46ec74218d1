// The key format of a map whose store type takes number keys (the ranged types): the plugin option key_format
// (planb/plugin.h kKeyFormatOption), the one plugin option the host reads itself. It decides how the host
// parses lookup keys (numbers, or address text handed to the plugin) and prints and compares KeyStart / KeyEnd.
#pragma once

#include <string>
#include <vector>

#include "host/config/config.h"
#include "planb/plugin.h"

namespace planb {

enum class KeyFormat { kNumber, kIpv4, kIp };

// The map's key_format: absent or "number" is kNumber; "ipv4", "ip". Any other value reads as kNumber here
// (the plugin's create_store refuses it, naming the map, so no such map ever opens).
KeyFormat MapKeyFormat(const MapConfig& config);
const char* KeyFormatName(KeyFormat format);

// Whether lookups of a map of type `d` with `config` take a signed 64-bit number (else the key is text).
bool TakesNumberKeys(const PluginDescriptor& d, const MapConfig& config);
// Whether its KeyStart / KeyEnd are IP addresses (FieldKind::kAddress).
inline bool HasAddressKeys(const PluginDescriptor& d, const MapConfig& config) {
  return d.lookup_key == LookupKeyKind::kNumber && MapKeyFormat(config) != KeyFormat::kNumber;
}

// The fields queries and output see for the map: the type's, with KeyStart / KeyEnd as FieldKind::kAddress when
// HasAddressKeys. Views into the descriptor (names).
std::vector<FieldSpec> MapFields(const PluginDescriptor& d, const MapConfig& config);

}  // namespace planb
