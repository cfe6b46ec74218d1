// A command's messages on stderr as log lines (docs/operations.md, "Logs"): with log_format = json each line
// becomes one JSON object (time, level, event, command, msg), and lines below log_level are dropped. A line's
// level is read from its start, as the commands write them: "planb: ..." an error, "planb warning: ..." a
// warning, "planb note: ..." and anything else information. `serve` formats its own log (storage_node.h) and is
// not wrapped.
// Thread-safety: as the stream it replaces (std::cerr is written by one thread at a time here).
#pragma once

#include <streambuf>
#include <string>

#include "host/common/log_format.h"

namespace planb {

class CommandLogBuf final : public std::streambuf {
 public:
  CommandLogBuf(std::streambuf* target, std::string command, LogLevel level, LogFormat format)
      : target_(target), command_(std::move(command)), level_(level), format_(format) {}
  ~CommandLogBuf() override;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void Emit();

  std::streambuf* target_;
  std::string command_;
  LogLevel level_;
  LogFormat format_;
  std::string line_;
};

}  // namespace planb
