#include "host/cluster/cluster_delivery.h"

#include <thread>

#include "host/cluster/batch_distributor.h"
#include "host/ingest/load_check.h"
#include "host/transfer/prepare_client.h"

namespace planb {

void ClusterDelivery::Check(const protocol::PrepareRequest& request, std::vector<NodeCheck>* checks) {
  const ClusterConfig& cluster = runtime_.config().cluster;
  checks->assign(cluster.node_list.size(), NodeCheck{});
  std::vector<std::thread> asks;
  for (size_t i = 0; i < cluster.node_list.size(); ++i) {
    NodeCheck& check = (*checks)[i];
    check.node = cluster.node_list[i];
    if (check.node == cluster.node_name) {
      check.local = true;
      check.status = CheckLoadLocally(runtime_, request, &check.reply);
      continue;
    }
    const auto found = cluster.nodes.find(check.node);
    if (found == cluster.nodes.end() || found->second.endpoint.empty()) {
      check.status = Status::Invalid("no endpoint: add [node." + check.node + "] endpoint = tcp://HOST:PORT");
      continue;
    }
    const NodeAddress node = AddressOf(cluster, check.node);
    const int64_t timeout_ms = cluster.request_timeout_ms;
    asks.emplace_back([this, &request, &check, node, timeout_ms] {
      check.status = PrepareOnNode(context_, node, request, timeout_ms, &check.reply);
    });
  }
  for (std::thread& ask : asks) ask.join();
}

Status ClusterDelivery::Deliver(const std::string& zip_path, const std::string& batch_id, bool synchronise_merge,
                                std::vector<NodeDelivery>* deliveries, const DeliveryProgress& progress) {
  return DistributeBatch(runtime_, context_, zip_path, batch_id, synchronise_merge, deliveries, progress);
}

}  // namespace planb
