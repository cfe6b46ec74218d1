// Query output in the formats people already use: an aligned table (as psql prints), CSV (RFC 4180 quoting, LF
// line ends as psql --csv writes them: one header
// line, then one line per row) and JSON (an array of objects, one per row, fields in display order).
// Writers stream: memory stays bounded whatever the row count (the table buffers only its first rows, to size
// the columns).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "planb/store.h"

namespace planb {

enum class OutputFormat { kTable, kCsv, kJson };

// "table", "csv" or "json"; false otherwise.
bool ParseOutputFormat(std::string_view text, OutputFormat* format);

// A field of a row as text: ISO-8601 for dates, decimal for numbers, doubles in their shortest round-trip form
// (FormatReal), true/false for booleans, "string"/"xml" for value types. `index` is the field's position in the
// type's fields (a RowField::kOwn field is Row::own_fields[index]; an entry the row lacks reads as zero).
std::string FieldText(const Row& row, const FieldSpec& field, uint32_t index);

// The value of a field of the type's own, or its kind's zero when the row has no such entry.
FieldValue OwnFieldOf(const Row& row, uint32_t index);

// Any field as a FieldValue of its kind (a standard member too: Key's text, EffectiveTime's ms...), for the wire.
FieldValue FieldValueOf(const Row& row, const FieldSpec& field, uint32_t index);

// A double in its shortest form that reads back exactly (std::to_chars): 11498.189, 0.25, 1e+300. Not finite
// (which the SDK forbids a plugin to give): "nan", "inf", "-inf".
std::string FormatReal(double value);

// The field as a JSON value: numbers as JSON numbers (int64 exact; doubles as FormatReal, null if not finite),
// booleans as true/false, everything else as a JSON string (invalid UTF-8 replaced by U+FFFD).
std::string FieldJson(const Row& row, const FieldSpec& field, uint32_t index);

// A JSON string literal of `text` (quotes and escapes; invalid UTF-8 replaced by U+FFFD).
std::string JsonString(std::string_view text);

// One CSV field, RFC 4180: quoted (with "" for ") only when it holds a comma, a quote, CR or LF.
std::string CsvField(std::string_view text);

class RowWriter {
 public:
  static std::unique_ptr<RowWriter> Create(OutputFormat format, const FieldSpec* fields, uint32_t field_count,
                                           std::ostream& out);
  virtual ~RowWriter() = default;
  virtual void Write(const Row& row) = 0;
  // Ends the output (closes the JSON array, flushes buffered table rows).
  virtual void Finish() = 0;
};

}  // namespace planb
