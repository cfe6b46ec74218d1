#include "host/cli/command_log.h"

#include <nlohmann/json.hpp>

#include "host/common/iso_time.h"

namespace planb {

namespace {

constexpr size_t kMaxLine = 64 << 10;  // a longer line is written in parts rather than held

struct LineKind {
  LogLevel level;
  const char* event;
};

LineKind KindOf(const std::string& line) {
  if (line.rfind("planb warning", 0) == 0 || line.rfind("planb: warning", 0) == 0) {
    return {LogLevel::kWarn, "command.warning"};
  }
  if (line.rfind("planb note", 0) == 0) return {LogLevel::kInfo, "command.note"};
  if (line.rfind("planb: ", 0) == 0) return {LogLevel::kError, "command.error"};
  return {LogLevel::kInfo, "command.output"};
}

}  // namespace

CommandLogBuf::~CommandLogBuf() {
  if (!line_.empty()) Emit();
  target_->pubsync();
}

void CommandLogBuf::Emit() {
  // Terminal progress ("\r\033[K...") is redrawn in place: only what follows the last carriage return stays.
  const size_t redraw = line_.rfind('\r');
  if (redraw != std::string::npos) line_.erase(0, redraw + 1);
  const LineKind kind = KindOf(line_);
  if (kind.level <= level_ && !(line_.empty() && redraw != std::string::npos)) {
    std::string out;
    if (format_ == LogFormat::kJson) {
      nlohmann::ordered_json object;
      object["time"] = FormatIsoTime(CurrentTimeMs());
      object["level"] = LogLevelName(kind.level);
      object["event"] = kind.event;
      object["command"] = command_;
      object["msg"] = line_;
      out = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      out = line_;
    }
    out += '\n';
    target_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
  }
  line_.clear();
}

CommandLogBuf::int_type CommandLogBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  xsputn(&ch, 1);
  return c;
}

std::streamsize CommandLogBuf::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) {
    if (s[i] == '\n' || line_.size() >= kMaxLine) {
      Emit();
      if (s[i] == '\n') continue;
    }
    line_ += s[i];
  }
  return n;
}

int CommandLogBuf::sync() { return target_->pubsync(); }

}  // namespace planb
