// `planb stores --cluster`: every storage node's content version of each configured map, side by side, and who
// is behind. Asked with PREPARE for zero bytes (each node answers its version per map, docs/protocol.md), the
// question a load asks before it sends anything; this node answers for itself when it is in the node_list.
#pragma once

#include <ostream>

#include "host/cli/stores_output.h"
#include "host/runtime.h"

namespace planb {

// Prints the table (MAP, one column per node with its batch count, STATE) and returns 0 when every node answered
// with the same version of every map, 1 when some differ (the STATE column names the nodes behind), 2 when a node
// could not answer (its error on stderr) or there is no node_list.
// kJson: {"nodes": [...], "maps": [{"map", "versions": {NODE: {"batches", "digest"} or null}, "state"}],
// "errors": [{"node", "error"}]} instead of the table; kCsv: the table's columns (map, one per node, state) as a
// header row and one record per map, a node that did not answer as an empty field.
int PrintClusterVersions(Runtime& runtime, StoresFormat format, std::ostream& out, std::ostream& err);

}  // namespace planb
