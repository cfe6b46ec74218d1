// The byte stored before every value (on-disk format; a new SDK major and store versions if it changes).
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstdint>

namespace planb {

enum class ValueType : uint8_t {
  kString = 1,       // plain text
  kXmlFragment = 2,  // a well-formed XML fragment carrying the namespace declarations it uses
  kJson = 3,         // (since 7.8) one JSON value (RFC 8259) as text, validated once at load; numbers keep their text
};

inline const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kXmlFragment: return "xml";
    case ValueType::kJson: return "json";
  }
  return "unknown";
}

// A plugin built against headers before 7.8 knows 1 and 2 only: the host stores JSON values only in maps whose
// store type was built against 7.8 or later (it refuses the load otherwise, naming the plugin).
inline bool IsKnownValueType(uint8_t b) { return b >= 1 && b <= 3; }
inline constexpr uint32_t kJsonValuesMinor = 8;  // the SDK minor that added ValueType::kJson. Since SDK 7.8.

}  // namespace planb
