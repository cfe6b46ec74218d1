#include "support/serving_node.h"

#include "support/shard_setup.h"

namespace planb::bench {

ServingNode::ServingNode(Runtime& runtime, bool curve) {
  node_ = std::make_unique<StorageNode>(runtime, ServeOptions{}, log_);
  ReceiverSettings settings;
  settings.receive_dir = runtime.home().receive();
  CurveKeyPair server_keys;
  if (curve) {
    CurveKeyPair client_keys;
    CheckSetup(GenerateKeyPair(&server_keys));
    CheckSetup(GenerateKeyPair(&client_keys));
    settings.access.server_key = server_keys;
    ClientConfig client;
    client.name = "bench-client";
    client.public_keys = {client_keys.public_key};
    client.rights = static_cast<uint32_t>(Right::kUpload) | static_cast<uint32_t>(Right::kRead) |
                    static_cast<uint32_t>(Right::kSnapshot);
    settings.access.clients.emplace(client.name, client);
    client_.own_key = OwnKey{"", client_keys};
  }
  receiver_ = std::make_unique<UploadReceiver>(context_, settings, *node_, nullptr);
  std::string bound;
  CheckSetup(receiver_->Bind("tcp://127.0.0.1:*", &bound));
  serving_ = std::thread([this] { CheckSetup(receiver_->Run(stop_)); });
  client_.node_name = "bench-client";
  client_.node_list = {"node1"};
  client_.nodes["node1"] = NodeConfig{"node1", bound};
  if (curve) client_.nodes["node1"].public_key = server_keys.public_key;
  client_.request_timeout_ms = 60 * 1000;  // a big shard's first copy may take a while
}

ServingNode::~ServingNode() {
  stop_ = true;
  serving_.join();
  receiver_.reset();
  node_.reset();
}

}  // namespace planb::bench
