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

// A field of a row as text: ISO-8601 for dates, decimal for numbers, "string"/"xml" for value types.
std::string FieldText(const Row& row, const FieldSpec& field);

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
