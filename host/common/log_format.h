// Log lines as operators' tools read them (docs/operations.md, "Logs"): a level and an event name on every line,
// and with log_format = json one JSON object per line (time, level, node, event, map, client, msg), as journald,
// Loki, Elasticsearch and `jq` take them. The text format stays "TIME NODE: message", the message escaped
// (log_text.h) in both.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace planb {

enum class LogLevel : uint8_t { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
enum class LogFormat : uint8_t { kText, kJson };

// "error", "warn", "info", "debug"; false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);
// "text", "json"; false for anything else.
bool ParseLogFormat(std::string_view text, LogFormat* format);
const char* LogLevelName(LogLevel level);

struct LogRecord {
  int64_t time_ms = 0;        // Unix ms
  LogLevel level = LogLevel::kInfo;
  std::string_view event;     // "merge.done", "upload.refused", ...: stable names to alert on
  std::string_view node;      // the node's name; "" leaves it out
  std::string_view map;       // the map the line is about; "" leaves it out
  std::string_view client;    // the client the line is about; "" leaves it out
  std::string_view message;   // escaped already (LogValue)
};

// One line without its newline: text "TIME NODE: message" (no node: "TIME message"), or a JSON object. Bytes
// that are not UTF-8 become U+FFFD in JSON (the message is escaped ASCII already; map and client are checked names).
std::string FormatLogLine(const LogRecord& record, LogFormat format);

}  // namespace planb
