// `planb lookup --remote`: asks storage nodes for the answers (in --format wire, lookup_wire.h, in as many READs
// as the keys need) and prints them here with the local command's writer, so that stdout, stderr and the exit
// status are what `planb lookup` prints on a node, whatever the format and however the keys were split.
// --min-version N waits here, polling a node with short READs, for the node's shard to reach version N.
#pragma once

#include <ostream>

#include "host/commands/command_line.h"
#include "host/runtime.h"

namespace planb {

int RunRemoteLookup(Runtime& runtime, const CommandLine& cli, std::ostream& out, std::ostream& err);

}  // namespace planb
