// The host's side of Row::own_fields (SDK 7.1): an array of one FieldValue per field of a store type, sized once
// for the type (empty for types without RowField::kOwn fields) and reset before each plugin call that fills a Row,
// so that a warm lookup or scan row allocates nothing. Not thread-safe: one per reader, scan or slot.
#pragma once

#include <cstdint>
#include <vector>

#include "planb/plugin.h"
#include "planb/store.h"

namespace planb {

// Whether any field of `type` is RowField::kOwn.
bool HasOwnFields(const PluginDescriptor& type);

class OwnFieldValues {
 public:
  OwnFieldValues() = default;
  explicit OwnFieldValues(const PluginDescriptor& type) { Size(type); }

  // Sizes the array for `type`: field_count entries when it has own fields, none otherwise. Allocates.
  void Size(const PluginDescriptor& type);

  // Resets every entry and points `row` at them (null and 0 for a type without own fields). Allocates nothing.
  // The row's values are valid until the next Attach or this object's destruction.
  void Attach(Row* row) {
    for (FieldValue& v : values_) v = FieldValue();
    row->own_fields = values_.empty() ? nullptr : values_.data();
    row->own_field_count = static_cast<uint32_t>(values_.size());
  }

 private:
  std::vector<FieldValue> values_;
};

}  // namespace planb
