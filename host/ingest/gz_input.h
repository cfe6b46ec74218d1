// An input stream over a file or standard input that may be gzip-compressed: zlib's gzread inflates gzip (also
// several members back to back, as `cat a.gz b.gz` makes) and passes any other bytes through unchanged, so
// `planb load --format csv x.csv.gz` and `zcat x.csv.gz | planb load ... -` read the same rows.
// Not thread-safe; not copyable.
#pragma once

#include <zlib.h>

#include <istream>
#include <memory>
#include <streambuf>
#include <string>

#include "planb/status.h"

namespace planb {

// The stream buffer under GzInput.
class GzBuffer : public std::streambuf {
 public:
  GzBuffer();
  ~GzBuffer() override;
  GzBuffer(const GzBuffer&) = delete;
  GzBuffer& operator=(const GzBuffer&) = delete;

  [[nodiscard]] Status Open(const std::string& path);
  Status status() const { return status_; }

 private:
  int_type underflow() override;

  gzFile file_ = nullptr;
  std::string name_;
  std::unique_ptr<char[]> buffer_;
  Status status_;
};

class GzInput : public std::istream {
 public:
  GzInput() : std::istream(nullptr) { rdbuf(&buffer_); }

  // Opens `path` ("-": standard input, which stays open after the GzInput is gone).
  [[nodiscard]] Status Open(const std::string& path) { return buffer_.Open(path); }

  // OK, or why reading stopped early (a truncated or corrupt gzip stream, a read error); check after the end.
  Status status() const { return buffer_.status(); }

 private:
  GzBuffer buffer_;
};

}  // namespace planb
