// A storage node serving in this process for the network benchmarks: a real StorageNode (uploads, READ,
// SNAPSHOT) behind a real UploadReceiver on tcp://127.0.0.1:*, and the ClusterConfig a client node uses to reach
// it (node_list = node1). Setup only; exits on failure.
#pragma once

#include <atomic>
#include <memory>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "host/config/config.h"
#include "host/receiver/upload_receiver.h"
#include "host/runtime.h"
#include "host/serve/storage_node.h"

namespace planb::bench {

class ServingNode {
 public:
  // Serves `runtime`'s home (its shards must be built already) until destruction; with `curve`, over CURVE,
  // admitting one client (client()'s key) with every right.
  explicit ServingNode(Runtime& runtime, bool curve = false);
  ~ServingNode();

  // node_list = node1 at the bound endpoint (with CURVE: its public key and the client's own key pair);
  // request_timeout 60 s (a big shard's first copy takes a while).
  const ClusterConfig& client() const { return client_; }
  // Writes a client node's config for client() into `dir` (with CURVE, the client's key file beside it, mode
  // 0600), followed by `map_sections`; returns its path. For planb::Reader's remote mode.
  std::string WriteClientConfig(const std::string& dir, const std::string& map_sections) const;
  zmq::context_t& context() { return context_; }

 private:
  zmq::context_t context_;
  std::ostringstream log_;
  std::unique_ptr<StorageNode> node_;
  std::unique_ptr<UploadReceiver> receiver_;
  std::atomic<bool> stop_{false};
  std::thread serving_;
  ClusterConfig client_;
};

}  // namespace planb::bench
