#include "host/common/csv.h"

#include <simdjson.h>

#include <cstring>

namespace planb {
namespace {

constexpr size_t kBlockSize = 64 * 1024;

bool IsSpecial(char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; }

}  // namespace

CsvReader::CsvReader(std::istream& in, std::string name, size_t max_record_bytes)
    : stream_(std::make_unique<StreamByteSource>(in)),
      in_(*stream_),
      name_(std::move(name)),
      max_record_bytes_(max_record_bytes),
      block_(new char[kBlockSize]) {}

CsvReader::CsvReader(ByteSource& in, std::string name, size_t max_record_bytes)
    : in_(in), name_(std::move(name)), max_record_bytes_(max_record_bytes), block_(new char[kBlockSize]) {}

bool CsvReader::Fill() {
  if (pos_ < end_) return true;
  if (eof_) return false;
  size_t n = 0;
  const Status read = in_.Read(block_.get(), kBlockSize, &n);
  if (!read.ok() || n == 0) {
    eof_ = true;
    if (!read.ok()) status_ = Status::IOError(name_ + ": " + read.message());
    return false;
  }
  pos_ = 0;
  end_ = n;
  return true;
}

Status CsvReader::Fail(uint64_t line, const std::string& what) {
  status_ = Status::Invalid(name_ + ":" + std::to_string(line) + ": " + what);
  return status_;
}

Status CsvReader::Next(std::vector<std::string_view>* fields, bool* got) {
  *got = false;
  fields->clear();
  if (!status_.ok()) return status_;
  if (!started_) {
    started_ = true;
    if (Fill() && end_ - pos_ >= 3 && std::memcmp(block_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  }
  // Blank lines and (when asked) comment lines before the record.
  while (true) {
    if (!Fill()) return status_;
    const char c = block_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
    } else if (c == '\r') {
      ++pos_;
      if (!Fill()) return status_;
      if (block_[pos_] != '\n') return Fail(line_, "a CR not followed by LF outside quotes");
      ++pos_;
      ++line_;
    } else if (skip_comments_ && c == '#') {
      while (true) {
        if (!Fill()) return status_;
        const void* nl = std::memchr(block_.get() + pos_, '\n', end_ - pos_);
        if (nl != nullptr) {
          pos_ = static_cast<const char*>(nl) - block_.get() + 1;
          ++line_;
          break;
        }
        pos_ = end_;
      }
    } else {
      break;
    }
  }
  record_line_ = line_;
  record_.clear();
  bounds_.clear();
  enum class State { kFieldStart, kUnquoted, kQuoted, kQuoteSeen, kCr } state = State::kFieldStart;
  uint64_t quote_line = 0;
  size_t field_start = 0;
  auto end_field = [&] {
    bounds_.emplace_back(field_start, record_.size() - field_start);
    field_start = record_.size();
  };
  bool done = false;
  while (!done) {
    if (!Fill()) {
      if (!status_.ok()) return status_;
      if (state == State::kQuoted) return Fail(quote_line, "unterminated quoted field (its quote opens here)");
      end_field();
      break;
    }
    const char* p = block_.get() + pos_;
    const char* const e = block_.get() + end_;
    while (p < e && !done) {
      const char c = *p;
      switch (state) {
        case State::kFieldStart:
        case State::kUnquoted:
          if (c == ',') {
            end_field();
            state = State::kFieldStart;
            ++p;
          } else if (c == '"') {
            if (state == State::kUnquoted) return Fail(line_, "a quote inside an unquoted field");
            state = State::kQuoted;
            quote_line = line_;
            ++p;
          } else if (c == '\r') {
            state = State::kCr;
            ++p;
          } else if (c == '\n') {
            ++line_;
            done = true;
            ++p;
          } else {
            const char* run = p;
            while (p < e && !IsSpecial(*p)) ++p;
            record_.append(run, p - run);
            state = State::kUnquoted;
          }
          break;
        case State::kQuoted:
          if (c == '"') {
            state = State::kQuoteSeen;
            ++p;
          } else {
            const char* run = p;
            while (p < e && *p != '"') {
              if (*p == '\n') ++line_;
              ++p;
            }
            record_.append(run, p - run);
          }
          break;
        case State::kQuoteSeen:
          if (c == '"') {
            record_.push_back('"');
            state = State::kQuoted;
            ++p;
          } else if (c == ',') {
            end_field();
            state = State::kFieldStart;
            ++p;
          } else if (c == '\r') {
            state = State::kCr;
            ++p;
          } else if (c == '\n') {
            ++line_;
            done = true;
            ++p;
          } else {
            return Fail(line_, "text after a closing quote (a quote inside a field must be doubled)");
          }
          break;
        case State::kCr:
          if (c != '\n') return Fail(line_, "a CR not followed by LF outside quotes");
          ++line_;
          done = true;
          ++p;
          break;
      }
      if (record_.size() > max_record_bytes_) {
        return Fail(record_line_, "record longer than " + std::to_string(max_record_bytes_) + " bytes");
      }
    }
    pos_ = p - block_.get();
    if (done) end_field();
  }
  // Field by field: the record's bytes back to back could join two halves of a character across a comma.
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!simdjson::validate_utf8(record_.data() + bounds_[i].first, bounds_[i].second)) {
      return Fail(record_line_, "invalid UTF-8 in field " + std::to_string(i + 1));
    }
  }
  for (const auto& [offset, size] : bounds_) fields->emplace_back(record_.data() + offset, size);
  *got = true;
  return Status::Ok();
}

void AppendCsvField(std::string_view field, std::string* out) {
  const bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) {
    out->append(field);
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace planb
