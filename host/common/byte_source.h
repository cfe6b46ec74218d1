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
  virtual Status Read(char* buffer, size_t size, size_t* got) = 0;
};

// A file descriptor (standard input, a file, a pipe), read with read(2). Not owned.
class FdByteSource final : public ByteSource {
 public:
  FdByteSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  Status Read(char* buffer, size_t size, size_t* got) override;

 private:
  int fd_;
  std::string name_;
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
