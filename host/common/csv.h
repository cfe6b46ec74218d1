// RFC 4180 CSV: a streaming record reader and the field writer. Shared by `planb load --format csv` and
// `planb enrich`.
//
// What the reader accepts (RFC 4180, plus what real files do):
// - fields separated by ',', records ended by LF or CRLF; the last record may lack its line end;
// - a quoted field ("...") may hold ',', CR, LF and doubled quotes ("" = one "); a quote elsewhere in an
//   unquoted field, or anything but ',' or a line end after a closing quote, is an error;
// - a UTF-8 byte order mark at the very start is skipped; every field must be valid UTF-8;
// - a wholly empty line (no bytes before its line end) is skipped, not read as one empty field: files end with
//   blank lines more often than single-column files hold empty values;
// - with SkipCommentLines(true), a line whose first byte is '#' (at the start of a record) is skipped whole.
// A CR outside quotes must be followed by LF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/common/byte_source.h"
#include "planb/status.h"

namespace planb {

// Not thread-safe. Reads `in` in blocks; the buffers are reused, so reading allocates nothing per record once
// they have grown to the longest record.
class CsvReader {
 public:
  // `name` names the input in errors ("file.csv:12: ..."). A record longer than max_record_bytes is an error.
  // `in` is not owned and must outlive the reader.
  CsvReader(std::istream& in, std::string name, size_t max_record_bytes = 16 << 20);
  // Reading what `in` has as it arrives (a pipe's rows are handed out as they come, not a block at a time).
  CsvReader(ByteSource& in, std::string name, size_t max_record_bytes = 16 << 20);

  // Reads the next record: *got = false at the end. Fields are views valid until the next call. Errors
  // (an unterminated quote, a quote inside an unquoted field, text after a closing quote, invalid UTF-8, a
  // record too long, a read error) name the input and the line; the reader stops there (every later call
  // returns the same error).
  [[nodiscard]] Status Next(std::vector<std::string_view>* fields, bool* got);

  // The 1-based line the last record started on.
  uint64_t line() const { return record_line_; }

  // Whether lines starting with '#' are skipped (default false: '#' is data).
  void SkipCommentLines(bool skip) { skip_comments_ = skip; }

  const std::string& name() const { return name_; }

 private:
  // Makes at least one more byte available at pos_; false at the end of the input (or a read error: status_).
  bool Fill();
  Status Fail(uint64_t line, const std::string& what);

  std::unique_ptr<StreamByteSource> stream_;  // when made from a std::istream
  ByteSource& in_;
  std::string name_;
  size_t max_record_bytes_;
  std::unique_ptr<char[]> block_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  bool started_ = false;  // the BOM check is done
  bool skip_comments_ = false;
  uint64_t line_ = 1;                              // the line of the next byte
  uint64_t record_line_ = 0;                       // the line the last record started on
  std::string record_;                             // the current record's field bytes, unquoted, back to back
  std::vector<std::pair<size_t, size_t>> bounds_;  // each field's offset and size in record_
  Status status_;
};

// Appends `field` to `out` as RFC 4180 writes it: quoted (quotes doubled) only when it holds , " CR or LF
// or starts/ends with a space.
void AppendCsvField(std::string_view field, std::string* out);

}  // namespace planb
