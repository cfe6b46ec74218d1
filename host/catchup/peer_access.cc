#include "host/catchup/peer_access.h"

#include <algorithm>

namespace planb {

std::map<std::string, ClientConfig> ClientsWithPeers(const ClusterConfig& cluster) {
  std::map<std::string, ClientConfig> clients = cluster.clients;
  constexpr uint32_t kPeerRights = static_cast<uint32_t>(Right::kNode) | static_cast<uint32_t>(Right::kSnapshot);
  for (const std::string& name : cluster.node_list) {
    if (name == cluster.node_name) continue;
    const auto node = cluster.nodes.find(name);
    if (node == cluster.nodes.end() || !node->second.public_key) continue;
    const std::string& key = *node->second.public_key;
    bool merged = false;
    for (auto& [client_name, client] : clients) {
      if (std::find(client.public_keys.begin(), client.public_keys.end(), key) == client.public_keys.end()) continue;
      client.rights |= kPeerRights;
      // A peer catches up every map. It holds every map's rows anyway, so the key's other rights widen with it.
      client.maps.reset();
      merged = true;
    }
    if (merged) continue;
    ClientConfig peer;
    peer.name = "node " + name;
    peer.public_keys = {key};
    peer.rights = kPeerRights;
    clients.emplace(peer.name, std::move(peer));
  }
  return clients;
}

}  // namespace planb
