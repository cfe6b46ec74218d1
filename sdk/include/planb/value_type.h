// The byte stored before every value (on-disk format; a new SDK major and store versions if it changes).
#pragma once

#include <cstdint>

namespace planb {

enum class ValueType : uint8_t {
  kString = 1,       // plain text
  kXmlFragment = 2,  // a well-formed XML fragment carrying the namespace declarations it uses
};

inline const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kXmlFragment: return "xml";
  }
  return "unknown";
}

inline bool IsKnownValueType(uint8_t b) { return b == 1 || b == 2; }

}  // namespace planb
