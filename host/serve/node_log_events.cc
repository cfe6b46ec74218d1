#include "host/serve/node_log_events.h"

namespace planb {

namespace {

struct Entry {
  std::string_view prefix;
  NodeLogEvent event;
};

// First match wins: longer prefixes before the shorter ones they start with.
constexpr Entry kEntries[] = {
    {"serving ", {LogLevel::kInfo, "serve.started"}},
    {"stopping", {LogLevel::kInfo, "serve.stopping"}},
    {"stopped", {LogLevel::kInfo, "serve.stopped"}},
    {"metrics: ", {LogLevel::kInfo, "metrics.started"}},
    {"http: ", {LogLevel::kWarn, "metrics.http"}},
    {"WARNING: ", {LogLevel::kWarn, "serve.warning"}},
    {"open files: ", {LogLevel::kInfo, "serve.limits"}},
    {"connections: ", {LogLevel::kWarn, "serve.limits"}},
    {"SIGHUP: ", {LogLevel::kInfo, "serve.sighup"}},
    {"staged batch ", {LogLevel::kInfo, "upload.staged"}},
    {"batch (id ", {LogLevel::kInfo, "upload.already_merged"}},
    {"upload error ", {LogLevel::kWarn, "upload.refused"}},
    {"snapshot error ", {LogLevel::kWarn, "snapshot.refused"}},
    {"offering snapshot diff ", {LogLevel::kInfo, "snapshot.diff_offered"}},
    {"offering snapshot ", {LogLevel::kInfo, "snapshot.offered"}},
    {"snapshot diff failed ", {LogLevel::kWarn, "snapshot.diff_failed"}},
    {"no snapshot diff ", {LogLevel::kDebug, "snapshot.whole"}},
    {"offering retained ", {LogLevel::kInfo, "catchup.offered"}},
    {"merged ", {LogLevel::kInfo, "merge.done"}},
    {"map ", {LogLevel::kInfo, "merge.shadowed"}},
    {"quarantined batch ", {LogLevel::kError, "merge.quarantined"}},
    {"held back", {LogLevel::kWarn, "merge.held_back"}},
    {"merge failed", {LogLevel::kError, "merge.failed"}},
    {"merge thread: ", {LogLevel::kError, "merge.thread_ended"}},
    {"cleanup failed", {LogLevel::kError, "cleanup.failed"}},
    {"cleanup: ", {LogLevel::kInfo, "cleanup.removed"}},
    {"maintenance failed", {LogLevel::kError, "maintenance.failed"}},
    {"maintenance: ", {LogLevel::kInfo, "maintenance.done"}},
    {"retention: pruning failed", {LogLevel::kError, "retention.failed"}},
    {"retention: ", {LogLevel::kInfo, "retention.pruned"}},
    {"catch-up: behind ", {LogLevel::kWarn, "catchup.behind"}},
    {"catch-up: caught up ", {LogLevel::kInfo, "catchup.caught_up"}},
    {"catch-up: cannot compare ", {LogLevel::kWarn, "catchup.peer_unreachable"}},
    {"catch-up: fetched ", {LogLevel::kInfo, "catchup.fetched"}},
    {"catch-up: map ", {LogLevel::kInfo, "catchup.bootstrap"}},
    {"catch-up: node ", {LogLevel::kWarn, "catchup.unfetchable"}},
    {"catch-up: ", {LogLevel::kWarn, "catchup.problem"}},
    {"refused ", {LogLevel::kWarn, "client.refused"}},
    {"closed ", {LogLevel::kInfo, "connection.closed"}},
    {"dropping ", {LogLevel::kWarn, "upload.dropped"}},
    {"resuming upload ", {LogLevel::kInfo, "upload.resumed"}},
    {"removed stale partial upload ", {LogLevel::kInfo, "serve.cleanup"}},
    {"upload receiver stopping", {LogLevel::kInfo, "serve.stopping"}},
};

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

// The name after the first occurrence of `marker` in `message`, up to the first character no name has.
std::string_view NameAfter(std::string_view message, std::string_view marker) {
  const size_t at = message.find(marker);
  if (at == std::string_view::npos) return {};
  const size_t start = at + marker.size();
  size_t end = start;
  while (end < message.size() && NameChar(message[end])) ++end;
  // A sentence's full stop or a trailing '.' is no part of a name.
  while (end > start && message[end - 1] == '.') --end;
  return message.substr(start, end - start);
}

}  // namespace

std::string_view MapNamedIn(std::string_view message) {
  std::string_view map = NameAfter(message, "map ");
  if (map.empty()) map = NameAfter(message, "snapshot of ");
  return map;
}

std::string_view ClientNamedIn(std::string_view message) { return NameAfter(message, "client "); }

NodeLogEvent ClassifyNodeLine(std::string_view message) {
  for (const Entry& entry : kEntries) {
    if (message.substr(0, entry.prefix.size()) == entry.prefix) return entry.event;
  }
  return {LogLevel::kInfo, "node"};
}

}  // namespace planb
