#include "support/serving_node.h"

#include "support/shard_setup.h"

namespace planb::bench {

ServingNode::ServingNode(Runtime& runtime) {
  node_ = std::make_unique<StorageNode>(runtime, ServeOptions{}, log_);
  ReceiverSettings settings;
  settings.receive_dir = runtime.home().receive();
  receiver_ = std::make_unique<UploadReceiver>(context_, settings, *node_, nullptr);
  std::string bound;
  CheckSetup(receiver_->Bind("tcp://127.0.0.1:*", &bound));
  serving_ = std::thread([this] { CheckSetup(receiver_->Run(stop_)); });
  client_.node_name = "bench-client";
  client_.node_list = {"node1"};
  client_.nodes["node1"] = NodeConfig{"node1", bound};
  client_.request_timeout_ms = 60 * 1000;  // a big shard's first copy may take a while
}

ServingNode::~ServingNode() {
  stop_ = true;
  serving_.join();
  receiver_.reset();
  node_.reset();
}

}  // namespace planb::bench
