// The lines of a stream, read in large blocks and handed out in batches as views into the block, each with
// `padding` readable bytes after it (what simdjson reads past a document's end): no copy per line.
// Reads return what is there (a pipe's events as they arrive): a batch never waits for more lines than are
// ready, so a slow stream is enriched event by event rather than a megabyte at a time.
// A line is what lies between newlines ('\n'; a '\r' before it stays part of the line); the last line needs no
// newline. View lifetime: the lines of one Next stay valid until the next call.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "host/common/byte_source.h"
#include "planb/status.h"

namespace planb {

class LineSource {
 public:
  // `name` names the input in errors. A line longer than `max_line` bytes is an error (the input is not lines).
  // REQUIRES: `in` outlives this.
  LineSource(ByteSource& in, std::string name, size_t padding, size_t max_line = size_t{64} << 20);

  // Up to `max` next lines into `lines` (cleared first); none at the end of the input.
  Status Next(size_t max, std::vector<std::string_view>* lines);
  // The 1-based line number of the first line the last Next returned.
  uint64_t first_line() const { return first_line_; }

 private:
  Status Refill();
  Status TooLong() const;  // names the line next_line_

  ByteSource& in_;
  std::string name_;
  size_t padding_;
  size_t max_line_;
  std::vector<char> buffer_;  // capacity + padding_
  size_t begin_ = 0;          // unread data is [begin_, end_)
  size_t end_ = 0;
  size_t scanned_ = 0;        // [begin_, scanned_) holds no newline
  bool eof_ = false;
  uint64_t next_line_ = 1;
  uint64_t first_line_ = 1;
};

}  // namespace planb
