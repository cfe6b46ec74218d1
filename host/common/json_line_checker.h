// Whether a line is one valid JSON object (RFC 8259, UTF-8), checked in full: a fault in a member no lookup
// reads still makes the line malformed. simdjson does the work at gigabytes per second; what it refuses only for
// its own limits (numbers past its range: integers beyond 2^64, 1e400) goes to the grammar check of json_text.h.
// Thread-safety: one checker per thread (it keeps simdjson's parser and its buffers, reused line after line).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "host/common/json_text.h"

namespace planb {

enum class JsonFind { kAbsent, kString, kNumber, kOther };

class JsonLineChecker {
 public:
  JsonLineChecker();
  ~JsonLineChecker();
  JsonLineChecker(const JsonLineChecker&) = delete;
  JsonLineChecker& operator=(const JsonLineChecker&) = delete;

  // How many bytes past a line's end Check may read (they may hold anything: the next line, say).
  static size_t Padding();

  // Whether `line` is one JSON object; when not, `*why` says what is wrong (simdjson's words).
  // `padded`: the caller guarantees Padding() readable bytes after the line (else it is copied first).
  bool Check(std::string_view line, bool padded, std::string* why);

  // Whether the last line Check accepted was parsed by simdjson, whose document Find then reads (false after a
  // line only the grammar fallback accepted, or one refused).
  bool has_document() const { return has_document_; }
  // The value at `path` in that document: kString sets `*text` to the string's text (a view valid until the
  // next Check); a number's text as written must be read from the line (json_text.h: FindJsonValue).
  // REQUIRES: has_document().
  JsonFind Find(const JsonPath& path, std::string_view* text) const;

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
  std::string copy_;  // for lines not padded
  bool has_document_ = false;
};

}  // namespace planb
