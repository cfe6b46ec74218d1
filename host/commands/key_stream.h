// Lookup keys from a stream (`lookup --remote --keys-from -`) in batches as they arrive, so that a program
// writing keys and reading answers (a coprocess) gets each answer while it waits, and a pipe full of keys still
// travels in large requests. A batch ends at the first line after which a read would block (the writer has sent
// what it had), at kMaxKeys keys or kMaxBytes bytes of keys, or at the end of the stream. Lines as CollectLookupKeys
// reads them: a trailing "\r" dropped, blank lines skipped; the last line needs no newline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "planb/status.h"

namespace planb {

class KeyStream {
 public:
  static constexpr size_t kMaxKeys = 10000;
  static constexpr size_t kMaxBytes = size_t{512} << 10;
  static constexpr size_t kMaxKeySize = size_t{1} << 20;  // a READ's limit: no request could carry a longer key

  // `fd` stays open and owned by the caller; `name` names it in errors ("standard input").
  KeyStream(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

  // Appends the next batch to `keys` (and each key's source, "--keys-from standard input line 7", to `sources`),
  // waiting for at least one key unless the stream ends first; `*end` true once it has ended (the batch may
  // still hold keys). Errors: a read error, or a line longer than kMaxKeySize (naming its line).
  Status Next(std::vector<std::string>* keys, std::vector<std::string>* sources, bool* end);

 private:
  // Moves the complete lines of buffer_ into the batch; true when the batch is full.
  bool TakeLines(std::vector<std::string>* keys, std::vector<std::string>* sources, size_t* bytes);
  // Whether a read of fd_ would return at once (data, the end, or an error).
  bool Readable() const;

  int fd_;
  std::string name_;
  std::string buffer_;  // bytes read and not yet a complete line
  uint64_t line_ = 0;   // lines taken so far
  bool ended_ = false;
};

}  // namespace planb
