// READ format 6 ("answers"): what the Reader's remote mode (planb/reader.h) asks storage nodes in. Unlike
// `--format wire`, which carries what `planb lookup` prints, it carries what a LookupResult holds: each found
// answer's value type, value, session bounds and every own field of the type, and a key the map refuses (an ip
// map's malformed address) as a refusal of that key alone, so that one bad key of a batch fails only its result,
// as it does in process. A map with no data on the node is said in the header, not as misses.
//
// Layout (docs/protocol.md, READ; integers big-endian):
//   "PLA1" (4 bytes), u8 flags (bit 0: the map has no data on this node, and no answers follow), u64 content
//   version (batches merged into what was read), u8 own field count n (0..64), per own field u8 its position in
//   the type's fields (increasing) + u8 its kind (FieldKind 1..6), then per key asked, in order:
//     u8 0  absent;
//     u8 1  found: u8 value type (ValueType 1..3), u32 length + the value, i64 start ms, i64 end ms, then the n own
//           field values in order: text a u32 length + bytes, number, date and address i64, double its IEEE-754
//           bits as u64, bool u8 0/1;
//     u8 2  refused: u8 code (planb::Code 2..9), u16 length + the message (at most kMaxRefusal bytes).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string_view>
#include <vector>

#include "host/commands/lookup_output.h"
#include "planb/plugin.h"
#include "planb/status.h"
#include "planb/store.h"

namespace planb {

inline constexpr size_t kMaxRefusal = 1024;  // bytes of a refused key's message; longer ones are cut

// The writer behind LookupWriter::Create(kAnswers, ...): needs shape.type (the map's store type).
std::unique_ptr<LookupWriter> CreateAnswersWriter(LookupShape shape, std::ostream& out);
// The whole answer of a map with no data on this node: the header alone.
void WriteNoDataAnswers(std::ostream& out);

struct OwnFieldSlot {
  uint8_t position = 0;  // in the type's fields
  FieldKind kind = FieldKind::kText;
};

// One key's answer as decoded; views point into the decoded bytes.
struct LookupAnswer {
  enum class Kind : uint8_t { kAbsent = 0, kFound = 1, kRefused = 2 };
  Kind kind = Kind::kAbsent;
  ValueType value_type = ValueType::kString;
  std::string_view value;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  size_t first_field = 0;  // found: LookupAnswers::fields[first_field..+own.size())
  Code code = Code::kOk;   // refused: why (never kOk or kNotFound)
  std::string_view message;
};

struct LookupAnswers {
  bool no_data = false;
  uint64_t batches = 0;
  std::vector<OwnFieldSlot> own;
  std::vector<FieldValue> fields;  // text views the decoded bytes
  std::vector<LookupAnswer> answers;
};

// Decodes `bytes` (which must outlive `out`), holding exactly `keys` answers (none when no_data). kCorruption
// naming what is wrong otherwise: the bytes come from another process. Reuses `out`'s vectors.
Status DecodeLookupAnswers(std::string_view bytes, size_t keys, LookupAnswers* out);

}  // namespace planb
