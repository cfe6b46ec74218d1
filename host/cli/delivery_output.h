// The line `planb load` and `planb delete` print per storage node of a batch's delivery.
#pragma once

#include <ostream>

#include "host/ingest/batch_delivery.h"

namespace planb {

// "  node1a                       staged as batch 12, merged", "  node1a ... already merged as batch ID (nothing
// staged)" or "  node2a ... not stored: <first line of the error>", with its newline. `quorum_met`: the load
// succeeded without the nodes that did not store it (write_quorum), which the line then says will catch up.
void PrintNodeDelivery(const NodeDelivery& delivery, bool quorum_met, std::ostream& out);

}  // namespace planb
