// JSON text: reading and editing the text of one JSON object in place, so that everything an edit does not touch stays
// byte for byte as it came (number spellings such as 1.50, -0, 1e2 or integers past 2^64, escapes, member order,
// white space). The readers here assume text already checked (JsonLineChecker): on anything else they return
// "absent" rather than read out of bounds.
// Paths are dotted member names ("client.ip"); a backslash escapes a dot or a backslash within a name ("a\.b" is
// the member "a.b", as in gjson). Where an object repeats a name, the first member counts, for reading and for
// writing alike.
// Thread-safety: pure functions; a JsonPath is immutable once parsed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "planb/status.h"

namespace planb {

struct JsonPath {
  std::string text;                // as given: "client.ip"
  std::vector<std::string> parts;  // {"client", "ip"}
};

// Refuses an empty path, empty parts ("a..b", ".a", "a.") and a backslash before anything but a dot or a
// backslash (or at the end), naming `text`.
Status ParseJsonPath(std::string_view text, JsonPath* out);
// The path text naming `parts` (dots and backslashes within a part escaped): ParseJsonPath's inverse.
std::string JsonPathText(const std::vector<std::string>& parts);

// The raw text of the value at `path` in the object `json` (a string with its quotes, a number as written, an
// object with its braces). False when a member on the path is absent or a parent is not an object.
bool FindJsonValue(std::string_view json, const JsonPath& path, std::string_view* raw);

enum class JsonWrite {
  kReplaced,  // the member existed: its value was replaced
  kInserted,  // appended to the deepest existing object on the path, with any missing parent objects
  kBlocked,   // a member on the path exists and is not an object: nothing written
};
// Appends to `out` the text of `json` with `value_json` (valid JSON text) written at `path`.
// On kBlocked `out` gets `json` unchanged.
JsonWrite WriteJsonValue(std::string_view json, const JsonPath& path, std::string_view value_json, std::string* out);

// WriteJsonValue for a path whose first member the top-level object lacks (its parsed document said so): adds the
// members as the object's last without reading its members. REQUIRES: `json` is a checked object without
// path.parts[0].
void InsertAtTopLevelEnd(std::string_view json, const JsonPath& path, std::string_view value_json, std::string* out);

// The text of a JSON string token (`raw` with its quotes): a view into `raw` when it has no escapes, else
// unescaped into `scratch` (\uXXXX pairs as UTF-8). REQUIRES: `raw` is a checked string token.
std::string_view JsonStringText(std::string_view raw, std::string* scratch);

// Appends `text` as a JSON string: quotes, escapes for " \ and control characters; bytes that are not UTF-8
// become U+FFFD so that the output is always valid JSON.
void AppendJsonString(std::string_view text, std::string* out);

// Whether `text` is exactly one JSON value (RFC 8259 grammar, white space around allowed) and, when `object` is
// true, an object. Checks the grammar only, not UTF-8: the fallback for what simdjson refuses but RFC 8259
// allows (numbers beyond its range, such as integers past 2^64 or 1e400).
bool IsJsonGrammar(std::string_view text, bool object);

}  // namespace planb
