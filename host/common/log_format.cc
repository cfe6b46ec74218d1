#include "host/common/log_format.h"

#include <nlohmann/json.hpp>

#include "host/common/iso_time.h"

namespace planb {

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "error") *level = LogLevel::kError;
  else if (text == "warn") *level = LogLevel::kWarn;
  else if (text == "info") *level = LogLevel::kInfo;
  else if (text == "debug") *level = LogLevel::kDebug;
  else return false;
  return true;
}

bool ParseLogFormat(std::string_view text, LogFormat* format) {
  if (text == "text") *format = LogFormat::kText;
  else if (text == "json") *format = LogFormat::kJson;
  else return false;
  return true;
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}

std::string FormatLogLine(const LogRecord& record, LogFormat format) {
  const std::string time = FormatIsoTime(record.time_ms);
  if (format == LogFormat::kText) {
    std::string line = time;
    line += ' ';
    if (!record.node.empty()) {
      line += record.node;
      line += ": ";
    }
    line += record.message;
    return line;
  }
  nlohmann::ordered_json object;
  object["time"] = time;
  object["level"] = LogLevelName(record.level);
  if (!record.node.empty()) object["node"] = record.node;
  object["event"] = record.event;
  if (!record.map.empty()) object["map"] = record.map;
  if (!record.client.empty()) object["client"] = record.client;
  object["msg"] = record.message;
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace planb
