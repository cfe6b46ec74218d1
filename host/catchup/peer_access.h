// Who may ask a storage node for catch-up (docs/security.md): with CURVE, the other storage nodes of node_list,
// each by the public_key of its [node.NAME] section, hold the rights "node" (LIST_MERGED, OFFER_BATCH) and
// "snapshot" (a node far behind starts from a peer's snapshot). No config section is needed for that.
#pragma once

#include <map>
#include <string>

#include "host/config/config.h"

namespace planb {

// `cluster.clients` with the peers added: a peer whose key is also a client's adds its rights to that client (a
// machine that loads and serves uses one key) and lifts the client's map scope (a peer holds every map); any other gets a client of its own named "node NAME", which no
// [client.NAME] section can be (section names have no space).
std::map<std::string, ClientConfig> ClientsWithPeers(const ClusterConfig& cluster);

}  // namespace planb
