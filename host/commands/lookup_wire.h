// `lookup --format wire`: the answers as bytes for a program, not a person. `lookup --remote` asks storage nodes
// in this format and prints the answers itself with the local command's writer (lookup_output.h), so a lookup
// split into several READs prints one output, byte for byte the local command's, in every format.
//
// Layout (docs/protocol.md, READ; integers big-endian):
//   "PLW1" (4 bytes), u8 flags (bit 0: session answers, bit 1: number keys), u64 content version batches of
//   what was read (0 when nothing is loaded yet), then per key asked, in order: u8 0 (absent) or u8 1 and the
//   answer: value maps a u32 length + the value's bytes, session maps i64 start ms + i64 end ms.
// Flag bit 2 (shown fields, kFieldShownByLookup; lookup_output.h): after the content version, u8 field count
// (1..64) and per field u8 kind (FieldKind), u8 1 if zero-when-absent else 0, u8 name length (1..64) + the
// lower-cased name; each found answer then carries, after its value, each field's value in that order: text a
// u32 length + bytes, number and date i64, double its IEEE-754 bits as u64, bool u8 0/1. A node without shown
// fields never sets the bit, so older answers still decode; an older client refuses the bit ("unknown flags").
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "host/commands/lookup_output.h"
#include "planb/status.h"

namespace planb {

// The writer behind LookupWriter::Create(kWire, ...); `shape.batches` goes in the header.
std::unique_ptr<LookupWriter> CreateWireWriter(LookupShape shape, std::ostream& out);

// One key's answer as decoded; `value` views the decoded bytes.
struct WireAnswer {
  bool found = false;
  std::string_view value;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  size_t first_field = 0;  // found: its shown fields' values are WireAnswers::fields[first_field..+shown.size())
};

struct WireAnswers {
  bool session = false;
  bool number_keys = false;
  uint64_t batches = 0;
  // The shown fields, each read back as RowField::kOwn at its position here (ShownField::index = position).
  std::vector<ShownField> shown;
  std::vector<FieldValue> fields;  // text views the decoded bytes
  std::vector<WireAnswer> answers;
};

// Decodes `bytes` (which must outlive `out`), holding exactly `keys` answers. kCorruption naming what is wrong
// otherwise: the bytes come from another process.
Status DecodeLookupWire(std::string_view bytes, size_t keys, WireAnswers* out);

}  // namespace planb
