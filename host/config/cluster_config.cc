#include "host/config/cluster_config.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>

#include "host/common/iso_time.h"
#include "host/common/numbers.h"
#include "host/config/merged_batch_records.h"
#include "host/config/security_config.h"

namespace planb {
namespace {

// Nothing accepts fewer: a deadline under 10 ms would fail on any busy machine.
constexpr int64_t kMinRequestTimeoutMs = 10;
constexpr int kMaxSendAttempts = 100;

Status ParseNodeList(const std::string& value, std::vector<std::string>* list) {
  // The design's format: a comma-delimited string that starts with a comma, e.g. ",node1a,node2a".
  if (value.empty() || value[0] != ',') {
    return Status::Invalid("'" + value + "' must start with a comma, as in ,node1a,node2a");
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  size_t start = 1;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string name = value.substr(start, comma - start);
    if (!IsValidNodeName(name)) {
      return Status::Invalid("'" + value + "': '" + name +
                             "' is not a node name (letters, digits, '.', '-', '_'; no empty entries)");
    }
    if (!seen.insert(name).second) return Status::Invalid("'" + value + "': node '" + name + "' listed twice");
    names.push_back(name);
    start = comma + 1;
  }
  *list = std::move(names);
  return Status::Ok();
}

Status ParseDurationKey(const std::string& value, int64_t min_ms, int64_t* ms) {
  int64_t parsed = 0;
  if (!ParseDuration(value, &parsed)) {
    return Status::Invalid("'" + value + "' is not a duration (e.g. 500ms, 5s, 1m, 2h)");
  }
  if (parsed < min_ms) return Status::Invalid("'" + value + "' is below the minimum of " + std::to_string(min_ms) + "ms");
  *ms = parsed;
  return Status::Ok();
}

Status ParseAttempts(const std::string& value, int* attempts) {
  uint64_t n = 0;
  if (!ParseCount(value, kMaxSendAttempts, &n) || n < 1) {
    return Status::Invalid("'" + value + "' is not an attempt count (1..100)");
  }
  *attempts = static_cast<int>(n);
  return Status::Ok();
}

// tcp://HOST:PORT, the only transport between machines; PORT may be * (any free port: for `serve --bind`).
bool IsValidEndpoint(const std::string& endpoint) {
  const std::string prefix = "tcp://";
  if (endpoint.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon <= prefix.size()) return false;
  const std::string port = endpoint.substr(colon + 1);
  if (port == "*") return true;
  if (port.empty() || port.size() > 5) return false;
  long value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

}  // namespace

bool IsValidNodeName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool ClusterConfig::IsStorageNode() const {
  if (single_node()) return true;
  for (const std::string& name : node_list) {
    if (name == node_name) return true;
  }
  return false;
}

int64_t ClusterConfig::MergedBatchesKeepMs() const {
  constexpr int64_t kDay = int64_t{24} * 60 * 60 * 1000;
  const int64_t twice = batch_retention_ms > (INT64_MAX - kDay) / 2 ? INT64_MAX : 2 * batch_retention_ms + kDay;
  return std::max(kMergedBatchesKeepMs, twice);
}

const std::vector<std::string>& ClusterKeyNames() {
  static const std::vector<std::string> names = {"node_name",
                                                 "node_list",
                                                 "request_timeout",
                                                 "send_part_attempts",
                                                 "send_part_retry_delay",
                                                 "max_batch_size",
                                                 "snapshot_retry_fetch_interval",
                                                 "min_time_to_keep_snapshots",
                                                 "min_time_to_keep_env_open",
                                                 "snapshot_compression",
                                                 "upload_idle_timeout",
                                                 "max_remote_where_terms",
                                                 "max_remote_rows_examined",
                                                 "max_remote_bytes_examined",
                                                 "remote_read_timeout",
                                                 "max_client_share",
                                                 "min_transfer_rate",
                                                 "max_unread_reply_bytes",
                                                 "max_connections",
                                                 "idle_connection_timeout",
                                                 "batch_retention",
                                                 "batch_retention_bytes",
                                                 "catch_up_interval",
                                                 "write_quorum"};
  return names;
}

Status ApplyClusterKey(const std::string& key, const std::string& value, ClusterConfig* cluster, bool* known) {
  *known = true;
  if (key == "node_name") {
    if (!IsValidNodeName(value)) {
      return Status::Invalid("'" + value + "' is not a node name (letters, digits, '.', '-', '_')");
    }
    cluster->node_name = value;
    return Status::Ok();
  }
  if (key == "node_list") return ParseNodeList(value, &cluster->node_list);
  if (key == "request_timeout") return ParseDurationKey(value, kMinRequestTimeoutMs, &cluster->request_timeout_ms);
  if (key == "send_part_retry_delay") return ParseDurationKey(value, 0, &cluster->send_part_retry_delay_ms);
  if (key == "snapshot_retry_fetch_interval") {
    return ParseDurationKey(value, 0, &cluster->snapshot_retry_fetch_interval_ms);
  }
  if (key == "snapshot_compression") {
    if (value != "none" && value != "deflate") return Status::Invalid("'" + value + "' is not none or deflate");
    cluster->snapshot_deflate = value == "deflate";
    return Status::Ok();
  }
  if (key == "min_time_to_keep_snapshots") return ParseDurationKey(value, 0, &cluster->min_time_to_keep_snapshots_ms);
  if (key == "min_time_to_keep_env_open") return ParseDurationKey(value, 0, &cluster->min_time_to_keep_env_open_ms);
  if (key == "send_part_attempts") return ParseAttempts(value, &cluster->send_part_attempts);
  if (key == "upload_idle_timeout") {
    return ParseDurationKey(value, kMinRequestTimeoutMs, &cluster->upload_idle_timeout_ms);
  }
  if (key == "remote_read_timeout") {
    return ParseDurationKey(value, kMinRequestTimeoutMs, &cluster->remote_read_timeout_ms);
  }
  if (key == "max_remote_where_terms" || key == "max_remote_rows_examined") {
    uint64_t* cap = key == "max_remote_where_terms" ? &cluster->max_remote_where_terms
                                                    : &cluster->max_remote_rows_examined;
    if (!ParseCount(value, UINT64_MAX, cap) || *cap == 0) {
      return Status::Invalid("'" + value + "' is not a count above 0");
    }
    return Status::Ok();
  }
  if (key == "max_client_share") {
    // "25%" or "25": a whole percentage, 1 to 100.
    std::string digits = value;
    if (!digits.empty() && digits.back() == '%') digits.pop_back();
    uint64_t percent = 0;
    if (!ParseCount(digits, 100, &percent) || percent == 0) {
      return Status::Invalid("'" + value + "' is not a share: a whole percentage from 1% to 100%");
    }
    cluster->max_client_share_percent = static_cast<uint32_t>(percent);
    return Status::Ok();
  }
  if (key == "min_transfer_rate") {
    // Bytes per second ("64KiB"); 0 turns the minimum off (the idle timeout alone).
    if (!ParseByteSize(value, &cluster->min_transfer_rate)) {
      return Status::Invalid("'" + value + "' is not a rate: bytes per second such as 64KiB, or 0 for none");
    }
    return Status::Ok();
  }
  if (key == "max_connections") {
    uint64_t count = 0;
    if (!ParseCount(value, UINT32_MAX, &count) || count == 0) {
      return Status::Invalid("'" + value + "' is not a count above 0");
    }
    cluster->max_connections = static_cast<uint32_t>(count);
    return Status::Ok();
  }
  if (key == "idle_connection_timeout") {
    return ParseDurationKey(value, kMinRequestTimeoutMs, &cluster->idle_connection_timeout_ms);
  }
  if (key == "max_unread_reply_bytes") {
    if (!ParseByteSize(value, &cluster->max_unread_reply_bytes) || cluster->max_unread_reply_bytes == 0) {
      return Status::Invalid("'" + value + "' is not a size above 0 (e.g. 128MiB)");
    }
    return Status::Ok();
  }
  if (key == "max_remote_bytes_examined") {
    if (!ParseByteSize(value, &cluster->max_remote_bytes_examined) || cluster->max_remote_bytes_examined == 0) {
      return Status::Invalid("'" + value + "' is not a size above 0 (e.g. 4GiB, 512MiB)");
    }
    return Status::Ok();
  }
  if (key == "batch_retention") return ParseDurationKey(value, 0, &cluster->batch_retention_ms);
  if (key == "batch_retention_bytes") {
    if (!ParseByteSize(value, &cluster->batch_retention_bytes)) {
      return Status::Invalid("'" + value + "' is not a size (e.g. 10GiB, 512MiB, 0 for none)");
    }
    return Status::Ok();
  }
  if (key == "catch_up_interval") return ParseDurationKey(value, 0, &cluster->catch_up_interval_ms);
  if (key == "write_quorum") {
    uint64_t count = 0;
    if (!ParseCount(value, UINT32_MAX, &count) || count == 0) {
      return Status::Invalid("'" + value + "' is not a count of storage nodes above 0");
    }
    cluster->write_quorum = static_cast<uint32_t>(count);
    return Status::Ok();
  }
  if (key == "max_batch_size") {
    if (!ParseByteSize(value, &cluster->max_batch_size) || cluster->max_batch_size == 0) {
      return Status::Invalid("'" + value + "' is not a size (e.g. 64GiB, 512MiB)");
    }
    return Status::Ok();
  }
  *known = false;
  return Status::Ok();
}

Status ApplyNodeSection(const std::string& name, const std::vector<std::pair<std::string, std::string>>& entries,
                        ClusterConfig* cluster) {
  if (!IsValidNodeName(name)) {
    return Status::Invalid("invalid node name '" + name + "' (letters, digits, '.', '-', '_')");
  }
  NodeConfig node;
  node.name = name;
  for (const auto& [key, value] : entries) {
    if (key == "public_key") {
      std::string public_key;
      PLANB_RETURN_IF_ERROR(ParsePublicKey(value, &public_key).WithContext(key));
      node.public_key = std::move(public_key);
      continue;
    }
    if (key != "endpoint") return Status::Invalid(key + ": unknown key (known: endpoint, public_key)");
    if (!IsValidEndpoint(value)) {
      return Status::Invalid("endpoint: '" + value + "' is not tcp://HOST:PORT (port 1..65535)");
    }
    node.endpoint = value;
  }
  if (node.endpoint.empty()) return Status::Invalid("endpoint: missing (e.g. endpoint = tcp://10.0.0.1:7601)");
  cluster->nodes.emplace(name, std::move(node));
  return Status::Ok();
}

Status FinishCluster(ClusterConfig* cluster) {
  if (cluster->node_name.empty()) {
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !IsValidNodeName(host)) {
      return Status::Invalid("node_name: not set and the host name cannot be used; set node_name");
    }
    cluster->node_name = host;
  }
  if (cluster->write_quorum && *cluster->write_quorum > std::max<size_t>(cluster->node_list.size(), 1)) {
    return Status::Invalid("write_quorum: " + std::to_string(*cluster->write_quorum) + " is more than the " +
                           std::to_string(std::max<size_t>(cluster->node_list.size(), 1)) +
                           " storage node(s) of node_list: no load could ever succeed");
  }
  for (const std::string& name : cluster->node_list) {
    if (cluster->nodes.count(name) == 0) {
      return Status::Invalid("node_list: node '" + name + "' has no [node." + name + "] section with an endpoint");
    }
  }
  return Status::Ok();
}

}  // namespace planb
