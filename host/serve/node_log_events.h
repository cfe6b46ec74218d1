// The level and event name of each line a storage node logs (docs/operations.md, "Logs"), from the line's fixed
// start: the receiver, catch-up and maintenance write their lines as text, and this table names them in one
// place, so that a JSON log carries an event to filter and alert on for every line.
#pragma once

#include <string_view>

#include "host/common/log_format.h"

namespace planb {

struct NodeLogEvent {
  LogLevel level;
  const char* event;
};

// The event of `message` (as the node's Log got it, before escaping); "node" at info for a line no entry names.
NodeLogEvent ClassifyNodeLine(std::string_view message);

// The map ("map NAME", "snapshot of NAME") and the client ("client NAME") a line names, as every line about one
// does; empty when it names none. Views into `message`.
std::string_view MapNamedIn(std::string_view message);
std::string_view ClientNamedIn(std::string_view message);

}  // namespace planb
