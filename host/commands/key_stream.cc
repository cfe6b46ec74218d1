#include "host/commands/key_stream.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace planb {

bool KeyStream::TakeLines(std::vector<std::string>* keys, std::vector<std::string>* sources, size_t* bytes) {
  size_t start = 0;
  for (size_t newline; (newline = buffer_.find('\n', start)) != std::string::npos; start = newline + 1) {
    ++line_;
    size_t end = newline;
    if (end > start && buffer_[end - 1] == '\r') --end;
    if (end == start) continue;  // a blank line is no key
    keys->emplace_back(buffer_, start, end - start);
    if (sources != nullptr) sources->push_back("--keys-from " + name_ + " line " + std::to_string(line_));
    *bytes += end - start;
    if (*bytes >= kMaxBytes || keys->size() >= kMaxKeys) {
      buffer_.erase(0, newline + 1);
      return true;
    }
  }
  buffer_.erase(0, start);
  return false;
}

bool KeyStream::Readable() const {
  pollfd item{fd_, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&item, 1, 0);
    if (n >= 0) return n > 0;
    if (errno != EINTR) return true;  // let the read say what is wrong
  }
}

Status KeyStream::Next(std::vector<std::string>* keys, std::vector<std::string>* sources, bool* end) {
  const size_t before = keys->size();
  size_t bytes = 0;
  char chunk[64 << 10];
  for (;;) {
    if (TakeLines(keys, sources, &bytes)) break;
    if (ended_) {
      if (!buffer_.empty()) {  // the last line, without its newline
        buffer_.push_back('\n');
        continue;
      }
      break;
    }
    // Keys in hand and nothing more to read now: the writer is waiting for their answers.
    if (keys->size() > before && !Readable()) break;
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("--keys-from: error reading " + name_ + ": " + std::strerror(errno));
    if (n == 0) {
      ended_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    if (buffer_.size() > kMaxKeySize && buffer_.find('\n') == std::string::npos) {
      return Status::Invalid("--keys-from " + name_ + " line " + std::to_string(line_ + 1) + ": a key of more than " +
                             std::to_string(kMaxKeySize) + " bytes (no request can carry it)");
    }
  }
  *end = ended_ && buffer_.empty();
  return Status::Ok();
}

}  // namespace planb
