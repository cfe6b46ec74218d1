#include "support/serving_node.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

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

std::string ServingNode::WriteClientConfig(const std::string& dir, const std::string& map_sections) const {
  const NodeConfig& node = client_.nodes.at("node1");
  std::string text = "node_name = bench-client\nnode_list = ,node1\nrequest_timeout = 60s\n";
  if (client_.own_key.has_value()) {
    const std::string key_path = dir + "/bench-client.key";
    const CurveKeyPair& pair = client_.own_key->keys;
    const std::string key = "# Plan B CURVE secret key bench-client\npublic_key = " + pair.public_key +
                            "\nsecret_key = " + pair.secret_key + "\n";
    const int fd = ::open(key_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const bool written = fd >= 0 && ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
    if (fd >= 0) ::close(fd);
    CheckSetup(written ? Status::Ok() : Status::IOError("cannot write " + key_path));
    text += "secret_key_file = " + key_path + "\n";
  }
  text += "[node.node1]\nendpoint = " + node.endpoint + "\n";
  if (node.public_key.has_value()) text += "public_key = " + *node.public_key + "\n";
  const std::string path = dir + (client_.own_key.has_value() ? "/client-curve.ini" : "/client.ini");
  std::ofstream(path) << text << map_sections;
  return path;
}

ServingNode::~ServingNode() {
  stop_ = true;
  serving_.join();
  receiver_.reset();
  node_.reset();
}

}  // namespace planb::bench
