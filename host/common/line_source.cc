#include "host/common/line_source.h"

#include <algorithm>
#include <cstring>

namespace planb {

namespace {
constexpr size_t kBlock = size_t{1} << 20;
}

LineSource::LineSource(ByteSource& in, std::string name, size_t padding, size_t max_line)
    : in_(in), name_(std::move(name)), padding_(padding), max_line_(max_line), buffer_(kBlock + padding, '\0') {}

// Moves what is unread to the front and reads more after it, growing the buffer when one line fills it.
Status LineSource::Refill() {
  const size_t capacity = buffer_.size() - padding_;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    scanned_ -= std::min(scanned_, begin_);
    begin_ = 0;
  }
  if (end_ == capacity) {  // one unfinished line fills the buffer, and is not yet too long (Next checks)
    if (capacity > max_line_) return TooLong();
    buffer_.resize(std::min(capacity * 2, max_line_ + 1) + padding_, '\0');
  }
  size_t got = 0;
  Status s = in_.Read(buffer_.data() + end_, buffer_.size() - padding_ - end_, &got);
  if (!s.ok()) return Status(s.code(), name_ + ": " + s.message());
  end_ += got;
  eof_ = got == 0;
  std::memset(buffer_.data() + end_, 0, padding_);
  return Status::Ok();
}

Status LineSource::TooLong() const {
  const bool mib = max_line_ % (size_t{1} << 20) == 0;
  return Status::Invalid(name_ + ":" + std::to_string(next_line_) + ": line longer than " +
                         std::to_string(mib ? max_line_ >> 20 : max_line_) + (mib ? " MiB" : " bytes"));
}

Status LineSource::Next(size_t max, std::vector<std::string_view>* lines) {
  lines->clear();
  first_line_ = next_line_;
  for (;;) {
    const char* data = buffer_.data();
    while (lines->size() < max && begin_ < end_) {
      // A long line arriving in small reads is searched once, not from its start after every read.
      const size_t from = std::max(begin_, scanned_);
      const void* newline = std::memchr(data + from, '\n', end_ - from);
      const size_t length =
          (newline == nullptr ? end_ : static_cast<size_t>(static_cast<const char*>(newline) - data)) - begin_;
      if (length > max_line_) {
        if (lines->empty()) return TooLong();
        return Status::Ok();  // the lines before it first; the next call says it is too long
      }
      if (newline == nullptr) {
        scanned_ = end_;
        if (!eof_) break;
        lines->emplace_back(data + begin_, end_ - begin_);  // the last line, without a newline
        begin_ = end_;
        ++next_line_;
        break;
      }
      const size_t at = static_cast<size_t>(static_cast<const char*>(newline) - data);
      lines->emplace_back(data + begin_, at - begin_);
      begin_ = at + 1;
      ++next_line_;
    }
    if (!lines->empty() || eof_) return Status::Ok();
    Status s = Refill();
    if (!s.ok()) return s;
  }
}

}  // namespace planb
