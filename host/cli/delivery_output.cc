#include "host/cli/delivery_output.h"

#include <iomanip>
#include <string>

namespace planb {

void PrintNodeDelivery(const NodeDelivery& d, bool quorum_met, std::ostream& out) {
  out << "  " << std::left << std::setw(28) << d.node << std::right;
  if (d.status.ok() && !d.already_merged.empty()) {
    out << " already merged as batch " << d.already_merged << " (nothing staged)";
  } else if (d.status.ok()) {
    out << " staged as batch " << d.sequence << (d.local ? " (moved)" : "") << (d.merged ? ", merged" : "");
  } else {
    const std::string& why = d.status.message();
    out << " not stored: " << why.substr(0, why.find('\n'));
    // A load that succeeded without this node (write_quorum): the node fetches the batch from a peer.
    if (quorum_met) out << "; it will get this batch from a node that has it (catch-up)";
  }
  out << "\n";
}

}  // namespace planb
