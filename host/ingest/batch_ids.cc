#include "host/ingest/batch_ids.h"

#include "host/common/log_text.h"
#include "host/security/batch_namespace.h"
#include "host/transfer/protocol.h"

namespace planb {

Status CheckGivenBatchId(std::string_view id) {
  if (id.empty()) return Status::Invalid("--batch-id: empty (give the pipeline's idempotency key, e.g. 2024-06-01)");
  if (id.size() > kMaxGivenBatchIdBytes) {
    return Status::Invalid("--batch-id: " + std::to_string(id.size()) + " bytes, more than the " +
                           std::to_string(kMaxGivenBatchIdBytes) + " allowed");
  }
  for (size_t i = 0; i < id.size(); ++i) {
    if (!protocol::IsWireBatchId(id.substr(i, 1))) {
      return Status::Invalid("--batch-id: '" + LogValue(id.substr(i, 1)) + "' at byte " + std::to_string(i + 1) +
                             " is not allowed (only A-Z a-z 0-9 . _ - : /)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> StreamBatchIds(const std::optional<std::string>& given,
                                        const std::vector<std::string>& content_ids, const std::string& name_space) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < content_ids.size(); ++i) {
    if (!given) {
      ids.push_back(name_space + content_ids[i]);
    } else if (content_ids.size() == 1) {
      ids.push_back(name_space + *given);
    } else {
      ids.push_back(name_space + *given + "/" + std::to_string(i + 1));
    }
  }
  return ids;
}

std::string OwnBatchNamespace(const ClusterConfig& cluster) {
  if (!cluster.curve() || !cluster.own_key) return "";
  return BatchNamespace(cluster.own_key->keys.public_key);
}

}  // namespace planb
