#include "host/config/security_config.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "host/common/text_lines.h"
#include "host/security/key_file.h"

namespace planb {
namespace {

// A key rotation lists two; a few more leave room for a slow rollout, and the list stays bounded.
constexpr size_t kMaxClientKeys = 8;

constexpr std::pair<const char*, Right> kRights[] = {
    {"upload", Right::kUpload}, {"read", Right::kRead}, {"snapshot", Right::kSnapshot}};


// "a, b,c": the trimmed items, each non-empty and given once (Z85 has no ',' nor blank, so keys split exactly).
Status SplitList(const std::string& value, std::vector<std::string>* items) {
  if (TrimBlanks(value).empty()) return Status::Invalid("empty value");
  std::vector<std::string> result;
  for (size_t start = 0; start <= value.size();) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string item(TrimBlanks(std::string_view(value).substr(start, comma - start)));
    if (item.empty()) return Status::Invalid("'" + value + "' has an empty item (a stray comma)");
    for (const std::string& seen : result) {
      if (seen == item) return Status::Invalid("'" + value + "' lists '" + item + "' twice");
    }
    result.push_back(item);
    start = comma + 1;
  }
  *items = std::move(result);
  return Status::Ok();
}

Status ParseRights(const std::string& value, uint32_t* rights) {
  std::vector<std::string> words;
  PLANB_RETURN_IF_ERROR(SplitList(value, &words));
  uint32_t bits = 0;
  for (const std::string& word : words) {
    bool known = false;
    for (const auto& [name, right] : kRights) {
      if (word == name) {
        bits |= static_cast<uint32_t>(right);
        known = true;
      }
    }
    if (!known) return Status::Invalid("'" + word + "' is not a right (upload, read, snapshot)");
  }
  *rights = bits;
  return Status::Ok();
}

}  // namespace

const char* RightName(Right right) {
  if (right == Right::kNode) return "node";  // not a config right: node_list's peers hold it
  for (const auto& [name, value] : kRights) {
    if (value == right) return name;
  }
  return "unknown right";
}

bool ClientConfig::Allows(Right right, std::string_view map) const {
  if ((rights & static_cast<uint32_t>(right)) == 0) return false;
  return !maps.has_value() || maps->count(NormaliseMapName(map)) > 0;
}

bool ScopeAllows(const MapScope& scope, std::string_view map) {
  return !scope.has_value() || scope->count(NormaliseMapName(map)) > 0;
}

bool ClusterConfig::curve() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const auto& node) { return node.second.public_key.has_value(); });
}

std::optional<CurveClientKeys> ClusterConfig::KeysFor(const std::string& name) const {
  const auto node = nodes.find(name);
  if (node == nodes.end() || !node->second.public_key.has_value() || !own_key.has_value()) return std::nullopt;
  return CurveClientKeys{*node->second.public_key, own_key->keys};
}

const ClientConfig* ClusterConfig::FindClientByKey(std::string_view public_key) const {
  for (const auto& [name, client] : clients) {
    for (const std::string& key : client.public_keys) {
      if (key == public_key) return &client;
    }
  }
  return nullptr;
}

Status ParsePublicKey(const std::string& value, std::string* key) {
  const std::string problem = Z85KeyProblem(value);
  if (!problem.empty()) return Status::Invalid("'" + value + "' " + problem);
  *key = value;
  return Status::Ok();
}

Status ApplySecretKeyFile(const std::string& value, const std::string& base_dir, Config* config) {
  if (value.empty()) return Status::Invalid("empty value");
  OwnKey own;
  own.file = base_dir.empty() || std::filesystem::path(value).is_absolute()
                 ? value
                 : (std::filesystem::path(base_dir) / value).string();
  PLANB_RETURN_IF_ERROR(ReadKeyFile(own.file, &own.keys));
  config->cluster.own_key = std::move(own);
  return Status::Ok();
}

