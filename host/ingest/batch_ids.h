// The ids a load's batches go by on every node (their manifests, BEGIN, the shards' records of merged batches).
// By default each stream's id is its content's (batch_fingerprint.h), so loading the same files again after any
// failure is recognised as the same batches. `planb load --batch-id ID` gives a pipeline's own idempotency key
// instead: one file's batch is ID, several files' are ID/1, ID/2, ... in command-line order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/config.h"
#include "planb/status.h"

namespace planb {

// The longest --batch-id: room for "/N" of a load of many files within the wire's 255 bytes.
inline constexpr size_t kMaxGivenBatchIdBytes = 200;

// OK, or kInvalidArgument naming what is wrong with a --batch-id value: empty, longer than
// kMaxGivenBatchIdBytes, or a byte outside A-Z a-z 0-9 . _ - : / (control characters escaped in the message).
Status CheckGivenBatchId(std::string_view id);

// Stream i's batch id: `name_space` (see OwnBatchNamespace) and then `given` (checked) as above, else
// content_ids[i].
std::vector<std::string> StreamBatchIds(const std::optional<std::string>& given,
                                        const std::vector<std::string>& content_ids, const std::string& name_space = "");

// The namespace this node's batch ids start with: with CURVE, its own key's (host/security/batch_namespace.h:
// the storage nodes refuse ids outside it), else "".
std::string OwnBatchNamespace(const ClusterConfig& cluster);

}  // namespace planb
