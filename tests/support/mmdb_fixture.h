// MaxMind DB files for tests, made at test time by MaxMind's Perl writer (tests/support/make_mmdb.pl), and what
// mmdblookup (mmdb-bin) prints for an address, to check a reader's records against libmaxminddb's own tool.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace planb::testing {

// Writes `path` from `description` (the JSON make_mmdb.pl documents). "" on success, else the writer's error.
std::string MakeMmdb(const std::string& path, const nlohmann::json& description);

// mmdblookup --file FILE --ip ADDRESS: its lines, trimmed, empty ones left out (`"name":`, `{`,
// `"Lyon" <utf8_string>`, ...); on failure one line "mmdblookup failed: ...".
std::vector<std::string> MmdblookupLines(const std::string& file, const std::string& address);

// What mmdblookup would print for a record given as JSON text (mmdb_json.h's form), with the writer's `types`
// (make_mmdb.pl's "types": key -> type, or ["array", element type]) saying each value's type. Reads the JSON with
// a SAX parser so that numbers keep their text (uint128 beyond 64 bits). On a parse error one line "bad JSON".
std::vector<std::string> MmdblookupLinesFor(const std::string& record_json, const nlohmann::json& types);

}  // namespace planb::testing