Status ApplyClientSection(const std::string& name, const std::vector<std::pair<std::string, std::string>>& entries,
                          Config* config) {
  if (!IsValidNodeName(name)) {
    return Status::Invalid("invalid client name '" + name + "' (letters, digits, '.', '-', '_')");
  }
  ClientConfig client;
  client.name = name;
  bool have_allow = false;
  for (const auto& [key, value] : entries) {
    if (key == "public_key") {
      std::vector<std::string> keys;
      PLANB_RETURN_IF_ERROR(SplitList(value, &keys).WithContext(key));
      if (keys.size() > kMaxClientKeys) {
        return Status::Invalid(key + ": " + std::to_string(keys.size()) + " keys; at most 8 (two for a rotation)");
      }
      for (const std::string& k : keys) {
        std::string parsed;
        PLANB_RETURN_IF_ERROR(ParsePublicKey(k, &parsed).WithContext(key));
      }
      client.public_keys = std::move(keys);
    } else if (key == "allow") {
      PLANB_RETURN_IF_ERROR(ParseRights(value, &client.rights).WithContext(key));
      have_allow = true;
    } else if (key == "maps") {
      std::vector<std::string> maps;
      PLANB_RETURN_IF_ERROR(SplitList(value, &maps).WithContext(key));
      client.maps.emplace();
      for (const std::string& map : maps) client.maps->insert(NormaliseMapName(map));
    } else {
      return Status::Invalid(key + ": unknown key (known: public_key, allow, maps)");
    }
  }
  if (client.public_keys.empty()) {
    return Status::Invalid("public_key: missing (the client's NAME.pub from planb keygen)");
  }
  if (!have_allow) return Status::Invalid("allow: missing (any of upload, read, snapshot)");
  config->cluster.clients.emplace(name, std::move(client));
  return Status::Ok();
}

Status FinishSecurity(Config* config) {
  std::map<std::string, std::string> owner;  // public key -> client name
  for (const auto& [name, client] : config->cluster.clients) {
    const std::string where = "[client." + name + "]: ";
    if (client.maps.has_value()) {
      for (const std::string& map : *client.maps) {
        if (config->maps.count(map) == 0) {
          return Status::Invalid(where + "maps: '" + map + "' is not a configured map (no [map." + map + "])");
        }
      }
    }
    for (const std::string& key : client.public_keys) {
      const auto [it, fresh] = owner.emplace(key, name);
      if (!fresh) {
        return Status::Invalid(where + "public_key: '" + key + "' is also [client." + it->second +
                               "]'s; a key names one client");
      }
    }
  }
  const NodeConfig* with_key = nullptr;
  const NodeConfig* without_key = nullptr;
  for (const auto& [name, node] : config->cluster.nodes) {
    (node.public_key.has_value() ? with_key : without_key) = &node;
  }
  if (with_key != nullptr && without_key != nullptr) {
    return Status::Invalid("[node." + without_key->name + "]: public_key: missing, while [node." + with_key->name +
                           "] has one (once keys are configured every connection is authenticated)");
  }
  const ClusterConfig& cluster = config->cluster;
  if (!cluster.own_key.has_value() && (with_key != nullptr || !cluster.clients.empty())) {
    return Status::Invalid(std::string("secret_key_file: missing: ") +
                           (with_key != nullptr ? "[node." + with_key->name + "] has a public_key"
                                                : "[client." + cluster.clients.begin()->first + "] is configured") +
                           ", and this node needs its own key pair to use it (planb keygen)");
  }
  if (with_key == nullptr && !cluster.clients.empty()) {
    return Status::Invalid("[client." + cluster.clients.begin()->first +
                           "]: clients are configured but no [node.NAME] has a public_key: without the nodes' keys "
                           "no connection is authenticated (add public_key to every [node.NAME])");
  }
  // A storage node serves with its own key: it must be the one its clients were given.
  const auto self = cluster.nodes.find(cluster.node_name);
  if (self != cluster.nodes.end() && self->second.public_key.has_value() && cluster.own_key.has_value() &&
      *self->second.public_key != cluster.own_key->keys.public_key) {
    return Status::Invalid("[node." + self->first + "]: public_key: not the public key of secret_key_file " +
                           cluster.own_key->file + " (" + cluster.own_key->keys.public_key +
                           "): this node would not be able to prove its identity to its clients");
  }
  return Status::Ok();
}

}  // namespace planb
