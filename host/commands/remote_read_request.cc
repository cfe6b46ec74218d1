#include "host/commands/remote_read_request.h"

namespace planb {

using protocol::ReadFormat;

protocol::ReadFormat ReadFormatOf(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return ReadFormat::kTable;
    case OutputFormat::kCsv:
      return ReadFormat::kCsv;
    case OutputFormat::kJson:
      return ReadFormat::kJson;
  }
  return ReadFormat::kTable;
}

protocol::ReadFormat ReadFormatOf(LookupFormat format) {
  switch (format) {
    case LookupFormat::kText:
      return ReadFormat::kText;
    case LookupFormat::kJson:
      return ReadFormat::kJson;
    case LookupFormat::kCsv:
      return ReadFormat::kCsv;
    case LookupFormat::kWire:
      return ReadFormat::kWire;
    case LookupFormat::kAnswers:
      return ReadFormat::kAnswers;
  }
  return ReadFormat::kText;
}

LookupRequest LookupRequestFrom(const protocol::ReadRequest& read) {
  LookupRequest request;
  request.map = read.map;
  request.keys = read.keys;
  request.time_ms = read.time_ms;
  request.quiet = read.quiet;
  switch (read.format) {
    case ReadFormat::kJson:
      request.format = LookupFormat::kJson;
      break;
    case ReadFormat::kCsv:
      request.format = LookupFormat::kCsv;
      break;
    case ReadFormat::kWire:
      request.format = LookupFormat::kWire;
      break;
    case ReadFormat::kAnswers:
      request.format = LookupFormat::kAnswers;
      break;
    case ReadFormat::kText:
    case ReadFormat::kTable:
      request.format = LookupFormat::kText;
      break;
  }
  return request;
}

QueryRequest QueryRequestFrom(const protocol::ReadRequest& read) {
  QueryRequest request;
  request.map = read.map;
  request.where = read.where;
  request.limit = read.limit;
  request.explain = read.explain;
  switch (read.format) {
    case ReadFormat::kJson:
      request.format = OutputFormat::kJson;
      break;
    case ReadFormat::kCsv:
      request.format = OutputFormat::kCsv;
      break;
    case ReadFormat::kText:
    case ReadFormat::kWire:
    case ReadFormat::kAnswers:
    case ReadFormat::kTable:
      request.format = OutputFormat::kTable;
      break;
  }
  return request;
}

}  // namespace planb
