#include "host/plugin_host/key_format.h"

namespace planb {

KeyFormat MapKeyFormat(const MapConfig& config) {
  for (const auto& [name, value] : config.plugin_options) {
    if (name != kKeyFormatOption) continue;
    if (value == "ipv4") return KeyFormat::kIpv4;
    if (value == "ip") return KeyFormat::kIp;
  }
  return KeyFormat::kNumber;
}

const char* KeyFormatName(KeyFormat format) {
  switch (format) {
    case KeyFormat::kIpv4:
      return "ipv4";
    case KeyFormat::kIp:
      return "ip";
    default:
      return "number";
  }
}

bool TakesNumberKeys(const PluginDescriptor& d, const MapConfig& config) {
  return d.lookup_key == LookupKeyKind::kNumber && MapKeyFormat(config) == KeyFormat::kNumber;
}

std::vector<FieldSpec> MapFields(const PluginDescriptor& d, const MapConfig& config) {
  std::vector<FieldSpec> fields(d.fields, d.fields + d.field_count);
  if (!HasAddressKeys(d, config)) return fields;
  for (FieldSpec& f : fields) {
    if (f.field == RowField::kKeyStart || f.field == RowField::kKeyEnd) f.kind = FieldKind::kAddress;
  }
  return fields;
}

}  // namespace planb
