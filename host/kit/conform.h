// `planb conform`: the checks a plugin author runs against a store type (and key scheme) through the real host:
// the registry, MapPlugins, real LMDB shards and the real load and merge path, in a scratch home of its own.
// Each check prints one TAP line (TAP 14: "ok 2 - scan_ranges", or "not ok 2 - scan_ranges" followed by "# " lines
// saying what differed) and runs in a child process of its own (conform_child.h): a plugin that throws, fails or
// crashes fails that check, with its whole message, and the stream goes on. Not thread-safe; call it from a
// single-threaded process that holds no LMDB environment open.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "planb/status.h"

namespace planb {

// The map `conform` and `bench --type` make when --map names none: the data files' records name it in <map>.
inline constexpr char kKitDefaultMap[] = "sample";

struct ConformOptions {
  std::string type;    // the store type's plugin name
  std::string scheme;  // the key scheme's ("" = the type's default; nothing for types without one)
  std::vector<std::pair<std::string, std::string>> options;  // plugin options of the map, as in a map section
  std::vector<std::string> plugin_dirs;                      // where the author's plugins are
  std::string map = kKitDefaultMap;                          // the map the data files' records name
  std::string first;                                         // reference-data XML loaded first
  std::string second;                                        // then this one
  std::string expect;                                        // CSV: the rows after both (query --format csv)
  bool unordered = false;  // compare the rows with `expect` as a set, not in `query` order (one file for any scheme)
  std::string scratch_parent;                                // where the scratch home is made
  std::string planb_exe;  // this program (the second load runs in a child that is killed after its commit)
};

struct ConformSummary {
  int checks = 0;
  int failed = 0;
};

// Sets up the scratch home and runs every check, printing TAP to `out`. kInvalidArgument (nothing printed on
// `out`) for bad input: an unknown type or scheme, a bad option, a missing file, an empty CSV. A failed check is
// not an error: it is counted in `summary`. Data that does not load (the type's Put refuses it, a record of
// another map) fails the merge check, and the checks after it, as they have no rows.
Status RunConformance(const ConformOptions& options, std::ostream& out, ConformSummary* summary);

// "k=v" as given to --option: k letters, digits and '_'; v without line breaks or other control characters.
Status ParseOptionArgument(const std::string& text, std::pair<std::string, std::string>* out);

}  // namespace planb
