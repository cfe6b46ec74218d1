// The storage-node part of the config (top-level cluster keys and [node.NAME] sections). Internal to host/config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "host/config/config.h"

namespace planb {

// Top-level keys this part reads, for the "known keys" message.
const std::vector<std::string>& ClusterKeyNames();
// Applies a top-level cluster key; `known` false when `key` is not one.
Status ApplyClusterKey(const std::string& key, const std::string& value, ClusterConfig* cluster, bool* known);
// A [node.NAME] section.
Status ApplyNodeSection(const std::string& name, const std::vector<std::pair<std::string, std::string>>& entries,
                        ClusterConfig* cluster);
// After every key and section: defaults (node_name = host name) and cross-checks (every listed node has an
// endpoint). Errors name the key.
Status FinishCluster(ClusterConfig* cluster);

}  // namespace planb
