// How `planb lookup` prints its answers (--format): text (one value alone, or KEY<TAB>VALUE lines for several
// keys; absent keys print nothing), json (an array of objects, one per key asked, in order: key, value or
// start/end, found; the same array shape as `query --format json`) or csv (RFC 4180 as `query --format csv`:
// a header line key,value,found or key,start,end,found, then one line per key). json and csv list absent keys
// too (found false, value null / empty), so their output is one record per key asked, multi-line values intact.
// wire is for programs (lookup --remote asks nodes in it): bytes, laid out in lookup_wire.h. answers (READ only,
// the Reader's remote mode) carries what a LookupResult holds: lookup_answers.h.
// A type whose fields are flagged kFieldShownByLookup prints those instead of the value: text one field's value
// alone or several as "count=3 ratio=0.25" (lower-cased names, in the type's order); json/csv one column per
// field (numbers as JSON numbers). A miss prints kFieldZeroWhenAbsent fields as 0: in text only when every shown
// field has that flag (else nothing), in json/csv always (the others null / empty).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

enum class LookupFormat { kText, kJson, kCsv, kWire, kAnswers };

// "text", "json", "csv" or "wire"; false otherwise (answers is for READs only).
bool ParseLookupFormat(std::string_view text, LookupFormat* format);

// A field `planb lookup` prints (kFieldShownByLookup): `spec` reads it from a Row at `index` (its name is not
// used: `name` is the lower-cased one printed).
struct ShownField {
  std::string name;
  FieldSpec spec{"", FieldKind::kText, RowField::kOwn, 0};
  uint32_t index = 0;
  bool zero_when_absent = false;
};

// The type's fields flagged kFieldShownByLookup, in its order (none for most types).
std::vector<ShownField> ShownFields(const PluginDescriptor& type);

// What the map's answers hold.
struct LookupShape {
  bool session = false;      // start and end instead of a value
  bool number_keys = false;  // keys are signed 64-bit numbers (json prints them as numbers)
  bool single = false;       // one key asked (text prints the value alone)
  uint64_t batches = 0;      // wire only: the content version read (ContentVersion::batches; 0 = none loaded)
  std::vector<ShownField> shown;  // printed instead of the value when not empty (not with session)
  const PluginDescriptor* type = nullptr;  // answers only: the map's store type (which own fields it sends)
};

class LookupWriter {
 public:
  static std::unique_ptr<LookupWriter> Create(LookupFormat format, LookupShape shape, std::ostream& out);
  virtual ~LookupWriter() = default;
  // `number` is the parsed key when shape.number_keys.
  virtual void Found(const std::string& key, int64_t number, const Row& row) = 0;
  virtual void Missing(const std::string& key, int64_t number) = 0;
  // A key the map refuses (kInvalidArgument: an ip map's malformed address). Formats that answer each key on
  // its own (answers) write it and return true; the others return false and the lookup ends in error.
  virtual bool Refuse(const std::string& /*key*/, int64_t /*number*/, Code /*code*/, std::string_view /*message*/) {
    return false;
  }
  // Ends the output (closes the JSON array).
  virtual void Finish() = 0;
};

}  // namespace planb
