// Values in the MaxMind DB data format (MaxMind DB File Format 2.0, "Output Data Section"), for
// `planb export --format mmdb`: each value is a control byte (type, size) and its payload. Encodes Plan B's values
// (JSON as maps, arrays, strings, numbers and booleans; text as strings) and the metadata map.
//
// JSON numbers keep their kind: an integer >= 0 is the smallest unsigned type that holds it (uint16, uint32,
// uint64, uint128), a negative one int32, a number written with a fraction or exponent a double (what an .mmdb
// imported by `planb load --format mmdb` writes for its doubles and floats: mmdb_json.h). JSON null and negative
// integers below -2^31 have no MaxMind DB type and are refused, as are strings that are not UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "planb/status.h"

namespace planb {

// The data types of the format (the spec's numbering).
enum class MmdbType : uint8_t {
  kPointer = 1,
  kUtf8String = 2,
  kDouble = 3,
  kBytes = 4,
  kUint16 = 5,
  kUint32 = 6,
  kMap = 7,
  kInt32 = 8,
  kUint64 = 9,
  kUint128 = 10,
  kArray = 11,
  kBoolean = 14,
  kFloat = 15,
};

// Largest size a control byte can say (29 + 256 + 65536 + 2^24 - 1): the most bytes of a string and the most
// entries of a map or array.
inline constexpr uint32_t kMmdbMaxSize = 16843036;

// The control byte(s) of a value of `type` with `size` (bytes of a string or number, entries of a map or array,
// the value of a boolean). REQUIRES: size <= kMmdbMaxSize.
void AppendMmdbControl(MmdbType type, uint32_t size, std::string* out);
// A string; false (nothing appended) when longer than kMmdbMaxSize.
bool AppendMmdbString(std::string_view text, std::string* out);
void AppendMmdbUnsigned(MmdbType type, unsigned __int128 value, std::string* out);  // kUint16..kUint128
void AppendMmdbDouble(double value, std::string* out);

// Encodes one JSON value (as stored: one valid JSON text) onto `out`. Errors say what in the value cannot be
// written (a path such as `location.radius` and why); `out` may then hold part of it.
Status AppendMmdbJson(std::string_view json, std::string* out);

// Encodes a text value: a string, which must be UTF-8.
Status AppendMmdbText(std::string_view text, std::string* out);

}  // namespace planb
