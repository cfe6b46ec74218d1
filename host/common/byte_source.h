// Where a reader's bytes come from: a file descriptor read as bytes arrive (a pipe's events are handled as they
// come, not a block at a time), or a std::istream (tests, benchmarks).
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "planb/status.h"

namespace planb {

// Where the bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `size` bytes into `buffer`: what is available, waiting only while nothing is; *got = 0 at the end.
  // Errors do not name the input: the caller does.
  virtual Status Read(char* buffer, size_t size, size_t* got) = 0;
};

// A file descriptor (standard input, a file, a pipe), read with read(2). Not owned.
class FdByteSource final : public ByteSource {
 public:
  explicit FdByteSource(int fd) : fd_(fd) {}
  Status Read(char* buffer, size_t size, size_t* got) override;

 private:
  int fd_;
};

// A std::istream (tests, benchmarks): reads fill the whole request unless the stream ends.
class StreamByteSource final : public ByteSource {
 public:
  explicit StreamByteSource(std::istream& in) : in_(in) {}
  Status Read(char* buffer, size_t size, size_t* got) override;

 private:
  std::istream& in_;
};

}  // namespace planb
