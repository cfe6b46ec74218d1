#include "host/storage/own_fields.h"

namespace planb {

bool HasOwnFields(const PluginDescriptor& type) {
  for (uint32_t i = 0; i < type.field_count; ++i) {
    if (type.fields[i].field == RowField::kOwn) return true;
  }
  return false;
}

void OwnFieldValues::Size(const PluginDescriptor& type) {
  values_.assign(HasOwnFields(type) ? type.field_count : 0, FieldValue());
}

}  // namespace planb
